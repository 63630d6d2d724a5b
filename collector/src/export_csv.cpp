// The msprof-style CSV files: see export_csv.h.
#include "npuscope/collector/export_csv.h"
#include "npuscope/collector/time_math.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>

#include "export_util.h"
#include "npuscope/collector/op_statistic.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;
using export_util::append_csv_field;
using export_util::append_int;
using export_util::append_us;

// The shapes and dtypes of one task's tensors, as op_summary prints them.
struct TaskTensors {
  std::string shapes[2], types[2];  // by role: 0 input, 1 output
  int count[2] = {0, 0};
};

std::unordered_map<std::int64_t, TaskTensors> load_tensor_shapes(const TraceReader& reader) {
  std::unordered_map<std::int64_t, TaskTensors> by_task;
  reader.for_each([&](const TensorRow& t) {
    if (!enum_from_value<TensorRole>(t.role)) return;  // unknown role: not an input or output column
    TaskTensors& e = by_task[t.task_id];
    if (e.count[t.role]++ > 0) {
      e.shapes[t.role] += ';';
      e.types[t.role] += ';';
    }
    e.shapes[t.role] += t.shape;
    e.types[t.role] += export_util::tensor_dtype_name(t.dtype);
  });
  return by_task;
}

// Count, total, min and max of a group of durations.
struct Durations {
  std::int64_t count = 0, total = 0;
  std::int64_t min = std::numeric_limits<std::int64_t>::max(), max = 0;
  void add(std::int64_t ns) {
    ++count;
    total = add_saturated(total, ns);  // Note [Timestamp range]
    min = std::min(min, ns);
    max = std::max(max, ns);
  }
};

// ",count,total,avg,min,max,ratio" with times in microseconds.
void append_durations(std::string& b, const Durations& d, std::int64_t grand_total) {
  b += ',';
  append_int(b, d.count);
  b += ',';
  append_us(b, d.total);
  b += ',';
  export_util::append_fixed(b, static_cast<double>(d.total) / static_cast<double>(d.count) / 1000.0, 3);
  b += ',';
  append_us(b, d.min);
  b += ',';
  append_us(b, d.max);
  b += ',';
  export_util::append_fixed(
      b, grand_total > 0 ? 100.0 * static_cast<double>(d.total) / static_cast<double>(grand_total) : 0.0, 2);
  b += '\n';
}

std::int64_t duration(std::int64_t start, std::int64_t end) { return duration_saturated(start, end); }

class CsvWriter {
 public:
  CsvWriter(const TraceReader& reader, const std::string& directory)
      : reader_(reader), dir_(directory), model_name_(reader.meta("model_name").value_or("N/A")) {}

  CsvFile op_summary();
  CsvFile op_statistic();
  CsvFile api_statistic();
  CsvFile memory_record();
  CsvFile gradients();

 private:
  std::string path_of(const char* name) const { return (fs::path(dir_) / name).string(); }
  void append_task_row(std::string& b, const TaskRow& t, std::int64_t wait_ns, const TaskTensors* tensors);

  const TraceReader& reader_;
  std::string dir_;
  std::string model_name_;
};

CsvFile CsvWriter::op_summary() {
  export_util::OutputFile out(path_of("op_summary.csv"));
  out.buffer() +=
      "Device_id,Model Name,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
      "Task Wait Time(us),Block Dim,Input Shapes,Input Data Types,Output Shapes,Output Data Types,FLOPs,Bytes,"
      "Overflow\n";
  const auto tensors = load_tensor_shapes(reader_);
  std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t> stream_end;  // (device, stream) -> last end
  CsvFile file{out.path(), 0};
  reader_.for_each([&](const TaskRow& t) {
    const auto [it, first] = stream_end.try_emplace({t.device_id, t.stream_id}, t.end_ns);
    const std::int64_t wait = first ? 0 : duration_saturated(it->second, t.start_ns);
    if (!first) it->second = std::max(it->second, t.end_ns);
    const auto found = tensors.find(t.task_id);
    append_task_row(out.buffer(), t, wait, found == tensors.end() ? nullptr : &found->second);
    out.maybe_flush();
    ++file.rows;
  });
  out.commit();
  return file;
}

void CsvWriter::append_task_row(std::string& b, const TaskRow& t, std::int64_t wait_ns, const TaskTensors* tensors) {
  append_int(b, t.device_id);
  b += ',';
  append_csv_field(b, model_name_);
  b += ',';
  append_int(b, t.task_id);
  b += ',';
  append_int(b, t.stream_id);
  b += ',';
  append_csv_field(b, reader_.string(t.name_id));
  b += ',';
  append_csv_field(b, reader_.string(t.op_type_id));
  b += ',';
  b += task_type_name(t.task_type);
  b += ',';
  append_us(b, t.start_ns);
  b += ',';
  append_us(b, duration(t.start_ns, t.end_ns));
  b += ',';
  append_us(b, wait_ns);
  b += ',';
  append_int(b, t.block_dim);
  for (const int role : {0, 1}) {
    b += ',';
    if (tensors != nullptr) {
      append_csv_field(b, tensors->shapes[role]);
    } else if (role == 0) {
      append_csv_field(b, reader_.string(t.input_shapes_id));  // recorded at launch, without a dump
    }
    b += ',';
    if (tensors != nullptr) {
      append_csv_field(b, tensors->types[role]);
    } else if (role == 0) {
      append_csv_field(b, reader_.string(t.input_dtypes_id));
    }
  }
  b += ',';
  append_int(b, t.flops);
  b += ',';
  append_int(b, t.bytes);
  b += ',';
  append_int(b, t.overflow);
  b += '\n';
}

CsvFile CsvWriter::op_statistic() {
  // The rows are op_statistic.h's (Note [What op_statistic counts]); this only writes them.
  const std::vector<OpStatisticRow> rows = collector::op_statistic(reader_);
  export_util::OutputFile out(path_of("op_statistic.csv"));
  std::string& b = out.buffer();
  b += "Device_id,Model Name,OP Type,Core Type,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%)\n";
  for (const OpStatisticRow& r : rows) {
    append_int(b, r.device_id);
    b += ',';
    append_csv_field(b, model_name_);
    b += ',';
    append_csv_field(b, r.op_type);
    b += ',';
    b += task_type_name(r.task_type);
    b += ',';
    append_int(b, r.count);
    b += ',';
    append_us(b, r.total_ns);
    b += ',';
    export_util::append_fixed(b, r.avg_ns / 1000.0, 3);
    b += ',';
    append_us(b, r.min_ns);
    b += ',';
    append_us(b, r.max_ns);
    b += ',';
    export_util::append_fixed(b, r.ratio_pct, 2);
    b += '\n';
    out.maybe_flush();
  }
  out.commit();
  return {out.path(), static_cast<std::int64_t>(rows.size())};
}

CsvFile CsvWriter::api_statistic() {
  std::map<std::pair<std::int32_t, StringId>, Durations> groups;  // by level and name, as msprof's
  std::int64_t total = 0;
  reader_.for_each([&](const ApiRow& a) {
    const std::int64_t d = duration(a.start_ns, a.end_ns);
    groups[{a.level, a.name_id}].add(d);
    total = add_saturated(total, d);
  });
  std::vector<std::pair<std::pair<std::int32_t, StringId>, Durations>> rows(groups.begin(), groups.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  export_util::OutputFile out(path_of("api_statistic.csv"));
  std::string& b = out.buffer();
  b += "Level,API Name,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%)\n";
  for (const auto& [key, d] : rows) {
    append_csv_field(b, stored_name<ApiLevel>(key.first, "level"));
    b += ',';
    append_csv_field(b, reader_.string(key.second));
    append_durations(b, d, total);
    out.maybe_flush();
  }
  out.commit();
  return {out.path(), static_cast<std::int64_t>(rows.size())};
}

CsvFile CsvWriter::memory_record() {
  export_util::OutputFile out(path_of("memory_record.csv"));
  out.buffer() += "Timestamp(us),Device_id,Operation,Address,Size(bytes),Allocated(bytes),Reserved(bytes)\n";
  CsvFile file{out.path(), 0};
  reader_.for_each([&](const MemoryRow& r) {
    std::string& b = out.buffer();
    append_us(b, r.ts_ns);
    b += ',';
    append_int(b, r.device_id);
    b += ',';
    b += export_util::memory_op_name(r.op);
    char address[24];
    std::snprintf(address, sizeof address, ",0x%" PRIx64 ",", static_cast<std::uint64_t>(r.address));
    b += address;
    append_int(b, r.bytes);
    b += ',';
    append_int(b, r.allocated_bytes);
    b += ',';
    append_int(b, r.reserved_bytes);
    b += '\n';
    out.maybe_flush();
    ++file.rows;
  });
  out.commit();
  return file;
}

// msprobe's grad_summary columns (param_name, max, min, norm, shape), one file for every step, with
// the step, the mean, zeros, non-finite counts and the loss scale the gradient carried.
CsvFile CsvWriter::gradients() {
  export_util::OutputFile out(path_of("gradients.csv"));
  out.buffer() += "Step,Param Name,Numel,Norm,Max,Min,Mean,Zero Ratio,NaN Count,Inf Count,Loss Scale\n";
  CsvFile file{out.path(), 0};
  reader_.for_each([&](const GradientRow& g) {
    std::string& b = out.buffer();
    append_int(b, g.step);
    b += ',';
    append_csv_field(b, reader_.string(g.param_id));
    b += ',';
    append_int(b, g.numel);
    char numbers[160];
    std::snprintf(numbers, sizeof numbers, ",%.9g,%.9g,%.9g,%.9g,%.9g,", g.norm, g.max, g.min, g.mean, g.zero_ratio);
    b += numbers;
    append_int(b, g.nan_count);
    b += ',';
    append_int(b, g.inf_count);
    std::snprintf(numbers, sizeof numbers, ",%.9g\n", g.loss_scale);
    b += numbers;
    out.maybe_flush();
    ++file.rows;
  });
  out.commit();
  return file;
}

}  // namespace

CsvExportResult export_csv(const TraceReader& reader, const std::string& directory) {
  export_util::ensure_directory(directory);
  CsvWriter writer(reader, directory);
  CsvExportResult result;
  result.files.push_back(writer.op_summary());
  result.files.push_back(writer.op_statistic());
  result.files.push_back(writer.api_statistic());
  result.files.push_back(writer.memory_record());
  result.files.push_back(writer.gradients());
  return result;
}

}  // namespace npuscope::collector
