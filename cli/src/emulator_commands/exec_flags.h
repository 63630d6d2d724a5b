// `npuscope exec`'s flags, declared once: exec parses them, and `npuscope compare --model` parses the
// same ones and hands them on to the two exec runs it records (cpu golden and npu), so that every
// exec flag works through compare without being declared twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "command.h"

namespace npuscope::cli {

// The emulator set-up flags (device, spec, precision and overflow modes).
struct DeviceFlags {
  std::string device = "npu";
  std::string spec;
  std::string precision_mode;
  std::string overflow_mode;
};
// Configures the emulator runtime: environment first (NPUSCOPE_SPEC...), flags over it
// (configure_runtime.cpp).
void configure_runtime(const DeviceFlags& flags);

struct ExecFlags {
  DeviceFlags device;
  std::string model;
  std::vector<std::string> inputs, dims, perturb;
  std::string output_dir;
  int iterations = 1;
  std::uint64_t seed = 0;
};

// Which of exec's flags a front end takes from the user. compare chooses the device and the
// output directory of each run itself.
enum class ExecFlagSet : std::uint8_t { kAll, kButDeviceAndOutput };

// Adds exec's flags to `desc`, storing into `flags`.
void add_exec_flags(po::options_description& desc, ExecFlags& flags, ExecFlagSet set = ExecFlagSet::kAll);
// The checks exec makes once the flags are parsed (--model given): UsageError. Numeric flags are
// range-checked as they are parsed.
void check_exec_flags(const ExecFlags& flags);

// The arguments of an `npuscope exec` run with these settings (after "exec"), each flag that differs
// from its default. For the cpu golden run (`golden`), the flags that only set up the NPU (spec,
// precision and overflow modes, perturbations) are left out: the golden run is plain f32 on the cpu,
// the NPU's settings are the experiment.
std::vector<std::string> exec_arguments(const ExecFlags& flags, bool golden);

}  // namespace npuscope::cli
