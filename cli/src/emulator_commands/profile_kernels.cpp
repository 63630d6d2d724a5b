#include "profile_kernels.h"

#include <algorithm>

#include "command.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "open_trace.h"

namespace npuscope::cli {
namespace {

std::string task_type_name(std::int64_t value) {
  const auto t = enum_from_value<TaskType>(value);
  return t ? std::string(enum_name(*t)) : "task type " + std::to_string(value);
}

}  // namespace

ProfileKernels read_profile_kernels(const std::string& path) {
  const auto reader = open_trace(path, {});
  ProfileKernels out;
  reader->for_each([&](const collector::TaskRow& t) {
    if (t.device_id < 0) return;  // the cpu golden backend of an emulated trace
    const std::int64_t dur = std::max<std::int64_t>(t.end_ns - t.start_ns, 0);
    if (!is_device_kernel(t.task_type)) {
      const std::string what = task_type_name(t.task_type);
      auto it = std::find_if(out.other.begin(), out.other.end(),
                             [&](const calibration::OtherDeviceWork& w) { return w.what == what; });
      if (it == out.other.end()) it = out.other.insert(out.other.end(), calibration::OtherDeviceWork{.what = what});
      ++it->count;
      it->dur_ns += dur;
      return;
    }
    calibration::ProfileKernel k;
    k.op_type = reader->string(t.op_type_id);
    k.name = reader->string(t.name_id);
    k.input_shapes = reader->string(t.input_shapes_id);
    k.input_dtypes = reader->string(t.input_dtypes_id);
    k.input_formats = reader->string(t.input_formats_id);
    k.output_shapes = reader->string(t.output_shapes_id);
    k.output_dtypes = reader->string(t.output_dtypes_id);
    k.output_formats = reader->string(t.output_formats_id);
    k.block_dim = static_cast<std::uint32_t>(std::max(t.block_dim, 0));
    k.task_type = task_type_name(t.task_type);
    k.start_ns = t.start_ns;
    k.device_id = static_cast<int>(t.device_id);
    k.dur_ns = dur;
    out.kernels.push_back(std::move(k));
  });
  if (out.kernels.empty()) throw InputError(path + ": no device kernels to calibrate against");
  return out;
}

}  // namespace npuscope::cli
