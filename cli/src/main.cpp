// npuscope: profiling, accuracy comparison and debugging for (emulated) NPUs.
#include <cstdio>
#include <cstring>
#include <string>

#include "command.h"
#include "emulator_commands.h"

namespace {

struct Command {
  const char* name;
  npuscope::cli::CommandFn fn;
  const char* summary;
};

constexpr Command kCommands[] = {
    {"run", npuscope::cli::run_command, "profile a program: npuscope run [-o T.db] [--dump stats] -- CMD [ARGS]"},
    {"exec", npuscope::cli::emulator_command, "run an ONNX model on the emulated NPU or the CPU golden backend"},
    {"import", npuscope::cli::import_command,
     "a real profile (Ascend PyTorch Profiler, msprof, Kineto) into a trace: npuscope import SRC [-o T.db]"},
    {"export", npuscope::cli::export_command,
     "export a trace: --chrome FILE.json, --csv DIR, --npy DIR, --msprobe DIR"},
    {"analyze", npuscope::cli::analyze_command, "bottlenecks, overflows, memory and advice from a trace"},
    {"diff", npuscope::cli::diff_command, "what got slower between two traces, and why (ops, kernels, memory, APIs)"},
    {"cluster", npuscope::cli::cluster_command, "a multi-rank job from its rank traces: slow rank, links, collectives"},
    {"compare", npuscope::cli::emulator_command, "NPU vs CPU golden accuracy, op by op, with the first failing op"},
    {"calibrate", npuscope::cli::emulator_command, "the cost model against measured timings; --fit refits a spec"},
    {"view", npuscope::cli::view_command, "the timeline viewer; --screenshot FILE.png renders one frame and exits"},
};

void print_help() {
  std::printf("usage: npuscope <command> [options]   (npuscope <command> --help for its options)\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) return npuscope::cli::run_guarded(c.name, c.fn, argc - 1, argv + 1);
  }
  std::fprintf(stderr, "npuscope: error: unknown command '%s'\n", argv[1]);
  print_help();
  return 2;
}
