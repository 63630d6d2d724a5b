// The program's side of the emulator commands' module (Note [Commands that load the emulator] in
// cli/src/common/emulator_commands.h).
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "emulator_commands.h"
#include "shipped_files.h"

namespace npuscope::cli {

int emulator_command(int argc, char** argv) {
  const std::string module = emulator_commands_module();
  // RTLD_GLOBAL: the emulator and the libraries it brings are found as a program linked with them
  // finds them (a custom kernel library the emulator loads may use them unnamed). Never closed: the
  // process ends with the command.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    throw std::runtime_error(std::string("npuscope ") + argv[0] + " needs the emulator commands' module " + module +
                             ", which cannot be loaded (" + dlerror() +
                             "): install what it names (scripts/bootstrap.sh installs every library npuscope "
                             "needs), or install npuscope again");
  }
  const auto entry = reinterpret_cast<EmulatorCommandsEntry>(dlsym(handle, kEmulatorCommandsEntry));
  if (entry == nullptr) {
    throw std::runtime_error(module + " is not the emulator commands' module of this npuscope (it has no " +
                             kEmulatorCommandsEntry +
                             "): install npuscope again (cmake --install, or the npuscope .deb), or rebuild it");
  }
  return entry(argc, argv);
}

}  // namespace npuscope::cli
