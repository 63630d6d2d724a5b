// The db exports of Ascend's profilers: torch_npu's ascend_pytorch_profiler_{rank}.db and msprof's
// msprof_*.db (the same tables, without the PyTorch ones). docs/import.md has the mapping table by
// table; the passes below each map a few tables.
//
// Note [Ascend db import]
// Every table is streamed once (ForeignStmt over a query), ordered by time where the trace needs
// it; the joins the schema has no index for (a task's framework op through CONNECTION_IDS, a
// collective's stream, the kernels' keys) are materialised as temporary tables first (Note
// [Reading a foreign SQLite]), so memory stays bounded by the string ids and the open nesting of
// host ops, never by the number of rows. Ids: a task's id is its globalTaskId + 1, so that
// TASK_PMU_INFO rows find their task without a map; a collective's task is kCommTaskBase past the
// largest globalTaskId, plus its opId. PYTORCH_API rows keep their rowid as their id.
//
// What the tables hold, and what the profiler itself counts (the golden checks: its own
// analysis.db StepTraceTime and CommAnalyzerMatrix, reproduced from the imported rows):
// - A kernel is a TASK row with a COMPUTE_TASK_INFO row: its name, op type, core (AI_CORE,
//   AI_VECTOR_CORE, MIX_AIV, ...), block dim, shapes, dtypes and formats. A mix kernel's second
//   core part is a TASK row of its own without COMPUTE_TASK_INFO, with the kernel's stream, task
//   id and connection id: the profiler's own outputs (trace_view.json, kernel_details.csv, the
//   step times) leave it out, and so does the import (counted in UNMAPPED).
// - A collective (COMMUNICATION_OP) has a TASK row of its own (an AI_CORE task without
//   COMPUTE_TASK_INFO, on the HCCL stream, with the op's connection id) and link-level TASK rows
//   (COMMUNICATION_TASK_INFO: Notify_Wait, Memcpy, Reduce_Inline ...). The import writes the
//   collective as an HCCL task with COMMUNICATION_OP's start and end (the span the step times
//   use), in place of its own TASK row; the link tasks become HCCL_TASK tasks, and those that move
//   bytes (size > 0) the communication matrix, per collective, peer and link (a transfer to an
//   invalid rank, 4294967295, is one to itself: LOCAL, as msprof-analyze counts it).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "foreign_db.h"
#include "foreign_strings.h"
#include "import_sink.h"

namespace npuscope::importer {

struct AscendDb {
  ForeignDb& db;
  ImportSink& sink;
  ForeignStrings& strings;
  std::string file;  // the db's path, as ImportError and UNMAPPED name it
  int rank = -1;     // this trace's world rank; -1 unknown
  std::int64_t comm_task_base = 0;  // a collective's task id: comm_task_base + its opId
  int world_size = 0;               // the largest communicator's size seen; 0 unknown
  std::set<std::string> mapped;     // the tables a pass read (the others are counted whole)

  // Marks `table` read; a ForeignTable of it whose unread columns will be counted.
  ForeignTable table(const std::string& name) {
    mapped.insert(name);
    return ForeignTable(db, name);
  }
  // `kind` is a CAST-free text of a foreign string id column: "" when NULL.
  std::string_view text(std::int64_t foreign) { return strings.text(foreign); }
};

constexpr std::int64_t kCommTaskBase = 1;

// A task's id in the trace.
inline std::int64_t task_id_of(std::int64_t global_task_id) { return global_task_id + 1; }
// The OS thread of a globalTid (pid << 32 | tid).
inline std::int32_t thread_of(std::int64_t global_tid) { return static_cast<std::int32_t>(global_tid & 0xffffffff); }

// TASK with COMPUTE_TASK_INFO, COMMUNICATION_TASK_INFO, MEMCPY_INFO -> TASK, MEMCPY; TASK_PMU_INFO -> TASK_PMU.
void import_tasks(AscendDb& a);
// COMMUNICATION_OP -> COMMUNICATOR, COMMUNICATION and their HCCL tasks; COMMUNICATION_TASK_INFO's
// transfers -> COMMUNICATION_LINK.
void import_collectives(AscendDb& a);
// PYTORCH_API (+ PYTORCH_CALLCHAINS) -> PYTORCH_API; CANN_API -> API; MSTX_EVENTS -> MARKER.
void import_host(AscendDb& a);
// The counters over time (HBM, LLC, AICORE_FREQ, NPU_MEM, ...) -> COUNTER.
void import_counters(AscendDb& a);
// MEMORY_RECORD -> MEMORY_RECORD; STEP_TIME -> MARKER steps; NPU_INFO -> DEVICE_INFO.
void import_memory_and_steps(AscendDb& a);

// The temporary tables the passes join on, made once before them (Note [Ascend db import]).
void make_join_tables(AscendDb& a);

}  // namespace npuscope::importer
