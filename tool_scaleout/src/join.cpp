// The loader of the MPI module: the part of the tools' scale-out the npuscope program links (no MPI:
// Note [Tools over MPI] in npuscope/tool_scaleout/processes.h).
#include <dlfcn.h>

#include <string_view>

#include "module_entry.h"
#include "npuscope/runtime_hooks/launcher_env.h"

namespace npuscope::tool_scaleout {

bool launched_over_mpi() {
  const auto launched = launcher::rank_from_environment();
  if (!launched || launched->world_size < 2) return false;
  const std::string_view name = launched->launcher;
  return name == "mpirun" || name == "hydra" || name == "srun";  // torchrun's ranks have no MPI
}

std::unique_ptr<Processes> join_over_mpi(const std::string& module, int* argc, char*** argv) {
  // RTLD_GLOBAL: OpenMPI loads its components (mca_*.so) with dlopen, and they use libmpi's
  // symbols without naming it among their libraries (Debian's mca_pml_ob1.so needs libc only), which
  // a library loaded RTLD_LOCAL would hide from them (mpi4py loads libmpi so too). Never closed:
  // Note [Tools over MPI].
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    throw ScaleoutError("an MPI launcher started this command with others, and the MPI module " + module +
                        " cannot be loaded (" + dlerror() +
                        "): install OpenMPI (Debian: openmpi-bin, which brings libopenmpi3), or run the command "
                        "without the launcher (alone it works on threads)");
  }
  const auto entry = reinterpret_cast<ModuleEntry>(dlsym(handle, kModuleEntry));
  if (entry == nullptr) {
    throw ScaleoutError(module + " is not the MPI module of this npuscope (it has no " + kModuleEntry +
                        "): install npuscope again (cmake --install, or the npuscope .deb), or rebuild it");
  }
  return std::unique_ptr<Processes>(entry(argc, argv));
}

}  // namespace npuscope::tool_scaleout
