// The device kernels of a real profile, for `npuscope calibrate --from-profile`: any source the
// importer reads (an *_ascend_pt folder, its db, an msprof folder, an npuscope trace), opened as
// every command opens one (open_trace.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/calibration/profile_report.h"

namespace npuscope::cli {

struct ProfileKernels {
  std::vector<calibration::ProfileKernel> kernels;  // is_device_kernel tasks, in start order
  std::vector<calibration::OtherDeviceWork> other;  // every other task type, by name
};

// Throws InputError when the source has no device kernel (an empty or host-only profile), and what
// open_trace throws for a path that is no trace or profile.
ProfileKernels read_profile_kernels(const std::string& path);

}  // namespace npuscope::cli
