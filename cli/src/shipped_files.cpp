#include "shipped_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace npuscope::cli {
namespace {

namespace fs = std::filesystem;

struct ShippedFile {
  const char* needed_by;  // the start of the error: "npuscope view needs the npuscope-viewer program"
  const char* variable;
  fs::path installed;  // relative to the directory of this binary
  fs::path built;
  const char* target;  // the CMake target that builds it
  bool program = false;
  const char* otherwise = "";  // what else the user may do, ending the error
};

bool usable(const fs::path& p, bool program) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && (!program || access(p.c_str(), X_OK) == 0);
}

std::string find(const ShippedFile& f) {
  if (const char* v = std::getenv(f.variable); v != nullptr && *v != '\0') {
    if (f.program && !usable(v, true))
      throw std::runtime_error(std::string(f.variable) + " is set to '" + v + "', which is not an executable program");
    return v;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = (self.parent_path() / f.installed).lexically_normal();
  if (!ec && usable(installed, f.program)) return fs::canonical(installed).string();
  if (usable(f.built, f.program)) return f.built.string();
  throw std::runtime_error(std::string(f.needed_by) + ", which is not installed (looked at " + installed.string() +
                           " and " + f.built.string() +
                           "): install it beside npuscope (cmake --install, or the npuscope .deb), build it "
                           "(cmake --build BUILD --target " +
                           f.target + "), " + (*f.otherwise ? "" : "or ") + "set " + f.variable + " to its path" +
                           f.otherwise);
}

}  // namespace

std::string injection_library() {
  return find({.needed_by = "npuscope run needs the injection library libnpuscope_inject.so",
               .variable = "NPUSCOPE_INJECTION_LIBRARY",
               .installed = fs::path(NPUSCOPE_MODULE_INSTALL_RELDIR) / "libnpuscope_inject.so",
               .built = NPUSCOPE_INJECT_BUILD_PATH,
               .target = "npuscope_inject"});
}

std::string viewer_program() {
  return find({.needed_by = "npuscope view needs the npuscope-viewer program",
               .variable = "NPUSCOPE_VIEWER",
               .installed = "npuscope-viewer",
               .built = NPUSCOPE_VIEWER_BUILD_PATH,
               .target = "npuscope-viewer",
               .program = true});
}

std::string mpi_module() {
  return find({.needed_by = "an MPI launcher started this command with others, and sharing its work over MPI needs the "
                            "MPI module libnpuscope_tool_scaleout_mpi.so",
               .variable = "NPUSCOPE_MPI_MODULE",
               .installed = fs::path(NPUSCOPE_MODULE_INSTALL_RELDIR) / "libnpuscope_tool_scaleout_mpi.so",
               .built = NPUSCOPE_MPI_MODULE_BUILD_PATH,
               .target = "npuscope_tool_scaleout_mpi",
               .otherwise = ", or run the command without the launcher (alone it works on threads)"});
}

std::string emulator_commands_module() {
  return find({.needed_by = "npuscope exec, compare and calibrate need the emulator commands' module "
                            "libnpuscope_emulator_commands.so",
               .variable = "NPUSCOPE_EMULATOR_COMMANDS_MODULE",
               .installed = fs::path(NPUSCOPE_MODULE_INSTALL_RELDIR) / "libnpuscope_emulator_commands.so",
               .built = NPUSCOPE_EMULATOR_COMMANDS_BUILD_PATH,
               .target = "npuscope_emulator_commands"});
}

}  // namespace npuscope::cli
