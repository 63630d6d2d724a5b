// See ascend_side_files.h.
#include "ascend_side_files.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "ascend_names.h"
#include "csv_reader.h"
#include "hccl_groups.h"
#include "json_file.h"
#include "npuscope/collector/time_math.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Members of an object no mapping takes: counted.
void count_members(const rapidjson::Value& v, const std::string& file, std::string_view prefix, ImportSink& sink,
                   std::initializer_list<std::string_view> mapped) {
  if (!v.IsObject()) return;
  for (const auto& m : v.GetObject()) {
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (std::find(mapped.begin(), mapped.end(), key) != mapped.end()) continue;
    sink.unmapped(file, std::string(prefix) + std::string(key));
  }
}

// "NPU:3" -> 3.
std::optional<std::int32_t> device_of(std::string_view v) {
  const std::size_t colon = v.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto n = csv_int(v.substr(colon + 1));
  return n ? std::optional<std::int32_t>(static_cast<std::int32_t>(*n)) : std::nullopt;
}

// A memory column in MB (or KB, or bytes in an older file), and its factor to bytes.
struct MemColumn {
  int col = -1;
  double to_bytes = kMiB;
};
MemColumn mem_column(CsvReader& csv, std::string_view base) {
  const std::string name(base);
  if (const int c = csv.column({name + "(MB)", name + " (MB)"}); c >= 0) return {c, kMiB};
  if (const int c = csv.column({name + "(KB)", name + " (KB)"}); c >= 0) return {c, 1024.0};
  return {csv.column({name + "(B)", name}), 1.0};
}
std::optional<std::int64_t> bytes_of(const CsvReader& csv, const MemColumn& c) {
  const auto v = csv_double(csv.field(c.col));
  if (!v) return std::nullopt;
  return clamp_to_i64(*v * c.to_bytes);
}

}  // namespace

ProfilerInfo read_profiler_info(const std::string& path, ImportSink& sink) {
  ProfilerInfo info;
  const rapidjson::Document d = read_json_file(path);
  if (const auto r = json_int(d, "rank_id"); r && *r >= 0 && *r < (std::int64_t{1} << 20)) {
    info.rank = static_cast<std::int32_t>(*r);
    sink.meta(collector::kMetaRank, std::to_string(*r));
  }
  if (const auto* config = json_member(d, "config")) {
    if (const auto* common = json_member(*config, "common_config")) {
      if (const auto* acts = json_member(*common, "activities"); acts && acts->IsArray()) {
        for (const auto& a : acts->GetArray()) {
          if (a.IsString() && std::string_view(a.GetString()).find("NPU") != std::string_view::npos) {
            info.npu_activity = true;
          }
        }
      }
    }
  }
  for (const char* key : {"torch_npu_version", "cann_version"}) {
    if (const auto v = json_text(d, key)) sink.meta(std::string("source_") + key, *v);
  }
  // config, start_info, end_info: the profiler's settings and clocks (the events carry absolute times).
  count_members(d, path, "member ", sink, {"rank_id", "torch_npu_version", "cann_version"});
  return info;
}

void read_profiler_metadata(const std::string& path, TimelineInputs& in, ImportSink& sink) {
  const rapidjson::Document d = read_json_file(path);
  if (const auto* groups = json_member(d, "parallel_group_info")) in.group_ranks = parallel_group_ranks(*groups);
  for (const char* key : {"torch_npu_version", "cann_version"}) {
    if (const auto v = json_text(d, key)) sink.meta(std::string("source_") + key, *v);
  }
  count_members(d, path, "member ", sink, {"parallel_group_info", "torch_npu_version", "cann_version"});
}

void read_communication(const std::string& path, TimelineInputs& in, ImportSink& sink) {
  const rapidjson::Document d = read_json_file(path);
  if (!d.IsObject()) throw ImportError(path + ": not a JSON object of steps ({\"step50\": {\"collective\": ...}})");
  std::int64_t ops = 0;
  for (const auto& step : d.GetObject()) {
    if (!step.value.IsObject()) continue;
    for (const auto& kind : step.value.GetObject()) {
      if (!kind.value.IsObject()) continue;
      for (const auto& op : kind.value.GetObject()) {
        const std::string_view key(op.name.GetString(), op.name.GetStringLength());
        if (key == "Total Op Info") continue;  // the step's sums
        const std::size_t at = key.rfind('@');
        CollectiveInfo info;
        info.group = at == std::string_view::npos ? "" : std::string(key.substr(at + 1));
        if (const auto* t = json_member(op.value, "Communication Time Info")) {
          if (const auto w = json_double(*t, "Wait Time(ms)")) info.wait_ns = clamp_to_i64(*w * 1e6);
        }
        in.collectives[std::string(key.substr(0, at))] = std::move(info);
        ++ops;
      }
    }
  }
  // Its bandwidth and time figures are what npuscope computes from the tasks and links.
  if (ops > 0) sink.unmapped(path, "collective's time and bandwidth figures (derived from the tasks)", ops);
}

void read_communication_matrix(const std::string& path, TimelineInputs& in, ImportSink& sink) {
  const rapidjson::Document d = read_json_file(path);
  if (!d.IsObject()) throw ImportError(path + ": not a JSON object of steps ({\"step50\": {\"collective\": ...}})");
  std::int64_t links = 0;
  for (const auto& step : d.GetObject()) {
    if (!step.value.IsObject()) continue;
    for (const auto& kind : step.value.GetObject()) {
      if (!kind.value.IsObject()) continue;
      for (const auto& op : kind.value.GetObject()) {  // "allreduce-top1@<group>": {"0-1": {...}, ...}
        const std::string_view key(op.name.GetString(), op.name.GetStringLength());
        const std::size_t at = key.rfind('@');
        if (at == std::string_view::npos || !op.value.IsObject()) continue;
        std::int32_t& seen = in.group_size_seen[std::string(key.substr(at + 1))];
        for (const auto& link : op.value.GetObject()) {
          const std::string_view pair(link.name.GetString(), link.name.GetStringLength());
          const std::size_t dash = pair.find('-');
          ++links;
          for (const std::string_view r :
               {pair.substr(0, dash), dash == std::string_view::npos ? "" : pair.substr(dash + 1)}) {
            if (const auto n = csv_int(r); n && *n >= 0 && *n < (1 << 20)) {
              seen = std::max(seen, static_cast<std::int32_t>(*n) + 1);
            }
          }
        }
      }
    }
  }
  if (links > 0) sink.unmapped(path, "link figures (COMMUNICATION_LINK holds them, from the HCCL transfers)", links);
}

std::optional<std::int32_t> read_memory_record(const std::string& path, ImportSink& sink, std::int64_t offset_ns) {
  CsvReader csv(path);
  const int component = csv.require("Component");
  const int ts = csv.require({"Timestamp(us)", "Time Stamp(us)"});
  const MemColumn allocated = mem_column(csv, "Total Allocated");
  const MemColumn reserved = mem_column(csv, "Total Reserved");
  const MemColumn active = mem_column(csv, "Total Active");
  if (allocated.col < 0 && reserved.col < 0) {
    throw ImportError(path +
                      ": no \"Total Allocated(MB)\" nor \"Total Reserved(MB)\" column (a memory_record.csv has them)");
  }
  const int device_col = csv.column({"Device Type", "Device"});
  std::optional<std::int32_t> device;
  std::int64_t last_allocated = 0, last_reserved = 0, seq = 0;
  std::string name;
  while (csv.next()) {
    const auto t = csv_time_ns(csv.field(ts));
    if (!t) {
      sink.unmapped(path, "row without a timestamp");
      continue;
    }
    const std::int64_t at = collector::add_saturated(*t, offset_ns);
    if (const auto dv = device_of(csv.field(device_col)); dv && !device) device = dv;
    const std::int32_t dev = device.value_or(0);
    const std::string_view comp = csv.field(component);
    const auto alloc = bytes_of(csv, allocated), res = bytes_of(csv, reserved), act = bytes_of(csv, active);
    if (comp == "PTA") {  // torch's caching allocator: what MEMORY_RECORD holds for any trace
      const std::int64_t a = alloc.value_or(last_allocated), r = res.value_or(last_reserved);
      MemoryOp op = a >= last_allocated ? MemoryOp::kAlloc : MemoryOp::kFree;
      if (r != last_reserved && a == last_allocated) op = r > last_reserved ? MemoryOp::kReserve : MemoryOp::kRelease;
      sink.add(collector::MemoryRow{.ts_ns = at,
                                    .device_id = dev,
                                    .op = static_cast<std::int32_t>(op),
                                    .bytes = a >= last_allocated ? collector::duration_saturated(last_allocated, a)
                                                                 : collector::duration_saturated(a, last_allocated),
                                    .allocated_bytes = a,
                                    .reserved_bytes = r,
                                    .seq = ++seq});
      last_allocated = a;
      last_reserved = r;
    }
    const std::pair<const char*, std::optional<std::int64_t>> values[] = {
        {" allocated (MB)", alloc}, {" reserved (MB)", res}, {" active (MB)", act}};
    for (const auto& [label, v] : values) {
      if (!v) continue;
      name.assign("memory ").append(comp).append(label);
      sink.add(collector::CounterRow{
          .ts_ns = at, .device_id = dev, .name_id = sink.id(name), .value = static_cast<double>(*v) / kMiB});
    }
  }
  for (const std::string& c : csv.unused_columns()) sink.unmapped(path, "column " + c, csv.rows());
  if (csv.truncated()) {
    sink.set_incomplete();
    sink.note(path + " ends in the middle of a row (cut short?): the rows before the cut are imported");
  }
  return device;
}

void read_module_memory(const std::string& path, std::int32_t device, ImportSink& sink, std::int64_t offset_ns) {
  CsvReader csv(path);
  const int component = csv.require("Component");
  const int ts = csv.require({"Timestamp(us)", "Time Stamp(us)"});
  const MemColumn reserved = mem_column(csv, "Total Reserved");
  if (reserved.col < 0) throw ImportError(path + ": no \"Total Reserved(MB)\" column (an npu_module_mem.csv has it)");
  const int device_col = csv.column({"Device", "Device Type"});
  std::string name;
  while (csv.next()) {
    const auto t = csv_time_ns(csv.field(ts));
    const auto v = bytes_of(csv, reserved);
    if (!t || !v) {
      sink.unmapped(path, "row without a timestamp or value");
      continue;
    }
    name.assign("module memory ").append(csv.field(component)).append(" reserved (MB)");
    sink.add(collector::CounterRow{.ts_ns = collector::add_saturated(*t, offset_ns),
                                   .device_id = device_of(csv.field(device_col)).value_or(device),
                                   .name_id = sink.id(name),
                                   .value = static_cast<double>(*v) / kMiB});
  }
  for (const std::string& c : csv.unused_columns()) sink.unmapped(path, "column " + c, csv.rows());
  if (csv.truncated()) sink.set_incomplete();
}

void read_operator_memory(const std::string& path, std::int32_t device, ImportSink& sink, std::int64_t offset_ns) {
  CsvReader csv(path);
  const int name = csv.require({"Name", "Op Name"});
  const MemColumn size = mem_column(csv, "Size");
  if (size.col < 0) throw ImportError(path + ": no \"Size(KB)\" column (an operator_memory.csv has it)");
  const int allocated_at = csv.require("Allocation Time(us)");
  const int released_at = csv.column("Release Time(us)"), active_at = csv.column("Active Release Time(us)");
  const int held = csv.column("Duration(us)"), active_held = csv.column("Active Duration(us)");
  const MemColumn totals[] = {
      mem_column(csv, "Allocation Total Allocated"), mem_column(csv, "Allocation Total Reserved"),
      mem_column(csv, "Allocation Total Active"),    mem_column(csv, "Release Total Allocated"),
      mem_column(csv, "Release Total Reserved"),     mem_column(csv, "Release Total Active")};
  const int stream = csv.column("Stream Ptr"), device_col = csv.column({"Device Type", "Device"}),
            device_id = csv.column("Device_id");
  const auto time = [&](int col) {
    const auto t = csv_time_ns(csv.field(col));
    return t ? collector::add_saturated(*t, offset_ns) : std::int64_t{-1};
  };
  // A release time, else the allocation plus how long it was held (msprof writes only the latter).
  const auto end = [&](int at, int duration, std::int64_t start) {
    if (const std::int64_t t = time(at); t >= 0 || at >= 0) return t;
    const auto d = csv_time_ns(csv.field(duration));
    return start >= 0 && d && *d >= 0 ? collector::add_saturated(start, *d) : std::int64_t{-1};
  };
  while (csv.next()) {
    collector::OpMemoryRow r{.name_id = sink.id(op_memory_name(csv.field(name)))};
    const auto id = csv_int(csv.field(device_id));
    r.device_id = device_of(csv.field(device_col)).value_or(id ? static_cast<std::int32_t>(*id) : device);
    // msprof: a block released in the profile but allocated before it has a negative size.
    const std::int64_t bytes = bytes_of(csv, size).value_or(0);
    r.bytes = bytes >= 0 ? bytes : bytes == INT64_MIN ? INT64_MAX : -bytes;
    r.allocation_ns = time(allocated_at);
    r.release_ns = end(released_at, held, r.allocation_ns);
    r.active_release_ns = end(active_at, active_held, r.allocation_ns);
    std::int64_t* out[] = {&r.allocation_allocated_bytes, &r.allocation_reserved_bytes, &r.allocation_active_bytes,
                           &r.release_allocated_bytes,    &r.release_reserved_bytes,    &r.release_active_bytes};
    for (std::size_t i = 0; i < std::size(totals); ++i) *out[i] = bytes_of(csv, totals[i]).value_or(-1);
    r.stream_ptr = csv_int(csv.field(stream)).value_or(0);
    sink.add(r);
  }
  for (const std::string& c : csv.unused_columns()) sink.unmapped(path, "column " + c, csv.rows());
  if (csv.truncated()) {
    sink.set_incomplete();
    sink.note(path + " ends in the middle of a row (cut short?): the rows before the cut are imported");
  }
}

void count_csv_rows(const std::string& path, std::string_view what, ImportSink& sink) {
  CsvReader csv(path);
  while (csv.next()) {
  }
  if (csv.rows() > 0) sink.unmapped(path, what, csv.rows());
}

std::optional<std::int64_t> msprof_clock_offset(const std::string& device_dir) {
  std::error_code ec;
  // start_info.N: {"collectionTimeBegin": us since the epoch, "clockMonotonicRaw": ns since boot}.
  for (const auto& e : fs::directory_iterator(device_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("start_info")) continue;
    try {
      const rapidjson::Document d = read_json_file(e.path().string());
      const auto begin_us = json_int(d, "collectionTimeBegin");
      const auto mono_ns = json_int(d, "clockMonotonicRaw");
      std::int64_t begin_ns = 0, offset = 0;
      if (begin_us && mono_ns && !__builtin_mul_overflow(*begin_us, 1000, &begin_ns) &&
          !__builtin_sub_overflow(begin_ns, *mono_ns, &offset)) {
        return offset;
      }
    } catch (const ImportError&) {
    }
  }
  return std::nullopt;
}

bool read_msprof_info(const std::string& device_dir, std::int32_t device, const std::string& fallback_name,
                      ImportSink& sink) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(device_dir, ec)) {
    if (!e.path().filename().string().starts_with("info.json")) continue;
    const rapidjson::Document d = read_json_file(e.path().string());
    collector::DeviceInfoRow row;
    row.device_id = device;
    const auto* infos = json_member(d, "DeviceInfo");
    const rapidjson::Value* info = infos && infos->IsArray() && !infos->Empty() ? &(*infos)[0] : nullptr;
    if (info != nullptr) {
      row.cube_cores = static_cast<std::int32_t>(json_int(*info, "ai_core_num").value_or(0));
      row.vector_cores = static_cast<std::int32_t>(json_int(*info, "aiv_num").value_or(0));
      if (const auto mhz = json_double(*info, "aic_frequency")) row.clock_hz = *mhz * 1e6;
      row.name = json_text(*info, "chip_name").value_or("");
    }
    if (row.name.empty()) row.name = fallback_name;
    if (const auto v = json_text(d, "version")) sink.meta(collector::kMetaSourceVersion, "msprof " + *v);
    if (const auto h = json_text(d, "hostname")) sink.meta(collector::kMetaHostname, *h);
    sink.add(std::move(row));
    return true;
  }
  return false;
}

}  // namespace npuscope::importer
