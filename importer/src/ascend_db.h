// The db exports of Ascend's profilers: torch_npu's ascend_pytorch_profiler_{rank}.db (with its
// analysis.db beside it) and msprof's msprof_*.db (the same tables, without the PyTorch ones).
// docs/import.md has the mapping table by table; each pass below maps a few tables.
//
// Note [Ascend db import]
// Every table is streamed once (ForeignStmt over a query), ordered by time where the trace needs
// it; the joins the schema has no index for (a task's framework op through CONNECTION_IDS, a
// collective's stream, the call stacks) are materialised as temporary tables first (Note [Reading
// a foreign SQLite]), so memory stays bounded by the string ids, the open nesting of host ops and
// the names' call counts, never by the number of rows. Ids: a task's id is its globalTaskId + 1,
// so that TASK_PMU_INFO rows find their task without a map; a collective's task is
// comm_task_base (past the largest globalTaskId) plus its opId. PYTORCH_API rows keep their rowid
// as their id.
//
// What the tables hold, and what the profiler itself counts (the golden checks: its own
// analysis.db StepTraceTime and CommAnalyzerMatrix, reproduced from the imported rows):
// - A kernel is a TASK row with a COMPUTE_TASK_INFO row: its name, op type, core (AI_CORE,
//   AI_VECTOR_CORE, MIX_AIV, ...), block dim, shapes, dtypes and formats. A mix kernel's second
//   core part is a TASK row of its own without COMPUTE_TASK_INFO, with the kernel's stream and
//   connection id: the profiler's own outputs (trace_view.json, kernel_details.csv, the step
//   times) leave it out, and so does the import (counted in UNMAPPED).
// - A collective (COMMUNICATION_OP) has a TASK row of its own (an AI_CORE task without
//   COMPUTE_TASK_INFO, on the HCCL stream, with the op's connection id) and link-level TASK rows
//   (COMMUNICATION_TASK_INFO: Notify_Wait, Memcpy, Reduce_Inline ...). The import writes the
//   collective as an HCCL task with COMMUNICATION_OP's start and end (the span the step times
//   use), in place of its own TASK row; the link tasks become HCCL_TASK tasks, and those that move
//   bytes (size > 0) the communication matrix, per collective, peer and link (a transfer to an
//   invalid rank, 4294967295, is one to itself: LOCAL, as msprof-analyze counts it).
// - A collective's sequence number is the same on every rank: HCCL numbers its ops in their names
//   (hcom_allReduce__210_3_1: the 3 is the op's index on its communicator, the same on every
//   member); an op named otherwise takes its index in start order on its communicator.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "foreign_db.h"
#include "foreign_strings.h"
#include "hccl_groups.h"
#include "import_sink.h"

namespace npuscope::importer {

struct AscendDb {
  ForeignDb& db;
  ImportSink& sink;
  ForeignStrings& strings;
  std::string file;                 // the db's path, as ImportError and UNMAPPED name it
  int rank = -1;                    // this trace's world rank; -1 unknown
  std::int64_t comm_task_base = 0;  // a collective's task id: comm_task_base + its opId
  int world_size = 0;               // the largest communicator's size seen; 0 unknown
  std::set<std::string> mapped;     // the tables a pass read (the others are counted whole)
  GroupRanks groups;           // parallel_group_info (META_DATA or profiler_metadata.json): Note [Communicator members]
  bool conn_op_table = false;  // temp.np_conn_op(conn, op): a connection id's framework op
  bool damage_noted = false;   // a damaged page was reported (once)

  // Marks `name` read; a ForeignTable of it whose unread columns will be counted (count_unread).
  ForeignTable table(const std::string& name) {
    mapped.insert(name);
    return ForeignTable(db, name);
  }
  // " ORDER BY CAST(expr AS INTEGER)"; nothing in a file cut short (Note [A database cut short]):
  // sorting reads a whole table first, and one missing page would lose all of it, where a scan in
  // rowid order (the profilers insert by time) keeps every row before that page.
  std::string by_time(const std::string& expr) const {
    return db.cut_short() ? std::string() : " ORDER BY CAST(" + expr + " AS INTEGER)";
  }
};

// a + b and a * b as two's complement wraps them: a damaged db's ids must not overflow (undefined).
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
// A task's id in the trace.
inline std::int64_t task_id_of(std::int64_t global_task_id) { return wrap_add(global_task_id, 1); }
// The OS thread of a globalTid (pid << 32 | tid).
inline std::int32_t thread_of(std::int64_t global_tid) { return static_cast<std::int32_t>(global_tid & 0xffffffff); }
// HCCL's and msprof's "no value" (4294967295, 65535, ...) where a rank is expected.
inline bool is_invalid_rank(std::int64_t r) { return r < 0 || r >= 0xffff; }

// The SQL text of a foreign enum or string id column `expr` read as text: its ENUM table's name
// when the db has `enum_table`, else STRING_IDS' value (the tools moved columns between the two).
std::string enum_text(AscendDb& a, const std::string& expr, std::string_view enum_table);

// TASK with COMPUTE_TASK_INFO and COMMUNICATION_TASK_INFO -> TASK; TASK_PMU_INFO -> TASK_PMU.
void import_tasks(AscendDb& a);
// COMMUNICATION_OP -> COMMUNICATOR, COMMUNICATION and their HCCL tasks; COMMUNICATION_TASK_INFO's
// transfers -> COMMUNICATION_LINK.
void import_collectives(AscendDb& a);
// PYTORCH_API (+ CONNECTION_IDS, PYTORCH_CALLCHAINS) -> PYTORCH_API; CANN_API -> API; MSTX_EVENTS,
// GC_RECORD -> MARKER ranges.
void import_host(AscendDb& a);
// NPU_INFO -> DEVICE_INFO; STEP_TIME -> MARKER steps; MEMORY_RECORD -> MEMORY_RECORD; OP_MEMORY (or
// NPU_OP_MEM's allocate/release pairs) -> OP_MEMORY; the counters
// over time (AICORE_FREQ, HBM, LLC, DDR, NPU_MEM, NPU_MODULE_MEM) -> COUNTER; META_DATA -> META.
void import_device_and_counters(AscendDb& a);

// Format::kAscendPtDb: ascend_pytorch_profiler_{rank}.db, analysis.db (its profiler db beside it),
// ASCEND_PROFILER_OUTPUT or a *_ascend_pt folder holding one.
std::optional<Source> detect_ascend_pt_db(const std::filesystem::path& path);
// Format::kMsprofDb: msprof_*.db, or a PROF_* folder whose mindstudio_profiler_output holds one.
std::optional<Source> detect_msprof_db(const std::filesystem::path& path);
// Both formats (source.files[0] is the db; an analysis.db after it is not read: the trace's own
// analysis recomputes what it sums).
void import_ascend_db(const Source& source, ImportSink& sink);

}  // namespace npuscope::importer
