#include "exec_flags.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::cli {

namespace emu = npuscope::emulator;

void configure_runtime(const DeviceFlags& f) {
  emu::RuntimeOptions r = emu::RuntimeOptions::from_environment();
  if (!f.spec.empty()) r.spec = f.spec;
  if (!f.precision_mode.empty()) r.precision_mode = emu::parse_precision_mode(f.precision_mode);
  if (!f.overflow_mode.empty()) r.overflow_mode = emu::parse_overflow_mode(f.overflow_mode);
  const emu::DeviceRef device = emu::DeviceRef::parse(f.device);
  if (device.is_npu()) r.num_devices = device.index + 1;
  emu::Runtime::configure(r);
}

}  // namespace npuscope::cli
