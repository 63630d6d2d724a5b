// The roofline of one task: achieved FLOP/s and bytes/s against the ceilings of the device it ran on,
// and the bound that follows (Note [Roofline bound] in analyzer/src/roofline.cpp). One definition,
// used by `npuscope analyze` (top ops, time by bound) and by the viewer's details panel.
#pragma once

#include <cstdint>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::analyzer {

enum class Bound { kCompute, kMemory, kLatency };
const char* bound_name(Bound b);  // "compute", "memory", "latency"

struct Roofline {
  double flops_per_s = 0, bytes_per_s = 0;  // achieved
  // Achieved / the device's achievable ceiling (its peak in a trace before schema 8), which the bound
  // is judged by; and achieved / the paper peak. 0 without a device.
  double compute_pct = 0, memory_pct = 0;
  double compute_peak_pct = 0, memory_peak_pct = 0;
  Bound bound = Bound::kLatency;
};

// `device` may be null (a trace without DEVICE_INFO): the task is then latency-bound.
Roofline roofline(std::int32_t task_type, std::int32_t compute_dtype, std::int64_t flops, std::int64_t bytes,
                  std::int64_t duration_ns, const collector::DeviceInfoRow* device);

}  // namespace npuscope::analyzer
