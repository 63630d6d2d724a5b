// The emulator commands' module: its one entry (Note [Commands that load the emulator] in
// cli/src/common/emulator_commands.h).
#include <cstdio>
#include <cstring>

#include "command.h"
#include "emulator_commands.h"

namespace npuscope::cli {
namespace {

struct EmulatorCommand {
  const char* name;
  CommandFn fn;
};
constexpr EmulatorCommand kEmulatorCommands[] = {
    {"exec", exec_command},
    {"compare", compare_command},
    {"calibrate", calibrate_command},
};

}  // namespace
}  // namespace npuscope::cli

extern "C" int npuscope_emulator_command_v1(int argc, char** argv) {
  using namespace npuscope::cli;
  if (argc < 1) return 2;
  for (const auto& c : kEmulatorCommands)
    if (std::strcmp(argv[0], c.name) == 0) return run_guarded(c.name, c.fn, argc, argv);
  std::fprintf(stderr, "npuscope: error: the emulator commands' module has no command '%s'\n", argv[0]);
  return 2;
}
