// NPU_INFO, HOST_INFO, META_DATA, STEP_TIME, MEMORY_RECORD, OP_MEMORY, NPU_OP_MEM and the counters over time (Note
// [Ascend db import] in ascend_db.h).
#include <map>
#include <string>
#include <vector>

#include "ascend_db.h"
#include "ascend_names.h"

namespace npuscope::importer {
namespace {

std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

enum ListKind : std::size_t { kOpMemoryName = 16 };

void import_devices(AscendDb& a) {
  ForeignTable info = a.table("NPU_INFO");
  if (!info.exists()) return;
  const std::string id = info.required("n", {"id"}), name = info.col("n", {"name"});
  // The devices the profile ran on (msprof's NPU_INFO lists every device of the machine).
  std::string where;
  if (a.db.has_table("TASK") && ForeignTable(a.db, "TASK").has({"deviceId"})) {
    where = " WHERE " + id + " IN (SELECT DISTINCT deviceId FROM TASK) OR NOT EXISTS (SELECT 1 FROM TASK)";
  }
  ForeignStmt q(a.db, "SELECT " + id + ", " + name + " FROM NPU_INFO n" + where + " ORDER BY 1");
  while (q.step()) {
    // The name is text in torch_npu's db ("Ascend910B"), a string id in some msprof versions.
    std::string device(q.text(1));
    if (!device.empty() && device.find_first_not_of("0123456789") == std::string::npos) {
      device = std::string(a.strings.text(q.int64(1)));
    }
    a.sink.add(collector::DeviceInfoRow{.device_id = i32(q.int64(0)), .name = device});
  }
}

void import_meta(AscendDb& a) {
  if (ForeignTable meta = a.table("META_DATA"); meta.exists()) {
    ForeignStmt q(
        a.db, "SELECT " + meta.required("m", {"name"}) + ", " + meta.required("m", {"value"}) + " FROM META_DATA m");
    while (q.step()) {
      if (q.text(0) == "SCHEMA_VERSION") {
        a.sink.meta(collector::kMetaSourceVersion, "db schema " + std::string(q.text(1)));
      } else if (q.text(0) == "parallel_group_info") {
        rapidjson::Document info;
        info.Parse(q.text(1).data(), q.text(1).size());
        if (info.HasParseError() || !info.IsObject()) {
          a.sink.unmapped(a.file, "META_DATA parallel_group_info (not a JSON object)");
        } else if (a.groups.empty()) {  // profiler_metadata.json's, read first, says the same
          a.groups = parallel_group_ranks(info);
        }
      } else {
        a.sink.unmapped(a.file, "META_DATA " + std::string(q.text(0)));
      }
    }
  }
  if (ForeignTable host = a.table("HOST_INFO"); host.exists()) {
    ForeignStmt q(a.db, "SELECT " + host.col("h", {"hostName"}) + " FROM HOST_INFO h LIMIT 1");
    if (q.step() && !q.text(0).empty()) a.sink.meta(collector::kMetaHostname, q.text(0));
    host.count_unread(a.sink, a.file);
  }
}

void import_steps(AscendDb& a) {
  ForeignTable steps = a.table("STEP_TIME");
  if (!steps.exists()) return;
  const std::string start = steps.required("s", {"startNs"});
  ForeignStmt q(a.db, "SELECT " + steps.required("s", {"id"}) + ", " + start + ", " + steps.required("s", {"endNs"}) +
                          " FROM STEP_TIME s ORDER BY CAST(" + start + " AS INTEGER)");
  while (q.step()) {
    const std::int64_t step = q.int64(0);
    a.sink.add(collector::MarkerRow{.start_ns = q.int64(1),
                                    .end_ns = q.int64(2),
                                    .name_id = a.sink.id("ProfilerStep#" + std::to_string(step)),
                                    .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                    .step = step});
  }
}

// MEMORY_RECORD: the framework allocator's totals (component PTA) over time; each row's operation
// is what changed since the device's last row. GE's and the sum's (PTA+GE) rows are counted.
void import_memory(AscendDb& a) {
  ForeignTable mem = a.table("MEMORY_RECORD");
  if (!mem.exists()) return;
  const std::string ts = mem.required("m", {"timestamp", "timestampNs"});
  ForeignStmt q(a.db, "SELECT " + enum_text(a, mem.col("m", {"component"}), "") + ", " + ts + ", " +
                          mem.required("m", {"totalAllocated"}) + ", " + mem.col("m", {"totalReserved"}) + ", " +
                          mem.col("m", {"deviceId"}) + " FROM MEMORY_RECORD m" + a.by_time(ts));
  std::vector<std::pair<std::int64_t, std::int64_t>> last;  // allocated, reserved by device (small ids)
  std::int64_t seq = 0;
  while (q.step()) {
    const std::string_view component = q.text(0);
    if (component != "PTA" && !component.empty()) {
      a.sink.unmapped(a.file, "MEMORY_RECORD rows of component " + std::string(component));
      continue;
    }
    const std::int64_t device = q.int64(4), allocated = q.int64(2), reserved = q.int64(3);
    if (device < 0 || device > 4096) {
      a.sink.unmapped(a.file, "MEMORY_RECORD rows with an invalid deviceId");
      continue;
    }
    if (last.size() <= static_cast<std::size_t>(device)) last.resize(static_cast<std::size_t>(device) + 1, {-1, -1});
    auto& [was_allocated, was_reserved] = last[static_cast<std::size_t>(device)];
    MemoryOp op = MemoryOp::kAlloc;
    std::int64_t bytes = 0;
    if (was_allocated >= 0 && allocated != was_allocated) {
      op = allocated > was_allocated ? MemoryOp::kAlloc : MemoryOp::kFree;
      bytes = allocated > was_allocated ? wrap_sub(allocated, was_allocated) : wrap_sub(was_allocated, allocated);
    } else if (was_reserved >= 0 && reserved != was_reserved) {
      op = reserved > was_reserved ? MemoryOp::kReserve : MemoryOp::kRelease;
      bytes = reserved > was_reserved ? wrap_sub(reserved, was_reserved) : wrap_sub(was_reserved, reserved);
    }
    was_allocated = allocated, was_reserved = reserved;
    a.sink.add(collector::MemoryRow{.ts_ns = q.int64(1),
                                    .device_id = i32(device),
                                    .op = static_cast<std::int32_t>(op),
                                    .bytes = bytes,
                                    .allocated_bytes = allocated,
                                    .reserved_bytes = reserved,
                                    .seq = ++seq});
  }
  mem.count_unread(a.sink, a.file);
}

// OP_MEMORY (torch_npu): each op's block, its times and the allocator's totals, as the db holds them.
void import_op_memory(AscendDb& a) {
  ForeignTable t = a.table("OP_MEMORY");
  const std::string at = t.required("o", {"allocationTime"});
  const std::string sql = "SELECT " + t.required("o", {"name"}) + ", " + t.required("o", {"size"}) + ", " + at + ", " +
                          t.col("o", {"releaseTime"}) + ", " + t.col("o", {"activeReleaseTime"}) + ", " +
                          t.col("o", {"allocationTotalAllocated"}) + ", " + t.col("o", {"allocationTotalReserved"}) +
                          ", " + t.col("o", {"allocationTotalActive"}) + ", " + t.col("o", {"releaseTotalAllocated"}) +
                          ", " + t.col("o", {"releaseTotalReserved"}) + ", " + t.col("o", {"releaseTotalActive"}) +
                          ", " + t.col("o", {"streamPtr"}) + ", " + t.col("o", {"deviceId"}) + " FROM OP_MEMORY o" +
                          a.by_time(at);
  t.find({"duration"});  // release - allocation
  t.find({"activeDuration"});
  ForeignStmt q(a.db, sql);
  while (q.step()) {
    a.sink.add(collector::OpMemoryRow{.name_id = a.strings.id(kOpMemoryName, q.int64(0, -1), op_memory_name),
                                      .device_id = i32(q.int64(12)),
                                      .bytes = q.int64(1),
                                      .allocation_ns = q.int64(2, -1),
                                      .release_ns = q.int64(3, -1),
                                      .active_release_ns = q.int64(4, -1),
                                      .allocation_allocated_bytes = q.int64(5, -1),
                                      .allocation_reserved_bytes = q.int64(6, -1),
                                      .allocation_active_bytes = q.int64(7, -1),
                                      .release_allocated_bytes = q.int64(8, -1),
                                      .release_reserved_bytes = q.int64(9, -1),
                                      .release_active_bytes = q.int64(10, -1),
                                      .stream_ptr = q.int64(11)});
  }
  t.count_unread(a.sink, a.file);
}

// NPU_OP_MEM (msprof): GE's allocate and release events, paired into blocks by device and address in
// time order; a block still open at the end was not released in the profile, a release without its
// allocation was allocated before it began.
void import_op_memory_events(AscendDb& a) {
  ForeignTable t = a.table("NPU_OP_MEM");
  const std::string ts = t.required("m", {"timestampNs", "timestamp"});
  ForeignStmt q(a.db, "SELECT " + t.col("m", {"operatorName"}) + ", " + t.required("m", {"addr"}) + ", " +
                          enum_text(a, t.required("m", {"type"}), "ENUM_MEMORY") + ", " + t.col("m", {"size"}) + ", " +
                          ts + ", " + t.col("m", {"totalAllocate"}) + ", " + t.col("m", {"totalReserve"}) + ", " +
                          t.col("m", {"deviceId"}) + " FROM NPU_OP_MEM m" + a.by_time(ts));
  std::map<std::pair<std::int64_t, std::int64_t>, collector::OpMemoryRow> open;  // by (device, address)
  while (q.step()) {
    const std::string_view type = q.text(2);
    const bool allocate = type == "allocate" || type == "malloc", release = type == "release" || type == "free";
    if (!allocate && !release) {
      a.sink.unmapped(a.file, "NPU_OP_MEM row of type " + std::string(type.empty() ? "(none)" : type));
      continue;
    }
    const std::pair<std::int64_t, std::int64_t> key{q.int64(7), q.int64(1)};
    const auto it = open.find(key);
    if (allocate) {
      if (it != open.end()) a.sink.add(it->second);  // allocated again: the release was not recorded
      open[key] = collector::OpMemoryRow{.name_id = a.strings.id(kOpMemoryName, q.int64(0, -1), op_memory_name),
                                         .device_id = i32(q.int64(7)),
                                         .bytes = q.int64(3),
                                         .allocation_ns = q.int64(4, -1),
                                         .allocation_allocated_bytes = q.int64(5, -1),
                                         .allocation_reserved_bytes = q.int64(6, -1)};
      continue;
    }
    collector::OpMemoryRow r =
        it != open.end()
            ? it->second
            : collector::OpMemoryRow{.name_id = a.strings.id(kOpMemoryName, q.int64(0, -1), op_memory_name),
                                     .device_id = i32(q.int64(7)),
                                     .bytes = q.int64(3)};
    if (it != open.end()) open.erase(it);
    r.release_ns = q.int64(4, -1);
    r.release_allocated_bytes = q.int64(5, -1);
    r.release_reserved_bytes = q.int64(6, -1);
    a.sink.add(r);
  }
  for (const auto& [key, r] : open) a.sink.add(r);
  t.count_unread(a.sink, a.file);
}

// The per-op blocks: OP_MEMORY where the db has it (torch_npu's, which holds GE's blocks of NPU_OP_MEM
// already), else NPU_OP_MEM's events paired (msprof's).
void import_op_memories(AscendDb& a) {
  const bool blocks = a.db.has_table("OP_MEMORY");
  if (blocks) import_op_memory(a);
  if (!a.db.has_table("NPU_OP_MEM")) return;
  if (!blocks) return import_op_memory_events(a);
  a.mapped.insert("NPU_OP_MEM");
  ForeignStmt n(a.db, "SELECT COUNT(*) FROM NPU_OP_MEM");
  if (n.step() && n.int64(0) > 0) {
    a.sink.unmapped(a.file, "table NPU_OP_MEM (GE's allocate/release events: OP_MEMORY holds their blocks)",
                    n.int64(0));
  }
}

// A counter table: its time column, and per value column the series' name as an SQL text
// expression over the row (alias c).
struct CounterSpec {
  const char* table;
  std::vector<std::pair<std::vector<std::string_view>, std::string>> values;  // column names, name SQL
};

void import_counters(AscendDb& a) {
  const std::string hbm_type = enum_text(a, "c.type", "");
  const std::string llc_mode = enum_text(a, "c.mode", "");
  const std::string mem_type = enum_text(a, "c.type", "ENUM_MEMORY");
  const std::string module = enum_text(a, "c.moduleId", "ENUM_MODULE");
  const std::vector<CounterSpec> specs = {
      {"AICORE_FREQ", {{{"freq"}, "'AI Core Freq (MHz)'"}}},
      {"HBM", {{{"bandwidth"}, "'HBM' || c.hbmId || ' ' || " + hbm_type + " || ' bandwidth (B/s)'"}}},
      {"LLC",
       {{{"hitRate"}, "'LLC' || c.llcId || ' ' || " + llc_mode + " || ' hit rate (%)'"},
        {{"throughput"}, "'LLC' || c.llcId || ' ' || " + llc_mode + " || ' throughput (B/s)'"}}},
      {"DDR", {{{"read"}, "'DDR read (B/s)'"}, {{"write"}, "'DDR write (B/s)'"}}},
      {"NPU_MEM",
       {{{"hbm"}, "'NPU memory ' || " + mem_type + " || ' HBM (B)'"},
        {{"ddr"}, "'NPU memory ' || " + mem_type + " || ' DDR (B)'"}}},
      {"NPU_MODULE_MEM", {{{"totalReserved"}, "'NPU module ' || " + module + " || ' reserved (B)'"}}},
  };
  for (const CounterSpec& spec : specs) {
    ForeignTable t = a.table(spec.table);
    if (!t.exists()) continue;
    const std::string ts = t.required("c", {"timestampNs", "timestamp"}), device = t.col("c", {"deviceId"});
    for (const std::string_view key : {"hbmId", "type", "llcId", "mode", "moduleId"}) t.find({key});
    for (const auto& [columns, name] : spec.values) {
      std::string value;
      for (const std::string_view c : columns) value = t.col("c", {c});
      if (value == "NULL") continue;
      // The columns the name reads must exist; a table without them is counted instead.
      try {
        ForeignStmt q(a.db, "SELECT " + ts + ", " + device + ", " + name + ", " + value + " FROM " +
                                sql_quoted(spec.table) + " c" + a.by_time(ts));
        while (q.step()) {
          a.sink.add(collector::CounterRow{
              .ts_ns = q.int64(0), .device_id = i32(q.int64(1)), .name_id = a.sink.id(q.text(2)), .value = q.real(3)});
        }
      } catch (const ForeignDbDamaged&) {
        throw;
      } catch (const ImportError&) {
        a.sink.unmapped(a.file, std::string("table ") + spec.table + " (columns of another schema)");
      }
    }
    t.count_unread(a.sink, a.file);
  }
}

}  // namespace

void import_device_and_counters(AscendDb& a) {
  import_devices(a);
  import_meta(a);
  import_steps(a);
  import_memory(a);
  import_op_memories(a);
  import_counters(a);
}

}  // namespace npuscope::importer
