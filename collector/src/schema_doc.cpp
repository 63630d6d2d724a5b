// What the trace's values mean (enumerations, META keys) and example queries, for docs/schema.md.
// The vocabulary's enumerations come from their one declaration (vocabulary.h), so they cannot drift.
#include "schema_doc.h"

#include "npuscope/collector/trace_rows.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "schema.h"

namespace npuscope::collector::schema {
namespace {

// The trace vocabulary's enumerations, straight from their one declaration (vocabulary.h).
template <class E>
EnumInfo vocabulary_enum() {
  EnumInfo info{EnumTraits<E>::kDocName, EnumTraits<E>::kColumns, {}};
  for (const auto& v : enum_values<E>())
    info.values.push_back({static_cast<std::int64_t>(v.value), std::string(v.name), v.doc});
  return info;
}

EnumInfo dtypes() {
  EnumInfo info{"dtype", "TENSOR.dtype, TASK.compute_dtype", {}};
  for (const DTypeInfo& d : kDTypes)
    info.values.push_back({static_cast<std::int64_t>(d.dtype), std::string(d.name), d.doc});
  return info;
}

}  // namespace

const std::vector<EnumInfo>& enums() {
  static const std::vector<EnumInfo> all = {vocabulary_enum<TaskType>(),
                                            vocabulary_enum<ApiKind>(),
                                            vocabulary_enum<ApiLevel>(),
                                            vocabulary_enum<CopyKind>(),
                                            vocabulary_enum<MemoryOp>(),
                                            dtypes(),
                                            vocabulary_enum<TensorRole>(),
                                            vocabulary_enum<MarkerKind>(),
                                            vocabulary_enum<HostOpKind>(),
                                            vocabulary_enum<ModelPass>(),
                                            vocabulary_enum<OpCheckStandard>(),
                                            vocabulary_enum<CheckStatus>(),
                                            vocabulary_enum<Pipe>(),
                                            vocabulary_enum<KernelCheck>(),
                                            vocabulary_enum<CollectiveKind>(),
                                            vocabulary_enum<CollectiveAlgorithm>(),
                                            vocabulary_enum<ReduceOp>(),
                                            vocabulary_enum<LinkTransport>(),
                                            vocabulary_enum<Verdict>(),
                                            vocabulary_enum<ErrorOrigin>()};
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
      {kMetaRankedTables,
       "The tables stored as rowid tables in their order (TASK_EXEC and API_CALL by start_ns, MEMORY_OP by ts_ns, "
       "seq): `rowid` is each row's rank in that order, so `ORDER BY rowid` reads them in time order without a sort. "
       "`npuscope run` (converting after the workload exited) and recoveries write them so, up to 32 MiB of rows "
       "a table; a table it does not name is stored clustered on its order (Note [Ranked tables] in "
       "collector/src/schema.h). Empty or absent otherwise."},
      {kMetaGolden,
       "`1` in the trace of a golden run (`NPUSCOPE_GOLDEN=1`, as `npuscope compare -- CMD` records one): every op "
       "on an NPU device ran its CPU golden kernel, as the same task (name, call index, op type, task type) it is in "
       "an NPU run; DEVICE_INFO.precision_mode says `golden`. Absent otherwise."},
      {kMetaRank,
       "A rank of a multi-rank job: its world rank (from the launcher: `mpirun`, `torchrun`). The keys `world_size`, "
       "`node` (the emulated server: rank / ranks_per_node), `local_rank` (on that node), `hostname` (the real "
       "machine) and `launcher` come with it. Absent in a single-process trace."},
      {"stat.<name>",
       "A counter about the recording itself, in decimal: every one is listed under [Stats](#stats). "
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
      {"Tasks whose f16/bf16 results underflowed to zero, the first first",
       "SELECT t.start_ns, name.value AS name, t.underflow AS flushed, t.subnormal\n"
       "FROM TASK t JOIN STRING_IDS name ON name.id = t.name_id\n"
       "WHERE t.underflow > 0 ORDER BY t.start_ns;"},
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
