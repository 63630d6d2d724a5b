// What the trace's values mean (enumerations, META keys) and example queries, for docs/schema.md.
// The enumerations are checked against the enums the values come from, so they cannot drift.
#include "schema_doc.h"

#include "npuscope/emulator/dtype.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "schema.h"

namespace npuscope::collector::schema {
namespace {

namespace hooks = npuscope::hooks;
using emulator::DType;

template <class A, class B>
constexpr bool same_value(A a, B b) {
  return static_cast<std::int64_t>(a) == static_cast<std::int64_t>(b);
}

static_assert(same_value(TaskType::kAiCore, hooks::TaskType::kAiCore) &&
              same_value(TaskType::kAiVectorCore, hooks::TaskType::kAiVectorCore) &&
              same_value(TaskType::kAiCpu, hooks::TaskType::kAiCpu) &&
              same_value(TaskType::kMemcpy, hooks::TaskType::kMemcpy) &&
              same_value(TaskType::kEventRecord, hooks::TaskType::kEventRecord) &&
              same_value(TaskType::kEventWait, hooks::TaskType::kEventWait) &&
              same_value(TaskType::kHostCpu, hooks::TaskType::kHostCpu));

EnumInfo task_types() {
  constexpr std::string_view kDocs[] = {
      "Cube unit (MatMul, Gemm, BatchMatMul, Conv).",
      "Vector unit (element-wise ops, reductions, data movement).",
      "The device's CPU: an op with no NPU kernel ran its CPU kernel (`fallback` = 1). Slow.",
      "A copy on a stream (copies are recorded in MEMCPY, with their direction and size).",
      "An event recorded on a stream.",
      "A stream waiting for an event.",
      "An op run on the `cpu` device (the golden backend), `device_id` = -1.",
  };
  static_assert(std::size(kDocs) == static_cast<std::size_t>(TaskType::kHostCpu) + 1);
  EnumInfo info{"task_type", "TASK.task_type", {}};
  for (std::size_t i = 0; i < std::size(kDocs); ++i) {
    const auto t = static_cast<TaskType>(i);
    info.values.push_back({static_cast<std::int64_t>(t), task_type_name(t), kDocs[i]});
  }
  return info;
}

EnumInfo copy_kinds() {
  static_assert(same_value(hooks::CopyKind::kHostToDevice, 1) && same_value(hooks::CopyKind::kDeviceToHost, 2) &&
                same_value(hooks::CopyKind::kDeviceToDevice, 8));
  return {"copy_kind",
          "MEMCPY.copy_kind",
          {{1, "HtoD", "Host to device."}, {2, "DtoH", "Device to host."}, {8, "DtoD", "Device to device."}}};
}

EnumInfo memory_ops() {
  static_assert(same_value(hooks::MemoryOp::kAlloc, 0) && same_value(hooks::MemoryOp::kFree, 1) &&
                same_value(hooks::MemoryOp::kReserve, 2) && same_value(hooks::MemoryOp::kRelease, 3));
  return {"op",
          "MEMORY_RECORD.op",
          {{0, "alloc", "A tensor block was allocated (allocated_bytes grows)."},
           {1, "free", "A tensor block was freed; the allocator keeps it cached."},
           {2, "reserve", "The allocator took a segment from the device (reserved_bytes grows)."},
           {3, "release", "The allocator gave a cached segment back to the device."}}};
}

EnumInfo dtypes() {
  static_assert(emulator::kNumDTypes == 9 && same_value(DType::kF32, 0) && same_value(DType::kF16, 1) &&
                same_value(DType::kBF16, 2) && same_value(DType::kI8, 3) && same_value(DType::kU8, 4) &&
                same_value(DType::kI32, 5) && same_value(DType::kI64, 6) && same_value(DType::kBool, 7) &&
                same_value(DType::kF64, 8));
  return {"dtype",
          "TENSOR.dtype, TASK.compute_dtype",
          {{0, "f32", "32-bit float (4 bytes)."},
           {1, "f16", "IEEE half (2 bytes)."},
           {2, "bf16", "bfloat16 (2 bytes)."},
           {3, "i8", "Signed 8-bit integer."},
           {4, "u8", "Unsigned 8-bit integer."},
           {5, "i32", "Signed 32-bit integer."},
           {6, "i64", "Signed 64-bit integer."},
           {7, "bool", "Boolean, one byte (0 or 1)."},
           {8, "f64", "64-bit float (8 bytes); the CPU golden side only."}}};
}

EnumInfo roles() {
  static_assert(same_value(hooks::TensorRole::kInput, 0) && same_value(hooks::TensorRole::kOutput, 1));
  return {"role", "TENSOR.role, COMPARE_RESULT.role", {{0, "input", "The task read it."}, {1, "output", "The task wrote it."}}};
}

EnumInfo marker_kinds() {
  return {"kind",
          "MARKER.kind",
          {{0, "range", "A named range the workload pushed and popped."},
           {1, "step", "A training/inference step; `step` holds its number."}}};
}

EnumInfo verdicts() {
  return {"verdict",
          "COMPARE_RESULT.verdict",
          {{0, "pass", "Within msprobe's thresholds (Cosine >= 0.99 or MaxAbsErr <= 0.001; Cosine >= 0.9; MaxAbsErr <= 1)."},
           {1, "fail", "Outside them, or not comparable (shapes differ, NaN/Inf at other places)."},
           {2, "n/a", "Nothing to compare: no counterpart, or neither data nor statistics on one side."}}};
}

EnumInfo origins() {
  return {"origin",
          "COMPARE_RESULT.origin",
          {{0, "none", "The op did not fail."},
           {1, "introduced", "The op failed although its inputs matched the golden run: it made the error."},
           {2, "inherited", "The op failed and so did one of its inputs: the error came from earlier."}}};
}

}  // namespace

const std::vector<EnumInfo>& enums() {
  static const std::vector<EnumInfo> all = {task_types(), copy_kinds(),   memory_ops(), dtypes(),
                                            roles(),      marker_kinds(), verdicts(),   origins()};
  return all;
}

const std::vector<MetaKeyInfo>& meta_keys() {
  static const std::vector<MetaKeyInfo> keys = {
      {kMetaSchemaVersion, "Version of this schema the trace was written with. A reader refuses newer ones."},
      {kMetaStatus,
       "`incomplete` while the workload runs (and forever, if it was killed: the trace then holds everything up to "
       "its last commit); `complete` once the trace was finalized at a clean exit."},
      {kMetaCreatedAt, "When the trace was created (UTC, ISO 8601)."},
      {kMetaFinalizedAt,
       "When it was finalized (UTC, ISO 8601). An incomplete trace has it when `npuscope run` built it from the "
       "spool of a killed workload (indexes built), and lacks it when the writer itself never finished."},
      {kMetaToolVersion, "Version of npuscope that wrote it."},
      {"stat.<name>",
       "A counter about the recording itself, in decimal: e.g. records dropped because a buffer was full. "
       "Data loss is always counted here, never silent."},
  };
  return keys;
}

const std::vector<ExampleQuery>& example_queries() {
  static const std::vector<ExampleQuery> queries = {
      {"Top 10 op types by total device time",
       "SELECT s.value AS op_type, COUNT(*) AS calls,\n"
       "       SUM(t.end_ns - t.start_ns) / 1e3 AS total_us, AVG(t.end_ns - t.start_ns) / 1e3 AS avg_us\n"
       "FROM TASK t JOIN STRING_IDS s ON s.id = t.op_type_id\n"
       "GROUP BY t.op_type_id ORDER BY total_us DESC LIMIT 10;"},
      {"Top 10 op instances by total device time",
       "SELECT s.value AS name, COUNT(*) AS calls, SUM(t.end_ns - t.start_ns) / 1e3 AS total_us\n"
       "FROM TASK t JOIN STRING_IDS s ON s.id = t.name_id\n"
       "GROUP BY t.name_id ORDER BY total_us DESC LIMIT 10;"},
      {"Host API calls and the device tasks they launched (by connection_id)",
       "SELECT a.start_ns AS api_start_ns, api.value AS api, task.value AS task,\n"
       "       t.start_ns - a.start_ns AS launch_to_start_ns, t.end_ns - t.start_ns AS task_ns\n"
       "FROM API a JOIN TASK t ON t.connection_id = a.connection_id\n"
       "JOIN STRING_IDS api ON api.id = a.name_id JOIN STRING_IDS task ON task.id = t.name_id\n"
       "WHERE a.connection_id != 0 ORDER BY a.start_ns LIMIT 20;"},
      {"Peak device memory",
       "SELECT device_id, MAX(allocated_bytes) AS peak_allocated_bytes, MAX(reserved_bytes) AS peak_reserved_bytes\n"
       "FROM MEMORY_RECORD GROUP BY device_id;"},
      {"When the allocated memory peaked",
       "SELECT device_id, ts_ns, allocated_bytes FROM MEMORY_RECORD\n"
       "ORDER BY allocated_bytes DESC, ts_ns LIMIT 1;"},
      {"Tasks whose outputs overflowed",
       "SELECT t.start_ns, name.value AS name, op.value AS op_type, t.device_id, t.stream_id\n"
       "FROM TASK t JOIN STRING_IDS name ON name.id = t.name_id JOIN STRING_IDS op ON op.id = t.op_type_id\n"
       "WHERE t.overflow != 0 ORDER BY t.start_ns;"},
      {"AI CPU (fallback) tasks longer than 20 us",
       "SELECT s.value AS name, (t.end_ns - t.start_ns) / 1e3 AS us FROM TASK t JOIN STRING_IDS s ON s.id = t.name_id\n"
       "WHERE t.task_type = 2 AND t.end_ns - t.start_ns > 20000 ORDER BY us DESC;"},
      {"Tensors holding NaN or inf",
       "SELECT x.task_id, s.value AS name, CASE x.role WHEN 0 THEN 'input' ELSE 'output' END AS role, x.idx,\n"
       "       x.shape, x.nan_count, x.inf_count\n"
       "FROM TENSOR x JOIN TASK t ON t.task_id = x.task_id JOIN STRING_IDS s ON s.id = t.name_id\n"
       "WHERE x.nan_count > 0 OR x.inf_count > 0 ORDER BY x.task_id;"},
      {"Is the trace complete, and was anything dropped?", "SELECT key, value FROM META ORDER BY key;"},
  };
  return queries;
}

}  // namespace npuscope::collector::schema
