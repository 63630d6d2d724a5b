// The rows every analysis reads, loaded from the trace once, in start-time order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

using collector::ApiRow;
using collector::DeviceInfoRow;
using collector::MemcpyRow;
using collector::MemoryRow;
using collector::TaskRow;

// TASK.task_type values that are kernels (the rest: copies, event record/wait, host work).
inline bool is_kernel(const TaskRow& t) {
  return t.task_type >= static_cast<int>(collector::TaskType::kAiCore) &&
         t.task_type <= static_cast<int>(collector::TaskType::kAiCpu);
}
inline std::int64_t duration(const TaskRow& t) { return t.end_ns - t.start_ns; }

struct TraceData {
  explicit TraceData(const collector::TraceReader& reader);

  const std::string& str(collector::StringId id) const { return reader.string(id); }
  const DeviceInfoRow* device(std::int32_t id) const {
    const auto it = devices.find(id);
    return it == devices.end() ? nullptr : &it->second;
  }

  const collector::TraceReader& reader;
  std::vector<TaskRow> kernels;  // kernel tasks on NPU devices (not the cpu golden backend)
  std::vector<TaskRow> all_tasks;
  std::vector<ApiRow> apis;
  std::vector<MemoryRow> memory;
  std::vector<MemcpyRow> memcpys;
  std::map<std::int32_t, DeviceInfoRow> devices;
};

}  // namespace npuscope::analyzer
