// The process-wide emulator runtime: the devices, the numerics settings, the injection library.
//
// Created on first use from the environment (NPUSCOPE_SPEC, NPUSCOPE_PRECISION_MODE,
// NPUSCOPE_OVERFLOW_MODE, NPUSCOPE_NUM_DEVICES, NPUSCOPE_GOLDEN, NPUSCOPE_COMPUTE_SLOWDOWN,
// NPUSCOPE_INJECTION, NPUSCOPE_PERTURB), or explicitly with configure(). Programs that set things from their own flags
// call configure() before their first op.
//
// Note [Golden run]
// With RuntimeOptions::golden (NPUSCOPE_GOLDEN=1) every op launched on an `npu:N` device runs its
// CPU golden kernel (Backend::kCpu), computing as the `cpu` device does: in the storage dtype with
// the golden kernels' exact functions (f32 for f32 tensors), the precision mode ignored and the
// overflow mode inf_nan. It stays an ordinary device task: the same instance name, call index, op
// type, task type (AI_CORE / AI_VECTOR_CORE, or AI_CPU where the NPU would have fallen back),
// fallback flag, cost and stream as in an NPU run of the same program, so that a trace of the golden
// run pairs op by op with the NPU run's (`npuscope compare -- CMD` records both). What a program
// does around its ops (device tensors, copies, streams, PyTorch's device) is unchanged; only the
// numbers differ. Perturbation rules never apply to a golden run's tasks (Note [Perturbation]).
// The devices announce themselves with precision mode "golden" and overflow mode "inf_nan" and
// DeviceRecord::golden set; the injection library marks the trace with META golden = 1.
// Only an NPU kernel that differs from its CPU kernel in *what* it computes (not how exactly) would
// break the pairing; random ops are the case to watch: Bernoulli (dropout's mask) is counter-based
// and one function on both backends, so both runs draw the same mask from the same seed.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/numerics.h"

namespace npuscope::emulator {

// The most devices one process emulates (a node has 8 or 16 NPUs; every device has a worker thread).
inline constexpr int kMaxDevices = 64;

struct RuntimeOptions {
  std::string spec = "ascend910b";              // preset name or spec file
  int num_devices = 1;                          // NPUSCOPE_NUM_DEVICES
  std::optional<PrecisionMode> precision_mode;  // default: the spec's
  std::optional<OverflowMode> overflow_mode;    // default: the spec's
  bool golden = false;                          // NPUSCOPE_GOLDEN=1: Note [Golden run]
  std::optional<double> compute_slowdown;       // NPUSCOPE_COMPUTE_SLOWDOWN: over the spec's (DeviceSpec)
  // NPUSCOPE_ALLOW_INTERNAL_FORMAT=1: torch_npu's allow_internal_format (Note [TransData tasks] in
  // dispatch.cpp): an op's private-format outputs and converted inputs keep their format.
  bool allow_internal_format = false;

  // Reads NPUSCOPE_SPEC / NPUSCOPE_PRECISION_MODE / NPUSCOPE_OVERFLOW_MODE / NPUSCOPE_NUM_DEVICES /
  // NPUSCOPE_GOLDEN / NPUSCOPE_COMPUTE_SLOWDOWN / NPUSCOPE_ALLOW_INTERNAL_FORMAT over the defaults. Throws
  // InvalidArgument naming the variable and its value.
  static RuntimeOptions from_environment();
};

class Runtime {
 public:
  // The runtime, created from the environment on first use.
  static Runtime& get();
  // Replaces the runtime (synchronizing and dropping the old devices). Tensors that outlive it keep
  // their old device alive but should not be used with new ones.
  static Runtime& configure(const RuntimeOptions& options);

  Device& device(int index = 0);
  std::shared_ptr<Device> device_ptr(int index = 0);
  int num_devices() const { return static_cast<int>(devices_.size()); }
  const RuntimeOptions& options() const { return options_; }
  void synchronize_all();
  // Sends a DeviceRecord per device to the current subscriber (done on creation and when the
  // injection library subscribes; call it after subscribing in-process).
  void announce_devices() const;

  ~Runtime();

 private:
  explicit Runtime(const RuntimeOptions& options);
  RuntimeOptions options_;
  std::vector<std::shared_ptr<Device>> devices_;
};

// torch_npu's torch.npu.config.allow_internal_format, process-wide: set from RuntimeOptions when a
// runtime is created, and by a framework's config at any time (npuscope.torch). Read once per op
// by the dispatcher (Note [TransData tasks] in dispatch.cpp).
namespace detail {
inline std::atomic<bool> g_allow_internal_format{false};
}
inline bool allow_internal_format() noexcept { return detail::g_allow_internal_format.load(std::memory_order_relaxed); }
inline void set_allow_internal_format(bool on) noexcept {
  detail::g_allow_internal_format.store(on, std::memory_order_relaxed);
}

// Loads the injection library named by NPUSCOPE_INJECTION (once per process) and publishes its
// subscriber table. Called by Runtime::get(); returns false (and prints why, once) on failure.
bool load_injection_from_environment();

// Installs the perturbation rules of NPUSCOPE_PERTURB (once per process; see Note [Perturbations
// from the environment] in perturb.h). Called by Runtime::get() and configure(); throws
// InvalidArgument for a bad rule, every time it is called, so that no op runs unperturbed by mistake.
void load_perturbations_from_environment(bool golden);

}  // namespace npuscope::emulator
