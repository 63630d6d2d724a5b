// See Note [Kernel details join] in kernel_table.h.
#include "kernel_table.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "ascend_names.h"
#include "npuscope/collector/time_math.h"
#include "tensor_lists.h"

namespace npuscope::importer {
namespace {

// Every column the table knows (mapped or not): the PMU metrics are the columns right of them.
constexpr std::array<std::string_view, 38> kKnownColumns{"Device_id",        "Device ID",
                                                         "Device Id",        "Step ID",
                                                         "Iteration ID",     "Stream Id",
                                                         "Step Id",          "Model ID",
                                                         "Model Name",       "Infer ID",
                                                         "Task ID",          "Task Id",
                                                         "Stream ID",        "Name",
                                                         "Op Name",          "Type",
                                                         "OP Type",          "OP State",
                                                         "Accelerator Core", "Task Type",
                                                         "Start Time(us)",   "Task Start Time(us)",
                                                         "Duration(us)",     "Task Duration(us)",
                                                         "Wait Time(us)",    "Task Wait Time(us)",
                                                         "Block Dim",        "Block Num",
                                                         "Mix Block Dim",    "Mix Block Num",
                                                         "HF32 Eligible",    "Input Shapes",
                                                         "Input Data Types", "Input Formats",
                                                         "Output Shapes",    "Output Data Types",
                                                         "Output Formats",   "Context ID"};

std::int32_t to_i32(std::optional<std::int64_t> v) {
  return v && *v >= INT32_MIN && *v <= INT32_MAX ? static_cast<std::int32_t>(*v) : -1;
}

}  // namespace

KernelTable::KernelTable(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    parts_.push_back(std::make_unique<Part>(path));
    find_columns(*parts_.back());
    if (parts_.size() > INT16_MAX) throw ImportError(path + ": more than 32767 files of one kernel table");
    index(static_cast<std::int16_t>(parts_.size() - 1));
  }
  const auto by_start = [](const Row& a, const Row& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(rows_.begin(), rows_.end(), by_start)) std::stable_sort(rows_.begin(), rows_.end(), by_start);
  found_.assign(rows_.size(), false);
}

void KernelTable::find_columns(Part& p) {
  CsvReader& csv = p.csv;
  Columns& col = p.col;
  col.name = csv.require({"Name", "Op Name"});
  col.start = csv.require({"Start Time(us)", "Task Start Time(us)"});
  col.dur = csv.require({"Duration(us)", "Task Duration(us)"});
  col.stream = csv.require({"Stream ID", "Stream Id"});
  col.task = csv.require({"Task ID", "Task Id"});
  col.type = csv.column({"Type", "OP Type"});
  col.core = csv.column({"Accelerator Core", "Task Type"});
  col.step = csv.column({"Step Id", "Step ID", "Iteration ID"});
  col.device = csv.column({"Device_id", "Device ID", "Device Id"});
  col.block_dim = csv.column({"Block Dim", "Block Num"});
  col.in_shapes = csv.column("Input Shapes");
  col.in_dtypes = csv.column("Input Data Types");
  col.in_formats = csv.column("Input Formats");
  col.out_shapes = csv.column("Output Shapes");
  col.out_dtypes = csv.column("Output Data Types");
  col.out_formats = csv.column("Output Formats");
  int last_known = -1;
  for (std::size_t i = 0; i < csv.columns(); ++i) {
    if (std::find(kKnownColumns.begin(), kKnownColumns.end(), csv.header(i)) != kKnownColumns.end()) {
      last_known = std::max(last_known, static_cast<int>(i));
    }
  }
  for (int i = last_known + 1; i < static_cast<int>(csv.columns()); ++i) {
    p.pmu.push_back({i, pmu_metric_name(csv.header(static_cast<std::size_t>(i))), 0});
    csv.use(i);
  }
}

void KernelTable::index(std::int16_t part) {
  Part& p = *parts_[static_cast<std::size_t>(part)];
  CsvReader& csv = p.csv;
  while (csv.next()) {
    const auto start = csv_time_ns(csv.field(p.col.start));
    if (!start) {
      ++p.bad_rows;
      continue;
    }
    ++p.rows;
    const std::int64_t dur = csv_time_ns(csv.field(p.col.dur)).value_or(0);
    const auto device = csv_int(csv.field(p.col.device));
    const bool collective = ascend_task_type(csv.field(p.col.core)) == TaskType::kCommunication ||
                            csv.field(p.col.name).starts_with("hcom_");
    rows_.push_back({*start, to_i32(csv_int(csv.field(p.col.stream))), to_i32(csv_int(csv.field(p.col.task))),
                     csv.offset(), to_i32(device), part, collective});
    if (const auto step = csv_int(csv.field(p.col.step))) {
      const std::int64_t end = collector::add_saturated(*start, dur);
      auto [it, added] = steps_.try_emplace(*step, *start, end);
      if (!added) {
        it->second.first = std::min(it->second.first, *start);
        it->second.second = std::max(it->second.second, end);
      }
    }
    if (!device_) device_ = device;
  }
}

std::vector<std::string> KernelTable::truncated() const {
  std::vector<std::string> out;
  for (const auto& p : parts_) {
    if (p->csv.truncated()) out.push_back(p->csv.path());
  }
  return out;
}

std::int64_t KernelTable::find(std::int32_t device, std::int32_t stream, std::int32_t task, std::int64_t start_ns) {
  constexpr std::int64_t kSlackNs = 1000;
  auto it = std::lower_bound(rows_.begin(), rows_.end(), start_ns - kSlackNs,
                             [](const Row& r, std::int64_t t) { return r.start_ns < t; });
  std::int64_t best = -1, best_gap = kSlackNs + 1;
  for (; it != rows_.end() && it->start_ns <= start_ns + kSlackNs; ++it) {
    const std::size_t i = static_cast<std::size_t>(it - rows_.begin());
    if (it->stream != stream || it->task != task || found_[i]) continue;
    if (device >= 0 && it->device >= 0 && it->device != device) continue;
    const std::int64_t gap = std::abs(it->start_ns - start_ns);
    if (gap < best_gap) best = static_cast<std::int64_t>(i), best_gap = gap;
  }
  if (best >= 0) found_[static_cast<std::size_t>(best)] = true;
  return best;
}

const KernelFields& KernelTable::read(std::size_t row) {
  const Row& r = rows_[row];
  current_ = parts_[static_cast<std::size_t>(r.part)].get();
  CsvReader& csv = current_->csv;
  const Columns& col = current_->col;
  csv.seek(r.offset);
  csv.next();
  KernelFields& f = fields_;
  f.start_ns = r.start_ns;
  f.dur_ns = csv_time_ns(csv.field(col.dur)).value_or(0);
  f.stream = r.stream;
  f.task = r.task;
  f.device = r.device;
  f.name = csv.field(col.name);
  f.type = csv.field(col.type);
  f.core = csv.field(col.core);
  f.block_dim = csv_int(csv.field(col.block_dim));
  f.step = csv_int(csv.field(col.step));
  f.input_shapes = csv.field(col.in_shapes);
  f.input_dtypes = csv.field(col.in_dtypes);
  f.input_formats = csv.field(col.in_formats);
  f.output_shapes = csv.field(col.out_shapes);
  f.output_dtypes = csv.field(col.out_dtypes);
  f.output_formats = csv.field(col.out_formats);
  return f;
}

void KernelTable::apply(collector::TaskRow& t, ImportSink& sink, bool whole) {
  const KernelFields& f = fields_;
  const auto shapes = [&](std::string_view v) { return csv_missing(v) ? 0 : sink.id(shape_list(v)); };
  const auto dtypes = [&](std::string_view v) { return csv_missing(v) ? 0 : sink.id(dtype_list(v)); };
  if (whole) {
    t.name_id = sink.id(f.name);
    t.start_ns = f.start_ns;
    t.end_ns = collector::add_saturated(f.start_ns, std::max<std::int64_t>(0, f.dur_ns));
    if (f.stream >= 0) t.stream_id = f.stream;
    if (f.device >= 0) t.device_id = f.device;
  }
  if (!csv_missing(f.type)) t.op_type_id = sink.id(f.type);
  if (!csv_missing(f.core)) t.task_type = static_cast<std::int32_t>(ascend_task_type(f.core));
  if (f.block_dim) t.block_dim = static_cast<std::int32_t>(*f.block_dim);
  t.input_shapes_id = shapes(f.input_shapes);
  t.input_dtypes_id = dtypes(f.input_dtypes);
  t.input_formats_id = shapes(f.input_formats);
  t.output_shapes_id = shapes(f.output_shapes);
  t.output_dtypes_id = dtypes(f.output_dtypes);
  t.output_formats_id = shapes(f.output_formats);
  if (current_ == nullptr) return;
  for (Pmu& p : current_->pmu) {
    const auto v = csv_double(current_->csv.field(p.column));
    if (!v) continue;
    if (p.id == 0) p.id = sink.id(p.name);
    sink.add(collector::TaskPmuRow{.task_id = t.task_id, .name_id = p.id, .value = *v});
  }
}

bool KernelTable::split_cores() const {
  const auto has = [&](std::string_view prefix) {
    return std::any_of(parts_.begin(), parts_.end(), [&](const auto& part) {
      return std::any_of(part->pmu.begin(), part->pmu.end(), [&](const Pmu& p) { return p.name.starts_with(prefix); });
    });
  };
  return has("aic_") && has("aiv_");
}

void KernelTable::count_unmapped(ImportSink& sink) const {
  for (const auto& p : parts_) {
    const std::int64_t rows = p->rows + p->bad_rows;
    for (const std::string& c : p->csv.unused_columns()) sink.unmapped(p->csv.path(), "column " + c, rows);
    if (p->bad_rows > 0) sink.unmapped(p->csv.path(), "row without a start time", p->bad_rows);
  }
}

}  // namespace npuscope::importer
