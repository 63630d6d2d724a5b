// PYTORCH_API, CONNECTION_IDS, PYTORCH_CALLCHAINS, CANN_API, MSTX_EVENTS (Note [Ascend db import] in
// ascend_db.h).
#include <map>
#include <vector>

#include "api_levels.h"
#include "ascend_db.h"
#include "ascend_names.h"
#include "kineto_vocabulary.h"
#include "tensor_lists.h"

namespace npuscope::importer {
namespace {

enum ListKind : std::size_t { kShapes = 8, kDTypes, kShapesAsDTypes, kDTypesAsShapes };
enum MemoKind : std::size_t { kHostOp = 8, kApiKind };

// A framework op's kind (low byte) and the pass it starts + 1 (0: none), from its name, packed for
// ForeignStrings::memo.
std::int64_t host_op_of(std::string_view name) {
  const auto pass = kineto::pass_started_by(name);
  return static_cast<std::int64_t>(kineto::host_op_kind(name, false)) +
         256 * (pass ? static_cast<std::int64_t>(*pass) + 1 : 0);
}

std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

// What PYTORCH_API.type names (ENUM_API_TYPE): a framework op, a task queue's Enqueue/Dequeue, a
// Python function of the stack tracer, an mstx range.
enum class HostRow { kOp, kQueue, kPython, kMstx };
HostRow host_row(std::string_view type) {
  if (type == "queue") return HostRow::kQueue;
  if (type == "trace") return HostRow::kPython;
  if (type == "mstx") return HostRow::kMstx;
  return HostRow::kOp;
}

// temp.np_conn_op: each connection id's innermost framework op (the latest starting op that holds
// it in CONNECTION_IDS), the op its tasks' pytorch_api_id names; temp.np_stacks: each call chain's
// frames, innermost first, separated by ";\n".
void make_join_tables(AscendDb& a, ForeignTable& api, const std::string& type_text) {
  if (a.db.has_table("CONNECTION_IDS") && api.has({"connectionId"})) {
    ForeignTable ids = a.table("CONNECTION_IDS");
    const std::string id = ids.required("c", {"id"}), conn = ids.required("c", {"connectionId"});
    a.db.exec(
        "CREATE TEMP TABLE np_conn_op(conn INTEGER PRIMARY KEY, op INTEGER); "
        "INSERT OR REPLACE INTO temp.np_conn_op SELECT " +
        conn + ", p.rowid FROM CONNECTION_IDS c JOIN PYTORCH_API p ON " + api.col("p", {"connectionId"}) + " = " + id +
        " WHERE COALESCE(" + type_text + ", 'op') = 'op' ORDER BY CAST(" + api.col("p", {"startNs"}) + " AS INTEGER)");
    a.conn_op_table = true;
  }
  if (a.db.has_table("PYTORCH_CALLCHAINS") && api.has({"callchainId"})) {
    ForeignTable chains = a.table("PYTORCH_CALLCHAINS");
    a.db.exec(
        "CREATE TEMP TABLE np_stacks(id INTEGER PRIMARY KEY, stack TEXT); "
        "INSERT OR REPLACE INTO temp.np_stacks SELECT id, group_concat(frame, ';\n') FROM (SELECT " +
        chains.required("c", {"id"}) + " AS id, s.value AS frame FROM PYTORCH_CALLCHAINS c JOIN " + a.strings.table() +
        " s ON s.id = " + chains.required("c", {"stack"}) + " ORDER BY 1, " + chains.col("c", {"stackDepth"}) +
        ") GROUP BY id");
  }
}

void import_pytorch_api(AscendDb& a) {
  ForeignTable api = a.table("PYTORCH_API");
  if (!api.exists()) return;
  const std::string type_text = enum_text(a, api.col("p", {"type"}), "ENUM_API_TYPE");
  make_join_tables(a, api, type_text);
  const bool stacks = a.db.has_table("PYTORCH_CALLCHAINS") && api.has({"callchainId"});
  const std::string start = api.required("p", {"startNs"}), end = api.required("p", {"endNs"}),
                    tid = api.col("p", {"globalTid"});
  ForeignStmt q(a.db, "SELECT p.rowid, " + start + ", " + end + ", " + tid + ", " + api.required("p", {"name"}) + ", " +
                          api.col("p", {"sequenceNumber"}) + ", " + api.col("p", {"fwdThreadId"}) + ", " +
                          api.col("p", {"inputShapes"}) + ", " + api.col("p", {"inputDtypes", "inputDataTypes"}) +
                          ", " + type_text + ", " + (stacks ? "st.stack" : "NULL") + " FROM PYTORCH_API p" +
                          (stacks ? " LEFT JOIN temp.np_stacks st ON st.id = " + api.col("p", {"callchainId"}) : "") +
                          " ORDER BY " + tid + ", CAST(" + start + " AS INTEGER), CAST(" + end + " AS INTEGER) DESC");
  struct Open {
    std::int64_t id, end;
    std::int32_t pass;
  };
  std::vector<Open> open;
  std::int64_t thread = -1;
  std::optional<bool> swapped;  // torch_npu versions that wrote inputShapes and inputDtypes swapped
  ForeignStrings& s = a.strings;
  while (q.step()) {
    const std::int64_t global_tid = q.int64(3), start_ns = q.int64(1), end_ns = q.int64(2);
    const HostRow kind = host_row(q.text(9));
    if (kind == HostRow::kQueue) {
      a.sink.unmapped(a.file, "PYTORCH_API row of type queue (Enqueue, Dequeue: the task queue's hand-over)");
      continue;
    }
    if (kind == HostRow::kMstx) {
      a.sink.add(collector::MarkerRow{.start_ns = start_ns,
                                      .end_ns = end_ns,
                                      .name_id = s.id(q.int64(4, -1)),
                                      .thread_id = thread_of(global_tid),
                                      .kind = static_cast<std::int32_t>(MarkerKind::kRange)});
      continue;
    }
    if (global_tid != thread) open.clear(), thread = global_tid;
    while (!open.empty() && open.back().end < end_ns) open.pop_back();
    const std::int64_t op = s.memo(kHostOp, q.int64(4, -1), host_op_of);
    std::int32_t pass = open.empty() ? static_cast<std::int32_t>(ModelPass::kForward) : open.back().pass;
    if (op >= 256) pass = static_cast<std::int32_t>(op / 256 - 1);
    collector::PytorchApiRow r{.id = q.int64(0),
                               .start_ns = start_ns,
                               .end_ns = end_ns,
                               .thread_id = thread_of(global_tid),
                               .name_id = s.id(q.int64(4, -1)),
                               .kind = kind == HostRow::kPython ? static_cast<std::int32_t>(HostOpKind::kPythonFunction)
                                                                : static_cast<std::int32_t>(op % 256),
                               .pass = pass,
                               .sequence_number = q.int64(5, -1),
                               .fwd_thread_id = i32(q.int64(6, 0)),
                               .parent_id = open.empty() ? 0 : open.back().id,
                               .stack_id = a.sink.id(q.text(10))};
    const std::int64_t shapes = q.int64(7, -1), dtypes = q.int64(8, -1);
    if (!swapped && shapes >= 0 && !s.text(shapes).empty()) swapped = has_letters(s.text(shapes));
    if (swapped.value_or(false)) {
      r.input_shapes_id = s.id(kDTypesAsShapes, dtypes, shape_list);
      r.input_dtypes_id = s.id(kShapesAsDTypes, shapes, dtype_list);
    } else {
      r.input_shapes_id = s.id(kShapes, shapes, shape_list);
      r.input_dtypes_id = s.id(kDTypes, dtypes, dtype_list);
    }
    open.push_back({r.id, end_ns, pass});
    a.sink.add(std::move(r));
  }
  api.count_unread(a.sink, a.file);
}

void import_cann_api(AscendDb& a) {
  ForeignTable api = a.table("CANN_API");
  if (!api.exists()) return;
  const std::string type = api.col("a", {"type"});
  ForeignStmt q(a.db, "SELECT " + api.required("a", {"startNs"}) + ", " + api.required("a", {"endNs"}) + ", " +
                          api.required("a", {"name"}) + ", " + api.col("a", {"connectionId"}) + ", " +
                          api.col("a", {"globalTid"}) + ", " + type + " FROM CANN_API a");
  // The level by type, named by ENUM_API_TYPE (else by the ids msprof documents for it).
  std::map<std::int64_t, ApiLevel> levels = {{5000, ApiLevel::kRuntime},
                                             {5500, ApiLevel::kHccl},
                                             {10000, ApiLevel::kNode},
                                             {15000, ApiLevel::kModel},
                                             {20000, ApiLevel::kAcl}};
  if (type != "NULL" && a.db.has_table("ENUM_API_TYPE")) {
    levels.clear();
    ForeignStmt e(a.db, "SELECT id, name FROM ENUM_API_TYPE");
    while (e.step()) levels[e.int64(0)] = cann_api_level(e.text(1));
  }
  ForeignStrings& s = a.strings;
  while (q.step()) {
    const std::int64_t name = q.int64(2, -1);
    const auto level = levels.find(q.int64(5, -1));
    a.sink.add(collector::ApiRow{
        .start_ns = q.int64(0),
        .end_ns = q.int64(1),
        .name_id = s.id(name),
        .connection_id = q.int64(3),
        .thread_id = thread_of(q.int64(4)),
        .kind = static_cast<std::int32_t>(
            s.memo(kApiKind, name, [](std::string_view n) { return static_cast<std::int64_t>(cann_api_kind(n)); })),
        .level = static_cast<std::int32_t>(level != levels.end() ? level->second : ApiLevel::kUnknown)});
  }
  api.count_unread(a.sink, a.file);
}

// MARKER ranges from a table of ranges: MSTX_EVENTS (named by their message) and GC_RECORD (torch_npu's
// gc_detect_threshold: Python's garbage collections, named `fixed_name`).
void import_ranges(AscendDb& a, const char* table, std::string_view fixed_name) {
  ForeignTable t = a.table(table);
  if (!t.exists()) return;
  const std::string start = t.required("m", {"startNs"});
  ForeignStmt q(a.db, "SELECT " + start + ", " + t.col("m", {"endNs"}) + ", " +
                          (fixed_name.empty() ? t.col("m", {"message"}) : std::string("NULL")) + ", " +
                          t.col("m", {"globalTid"}) + " FROM " + sql_quoted(table) + " m");
  const collector::StringId fixed = a.sink.id(fixed_name);
  while (q.step()) {
    const std::int64_t start_ns = q.int64(0);
    a.sink.add(collector::MarkerRow{.start_ns = start_ns,
                                    .end_ns = q.int64(1, start_ns),
                                    .name_id = fixed_name.empty() ? a.strings.id(q.int64(2, -1)) : fixed,
                                    .thread_id = thread_of(q.int64(3)),
                                    .kind = static_cast<std::int32_t>(MarkerKind::kRange)});
  }
  t.count_unread(a.sink, a.file);
}

}  // namespace

void import_host(AscendDb& a) {
  import_pytorch_api(a);
  import_cann_api(a);
  import_ranges(a, "MSTX_EVENTS", "");
  import_ranges(a, "GC_RECORD", "GC");
}

}  // namespace npuscope::importer
