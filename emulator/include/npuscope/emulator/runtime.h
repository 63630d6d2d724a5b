// The process-wide emulator runtime: the devices, the numerics settings, the injection library.
//
// Created on first use from the environment (NPUSCOPE_SPEC, NPUSCOPE_PRECISION_MODE,
// NPUSCOPE_OVERFLOW_MODE, NPUSCOPE_INJECTION), or explicitly with configure(). Programs that set
// things from their own flags call configure() before their first op.
#pragma once

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

  // Reads NPUSCOPE_SPEC / NPUSCOPE_PRECISION_MODE / NPUSCOPE_OVERFLOW_MODE / NPUSCOPE_NUM_DEVICES
  // over the defaults.
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

// Loads the injection library named by NPUSCOPE_INJECTION (once per process) and publishes its
// subscriber table. Called by Runtime::get(); returns false (and prints why, once) on failure.
bool load_injection_from_environment();

}  // namespace npuscope::emulator
