// A timing measured on a real NPU, to hold the cost model against: an op with its input shapes and
// dtypes, how it was timed, and the time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::calibration {

// How the time was taken, and so what of the emulator's timeline it is compared with.
enum class Method : std::uint8_t {
  kDevice,     // dev: the kernel's device time from a profiler
  kWall,       // wall: host clock around `repeats` eager ops and one synchronize, divided by repeats
  kHostIssue,  // issue: host time to issue one eager op (its preparation and launch)
  kCopy,       // h2d: a host-to-device copy of the first input's bytes, device time
};
const char* method_name(Method m);
Method parse_method(const std::string& text);  // "dev", "wall", "issue", "h2d"; CalibrationError otherwise

struct DataPoint {
  std::string id;      // G1, E3a, or the CSV's line
  std::string preset;  // the device spec preset of the chip it was measured on
  std::string op;      // an emulator op type (MatMul, ReduceMean, SwiGlu, Add, Cast...)
  std::vector<emulator::TensorMeta> inputs;
  emulator::Attrs attrs;
  std::uint32_t block_dim = 0;  // 0: as the cost model derives it
  Method method = Method::kDevice;
  int repeats = 1;  // wall: eager ops issued before the one synchronize
  double measured_us = 0;
  // dev: bytes of the inputs the L2 holds when the kernel starts (a profile's kernel reading what
  // the kernels before it wrote: Note [L2 residency]); 0 reads them all from HBM.
  double hot_input_bytes = 0;
  std::string what;    // the workload as the source describes it
  std::string source;  // where the figure comes from
  std::string why;     // for a point the model is known to miss: why
};

// The data points of shared/CALIBRATION.md that are single ops (the table in docs/calibration.md).
const std::vector<DataPoint>& published_points();

// The figures of shared/CALIBRATION.md that are not single ops, with why they are not in the table.
struct SkippedPoint {
  const char* id;
  const char* reason;
};
const std::vector<SkippedPoint>& skipped_published_points();

}  // namespace npuscope::calibration
