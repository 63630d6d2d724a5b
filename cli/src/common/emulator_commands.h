// The commands that run the emulator (exec, compare, calibrate) live in a module the npuscope
// program loads when one of them is asked for; this is the one symbol it exports, declared for the
// module and its loader.
//
// Note [Commands that load the emulator]
// Most of what npuscope does never touches the emulator: `run` starts a workload and converts its
// spool, `import`, `analyze`, `diff`, `export`, `cluster` and `view` read traces. But a program linked
// with libnpuscope_emulator.so loads it and what it brings (OpenBLAS with its OpenMP runtime, ONNX
// and protobuf) before main(): about 20 ms of relocations and static constructors (perf stat -r 40,
// 5 December 2026: `npuscope analyze --help` 8.7 ms, `npuscope exec --help`, which loads them, 28.1
// ms; with the emulator linked, every command took 27). For `npuscope run` that is
// time added to every profiled program's (the launch-heavy bench's ready trace, issue 40). So the
// three commands that run the emulator or its cost model (exec, compare: its one-shot runs and
// --perturb, calibrate) are built into libnpuscope_emulator_commands.so, installed beside the
// injection library, and dlopen()ed by the program when one of them is asked for. The module links
// the commands' own code and what they share with the others (cli/src/common) as static copies
// whose symbols it keeps to itself (--exclude-libs): nothing but this entry crosses, argc and argv
// in, an exit status out; both sides share the C and C++ runtimes (stdout, std::cout). The
// layering check keeps the emulator and the cost model out of the program's own sources, and
// tests/cli/headless_cli_test.cpp checks the program needs neither.
#pragma once

// Runs the command argv[0] ("exec", "compare" or "calibrate") with its arguments and returns its
// exit status, its errors printed as the program prints them (run_guarded, command.h). Never throws.
// The version in the name changes with this signature: a module of another version is refused at
// dlsym, never called.
extern "C" __attribute__((visibility("default"))) int npuscope_emulator_command_v1(int argc, char** argv);

namespace npuscope::cli {

using EmulatorCommandsEntry = decltype(&npuscope_emulator_command_v1);
inline constexpr const char* kEmulatorCommandsEntry = "npuscope_emulator_command_v1";  // for dlsym

// In the program: loads the module (shipped_files.h: emulator_commands_module()) and runs argv[0]
// there. Throws std::runtime_error saying what to install or build when the module cannot be loaded.
int emulator_command(int argc, char** argv);

}  // namespace npuscope::cli
