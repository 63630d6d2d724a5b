// TASK, COMPUTE_TASK_INFO, COMMUNICATION_TASK_INFO, TASK_PMU_INFO, COMMUNICATION_OP (Note [Ascend db
// import] in ascend_db.h).
#include <map>
#include <set>
#include <vector>

#include "ascend_db.h"
#include "ascend_names.h"
#include "tensor_lists.h"

namespace npuscope::importer {
namespace {

// The conversions ForeignStrings::id remembers, by kind.
enum ListKind : std::size_t { kShapes, kDTypes };
enum MemoKind : std::size_t { kTaskType };

TaskType task_type_of(ForeignStrings& s, std::int64_t foreign) {
  return static_cast<TaskType>(
      s.memo(kTaskType, foreign, [](std::string_view t) { return static_cast<std::int64_t>(ascend_task_type(t)); }));
}

bool is_kernel(TaskType t) {
  return t == TaskType::kAiCore || t == TaskType::kAiVectorCore || t == TaskType::kMixAiCore ||
         t == TaskType::kMixAiVector || t == TaskType::kAiCpu;
}

std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

}  // namespace

void import_tasks(AscendDb& a) {
  ForeignTable task = a.table("TASK");
  if (!task.exists()) return;
  ForeignTable compute = a.table("COMPUTE_TASK_INFO");
  ForeignTable link(a.db, "COMMUNICATION_TASK_INFO");  // its columns counted by import_collectives
  const bool has_compute = compute.exists() && compute.has({"globalTaskId"});
  const bool has_link = link.exists() && link.has({"globalTaskId"});
  const bool has_ops =
      a.db.has_table("COMMUNICATION_OP") && ForeignTable(a.db, "COMMUNICATION_OP").has({"connectionId"});
  const bool has_conn_op = a.conn_op_table;

  const std::string start = task.required("t", {"startNs"}), gid = task.required("t", {"globalTaskId"});
  std::string sql = "SELECT " + start + ", " + task.required("t", {"endNs"}) + ", " + task.col("t", {"deviceId"}) +
                    ", " + task.col("t", {"streamId"}) + ", " + task.col("t", {"connectionId"}) + ", " + gid + ", " +
                    task.col("t", {"taskType"});
  if (has_compute) {
    const auto c = [&](std::initializer_list<std::string_view> n) { return ", " + compute.col("c", n); };
    sql += ", c." + sql_quoted(compute.find({"globalTaskId"})) + " IS NOT NULL" + c({"name"}) + c({"opType"}) +
           c({"taskType"}) + c({"blockNum", "blockDim", "block_dim"}) + c({"inputShapes"}) +
           c({"inputDataTypes", "inputDtypes"}) + c({"inputFormats"}) + c({"outputShapes"}) +
           c({"outputDataTypes", "outputDtypes"}) + c({"outputFormats"});
  } else {
    sql += ", 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
  }
  if (has_link) {
    sql += ", ct." + sql_quoted(link.find({"globalTaskId"})) + " IS NOT NULL, " + link.col("ct", {"taskType"});
  } else {
    sql += ", 0, NULL";
  }
  const std::string conn = task.col("t", {"connectionId"});
  sql += has_ops && conn != "NULL" ? ", " + conn + " IN (SELECT connectionId FROM COMMUNICATION_OP)" : ", 0";
  sql += has_conn_op && conn != "NULL" ? ", co.op" : ", NULL";
  // A copy's size and direction (msprof since 2024-12: MEMCPY_INFO, ENUM_MEMCPY_OPERATION).
  ForeignTable memcpy = a.table("MEMCPY_INFO");
  const bool has_memcpy = memcpy.exists() && memcpy.has({"globalTaskId"});
  sql += has_memcpy ? ", " + memcpy.col("mi", {"size"}) + ", " +
                          enum_text(a, memcpy.col("mi", {"memcpyOperation"}), "ENUM_MEMCPY_OPERATION")
                    : ", NULL, NULL";
  sql += " FROM TASK t";
  if (has_compute)
    sql += " LEFT JOIN COMPUTE_TASK_INFO c ON c." + sql_quoted(compute.find({"globalTaskId"})) + " = " + gid;
  if (has_link)
    sql += " LEFT JOIN COMMUNICATION_TASK_INFO ct ON ct." + sql_quoted(link.find({"globalTaskId"})) + " = " + gid;
  if (has_conn_op && conn != "NULL") sql += " LEFT JOIN temp.np_conn_op co ON co.conn = " + conn;
  if (has_memcpy) sql += " LEFT JOIN MEMCPY_INFO mi ON mi." + sql_quoted(memcpy.find({"globalTaskId"})) + " = " + gid;
  sql += a.by_time(start);

  // Without COMPUTE_TASK_INFO rows (an msprof db of a level-0 run) a kernel is known by its TASK row only.
  const bool kernels_need_info = has_compute && [&] {
    ForeignStmt any(a.db, "SELECT 1 FROM COMPUTE_TASK_INFO LIMIT 1");
    return any.step();
  }();

  ForeignStrings& s = a.strings;
  ForeignStmt q(a.db, sql);
  while (q.step()) {
    collector::TaskRow r{.task_id = task_id_of(q.int64(5)),
                         .start_ns = q.int64(0),
                         .end_ns = q.int64(1),
                         .device_id = i32(q.int64(2)),
                         .stream_id = i32(q.int64(3)),
                         .connection_id = q.int64(4)};
    if (q.int64(18) != 0) {  // a link-level task of a collective
      r.task_type = static_cast<std::int32_t>(TaskType::kCommunicationTask);
      r.name_id = r.op_type_id = s.id(q.int64(19, -1));
    } else if (q.int64(7) != 0) {  // a kernel
      r.task_type = static_cast<std::int32_t>(task_type_of(s, q.int64(10, -1)));
      r.name_id = s.id(q.int64(8, -1));
      r.op_type_id = s.id(q.int64(9, -1));
      r.block_dim = i32(q.int64(11));
      const auto shapes = [&](int col) { return s.id(kShapes, q.int64(col, -1), shape_list); };
      const auto dtypes = [&](int col) { return s.id(kDTypes, q.int64(col, -1), dtype_list); };
      r.input_shapes_id = shapes(12);
      r.input_dtypes_id = dtypes(13);
      r.input_formats_id = shapes(14);
      r.output_shapes_id = shapes(15);
      r.output_dtypes_id = dtypes(16);
      r.output_formats_id = shapes(17);
    } else if (q.int64(20) != 0) {
      a.sink.unmapped(a.file, "TASK row of a collective (written from COMMUNICATION_OP)");
      continue;
    } else {
      const TaskType type = task_type_of(s, q.int64(6, -1));
      if (is_kernel(type) && kernels_need_info) {
        a.sink.unmapped(a.file, "TASK row of a kernel without COMPUTE_TASK_INFO (a mix kernel's second part)");
        continue;
      }
      r.task_type = static_cast<std::int32_t>(type);
      r.name_id = r.op_type_id = s.id(q.int64(6, -1));
    }
    r.pytorch_api_id = q.int64(21, 0);
    r.call_index = a.sink.next_call_index(r.name_id);
    if (r.task_type == static_cast<std::int32_t>(TaskType::kMemcpy)) {  // its MEMCPY row: size 0 unknown
      a.sink.add(collector::MemcpyRow{.task_id = r.task_id,
                                      .start_ns = r.start_ns,
                                      .end_ns = r.end_ns,
                                      .device_id = r.device_id,
                                      .stream_id = r.stream_id,
                                      .bytes = std::max<std::int64_t>(0, q.int64(22, 0)),
                                      .copy_kind = static_cast<std::int32_t>(ascend_copy_kind(q.text(23))),
                                      .connection_id = r.connection_id});
    }
    a.sink.add(std::move(r));
  }
  task.count_unread(a.sink, a.file);
  if (has_compute) compute.count_unread(a.sink, a.file);
  if (has_memcpy) memcpy.count_unread(a.sink, a.file);

  ForeignTable pmu = a.table("TASK_PMU_INFO");
  if (!pmu.exists()) return;
  ForeignStmt m(a.db, "SELECT " + pmu.required("p", {"globalTaskId"}) + ", " + pmu.required("p", {"name"}) + ", " +
                          pmu.required("p", {"value"}) + " FROM TASK_PMU_INFO p");
  while (m.step()) {
    a.sink.add(
        collector::TaskPmuRow{.task_id = task_id_of(m.int64(0)), .name_id = s.id(m.int64(1, -1)), .value = m.real(2)});
  }
  pmu.count_unread(a.sink, a.file);
}

void import_collectives(AscendDb& a) {
  ForeignTable op = a.table("COMMUNICATION_OP");
  if (!op.exists()) return;
  ForeignTable link = a.table("COMMUNICATION_TASK_INFO");
  const bool has_links = link.exists() && link.has({"opId"}) && link.has({"globalTaskId"});
  const std::string op_conn = op.col("o", {"connectionId"}), group = op.required("o", {"groupName"});

  // Each communicator's size and this rank's place in it, from the link tasks' ranks.
  struct Group {
    std::int64_t id = 0;
    std::int32_t rank = 0, size = 0;  // this rank's place and the group's size, as the transfers say
    CommunicatorMembers members;
  };
  std::map<std::int64_t, Group> groups;  // by the foreign groupName id
  if (has_links) {
    const std::string src = link.col("l", {"srcRank"}), dst = link.col("l", {"dstRank"}),
                      lg = link.col("l", {"groupName"});
    ForeignStmt g(a.db, "SELECT " + lg + ", " + src + ", " + dst + " FROM COMMUNICATION_TASK_INFO l");
    std::map<std::int64_t, std::pair<std::map<std::int64_t, std::int64_t>, std::set<std::int64_t>>> seen;
    while (g.step()) {
      auto& [sources, members] = seen[g.int64(0, -1)];
      for (const int c : {1, 2}) {
        const std::int64_t r = g.int64(c, -1);
        if (!is_invalid_rank(r)) members.insert(r);
      }
      if (!is_invalid_rank(g.int64(1, -1))) ++sources[g.int64(1, -1)];
    }
    for (const auto& [name, ranks] : seen) {
      Group& out = groups[name];
      out.size = static_cast<std::int32_t>(ranks.second.empty() ? 0 : *ranks.second.rbegin() + 1);
      std::int64_t most = -1;
      for (const auto& [r, n] : ranks.first) {
        if (n > most) most = n, out.rank = static_cast<std::int32_t>(r);
      }
    }
  }

  // The stream of each collective's own TASK row.
  std::string stream = "NULL", device = "NULL", join;
  if (a.db.has_table("TASK") && op_conn != "NULL") {
    ForeignTable task(a.db, "TASK");
    a.db.exec(
        "CREATE TEMP TABLE IF NOT EXISTS np_op_stream(conn INTEGER PRIMARY KEY, stream INTEGER, device INTEGER); "
        "INSERT OR IGNORE INTO temp.np_op_stream SELECT t." +
        sql_quoted(task.find({"connectionId"})) + ", " + task.col("t", {"streamId"}) + ", " +
        task.col("t", {"deviceId"}) + " FROM TASK t WHERE t." + sql_quoted(task.find({"connectionId"})) +
        " IN (SELECT connectionId FROM COMMUNICATION_OP) ORDER BY CAST(" + task.col("t", {"startNs"}) + " AS INTEGER)");
    stream = "os.stream", device = "os.device", join = " LEFT JOIN temp.np_op_stream os ON os.conn = " + op_conn;
  }
  const std::string start = op.required("o", {"startNs"});
  ForeignStmt q(a.db, "SELECT " + op.required("o", {"opName"}) + ", " + start + ", " + op.required("o", {"endNs"}) +
                          ", " + op_conn + ", " + group + ", " + op.required("o", {"opId"}) + ", " +
                          enum_text(a, op.col("o", {"dataType"}), "ENUM_HCCL_DATA_TYPE") + ", " +
                          enum_text(a, op.col("o", {"algType"}), "") + ", " + op.col("o", {"count"}) + ", " +
                          op.col("o", {"opType"}) + ", " + stream + ", " + device + " FROM COMMUNICATION_OP o" + join +
                          " ORDER BY CAST(" + start + " AS INTEGER)");
  ForeignStrings& s = a.strings;
  std::map<std::int64_t, std::int32_t> next_sequence;  // by communicator id
  std::set<std::int64_t> written;                      // the opIds written as collectives
  while (q.step()) {
    const std::int64_t group_id = q.int64(4, -1);
    Group& g = groups[group_id];
    if (g.id == 0) {
      g.id = static_cast<std::int64_t>(next_sequence.size()) + 1;
      next_sequence[g.id] = 0;
      g.members = communicator_members(a.groups, s.text(group_id), a.rank, g.size, g.rank);
      a.sink.add(collector::CommunicatorRow{.communicator_id = g.id,
                                            .name_id = s.id(group_id),
                                            .rank = g.members.rank,
                                            .size = g.members.size,
                                            .members_id = a.sink.id(g.members.list)});
      a.world_size = std::max(a.world_size, static_cast<int>(g.members.size));
    }
    const std::string name(s.text(q.int64(0, -1)));
    const std::int64_t task_id = wrap_add(a.comm_task_base, q.int64(5));
    written.insert(q.int64(5));
    const collector::StringId name_id = a.sink.id(name);
    std::int32_t& counter = next_sequence[g.id];
    const std::int32_t sequence = hccl_sequence(name).value_or(counter);
    ++counter;
    const std::string_view op_type = q.is_null(9) ? hccl_op_type(name) : s.text(q.int64(9, -1));
    const auto kind = hccl_collective_kind(name).value_or(hccl_collective_kind(op_type).value_or(CollectiveKind{}));
    const auto dtype = hccl_enum_dtype(q.text(6));
    const std::int64_t start_ns = q.int64(1), end_ns = q.int64(2);
    a.sink.add(collector::TaskRow{.task_id = task_id,
                                  .start_ns = start_ns,
                                  .end_ns = end_ns,
                                  .device_id = i32(q.int64(11)),
                                  .stream_id = i32(q.int64(10)),
                                  .name_id = name_id,
                                  .op_type_id = a.sink.id(op_type),
                                  .task_type = static_cast<std::int32_t>(TaskType::kCommunication),
                                  .connection_id = q.int64(3),
                                  .call_index = a.sink.next_call_index(name_id)});
    a.sink.add(collector::CommunicationRow{
        .task_id = task_id,
        .communicator_id = g.id,
        .sequence = sequence,
        .kind = static_cast<std::int32_t>(kind),
        .algorithm = static_cast<std::int32_t>(hccl_algorithm(q.text(7)).value_or(CollectiveAlgorithm{})),
        .reduce_op = static_cast<std::int32_t>(
            kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ? ReduceOp::kSum
                                                                                         : ReduceOp::kNone),
        .dtype = static_cast<std::int32_t>(dtype.value_or(DType{})),
        .bytes = dtype ? wrap_mul(q.int64(8), static_cast<std::int64_t>(dtype_size(*dtype))) : 0,
        .arrival_ns = start_ns,
        .start_ns = start_ns,
        .end_ns = end_ns});
  }
  op.count_unread(a.sink, a.file);
  if (!has_links || !a.db.has_table("TASK")) return;

  // The transfers, per collective, sender, receiver and link: the communication matrix.
  ForeignTable task(a.db, "TASK");
  const std::string tid = sql_quoted(task.find({"globalTaskId"}));
  const std::string src = link.col("l", {"srcRank"}), dst = link.col("l", {"dstRank"}),
                    transport = link.col("l", {"transportType"}), kind = link.col("l", {"linkType"}),
                    size = link.col("l", {"size"}), lg = link.col("l", {"groupName"});
  link.find({"name"});      // the collective's name: its opId joins it
  link.find({"taskType"});  // read by import_tasks
  link.find({"opId"});
  link.find({"globalTaskId"});
  ForeignStmt l(a.db, "SELECT l.opId, " + lg + ", " + src + ", " + dst + ", " +
                          enum_text(a, transport, "ENUM_HCCL_TRANSPORT_TYPE") + ", " +
                          enum_text(a, kind, "ENUM_HCCL_LINK_TYPE") + ", SUM(" + size + "), SUM(CAST(" +
                          task.col("t", {"endNs"}) + " AS INTEGER) - CAST(" + task.col("t", {"startNs"}) +
                          " AS INTEGER)) FROM COMMUNICATION_TASK_INFO l JOIN TASK t ON t." + tid +
                          " = l.globalTaskId WHERE " + size + " > 0 GROUP BY l.opId, " + src + ", " + dst + ", " +
                          transport + ", " + kind);
  while (l.step()) {
    if (!written.contains(l.int64(0))) {
      a.sink.unmapped(a.file, "COMMUNICATION_TASK_INFO transfers of a collective COMMUNICATION_OP lacks");
      continue;
    }
    const Group& g = groups[l.int64(1, -1)];
    const std::int64_t from = l.int64(2, -1), to = l.int64(3, -1);
    if (!is_invalid_rank(from) && from != g.rank) {
      a.sink.unmapped(a.file, "COMMUNICATION_TASK_INFO transfer from another rank to this one");
      continue;
    }
    const bool to_self = is_invalid_rank(to) || to == g.rank;
    a.sink.add(collector::CommunicationLinkRow{
        .task_id = wrap_add(a.comm_task_base, l.int64(0)),
        .peer_rank = to_self ? (a.rank >= 0 ? a.rank : g.members.world_rank(g.rank)) : g.members.world_rank(to),
        .transport = static_cast<std::int32_t>(hccl_transport(l.text(5), l.text(4), to_self)),
        .bytes = l.int64(6),
        .time_ns = l.int64(7)});
  }
  link.count_unread(a.sink, a.file);
}

}  // namespace npuscope::importer
