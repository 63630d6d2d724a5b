#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector {

const char* task_type_name(TaskType t) {
  switch (t) {
    case TaskType::kAiCore: return "AI_CORE";
    case TaskType::kAiVectorCore: return "AI_VECTOR_CORE";
    case TaskType::kAiCpu: return "AI_CPU";
    case TaskType::kMemcpy: return "MEMCPY";
    case TaskType::kEventRecord: return "EVENT_RECORD";
    case TaskType::kEventWait: return "EVENT_WAIT";
    case TaskType::kHostCpu: return "HOST_CPU";
  }
  return "UNKNOWN";
}

}  // namespace npuscope::collector
