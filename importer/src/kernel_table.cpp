// See Note [Kernel details join] in kernel_table.h.
#include "kernel_table.h"

#include <algorithm>
#include <array>

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

KernelTable::KernelTable(const std::string& path) : csv_(path) {
  find_columns();
  index();
}

void KernelTable::find_columns() {
  col_.name = csv_.require({"Name", "Op Name"});
  col_.start = csv_.require({"Start Time(us)", "Task Start Time(us)"});
  col_.dur = csv_.require({"Duration(us)", "Task Duration(us)"});
  col_.stream = csv_.require({"Stream ID", "Stream Id"});
  col_.task = csv_.require({"Task ID", "Task Id"});
  col_.type = csv_.column({"Type", "OP Type"});
  col_.core = csv_.column({"Accelerator Core", "Task Type"});
  col_.step = csv_.column({"Step Id", "Step ID", "Iteration ID"});
  col_.device = csv_.column({"Device_id", "Device ID", "Device Id"});
  col_.block_dim = csv_.column({"Block Dim", "Block Num"});
  col_.in_shapes = csv_.column("Input Shapes");
  col_.in_dtypes = csv_.column("Input Data Types");
  col_.in_formats = csv_.column("Input Formats");
  col_.out_shapes = csv_.column("Output Shapes");
  col_.out_dtypes = csv_.column("Output Data Types");
  col_.out_formats = csv_.column("Output Formats");
  int last_known = -1;
  for (std::size_t i = 0; i < csv_.columns(); ++i) {
    if (std::find(kKnownColumns.begin(), kKnownColumns.end(), csv_.header(i)) != kKnownColumns.end()) {
      last_known = std::max(last_known, static_cast<int>(i));
    }
  }
  for (int i = last_known + 1; i < static_cast<int>(csv_.columns()); ++i) {
    pmu_.push_back({i, pmu_metric_name(csv_.header(static_cast<std::size_t>(i))), 0});
    csv_.use(i);
  }
}

void KernelTable::index() {
  bool sorted = true;
  while (csv_.next()) {
    const auto start = csv_time_ns(csv_.field(col_.start));
    if (!start) {
      ++bad_rows_;
      continue;
    }
    const std::int64_t dur = csv_time_ns(csv_.field(col_.dur)).value_or(0);
    if (!rows_.empty() && *start < rows_.back().start_ns) sorted = false;
    rows_.push_back(
        {*start, to_i32(csv_int(csv_.field(col_.stream))), to_i32(csv_int(csv_.field(col_.task))), csv_.offset()});
    if (const auto step = csv_int(csv_.field(col_.step))) {
      const std::int64_t end = collector::add_saturated(*start, dur);
      auto [it, added] = steps_.try_emplace(*step, *start, end);
      if (!added) {
        it->second.first = std::min(it->second.first, *start);
        it->second.second = std::max(it->second.second, end);
      }
    }
    if (!device_) device_ = csv_int(csv_.field(col_.device));
  }
  truncated_ = csv_.truncated();
  if (!sorted) {
    std::stable_sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) { return a.start_ns < b.start_ns; });
  }
  found_.assign(rows_.size(), false);
}

std::int64_t KernelTable::find(std::int32_t stream, std::int32_t task, std::int64_t start_ns) {
  constexpr std::int64_t kSlackNs = 1000;
  auto it = std::lower_bound(rows_.begin(), rows_.end(), start_ns - kSlackNs,
                             [](const Row& r, std::int64_t t) { return r.start_ns < t; });
  std::int64_t best = -1, best_gap = kSlackNs + 1;
  for (; it != rows_.end() && it->start_ns <= start_ns + kSlackNs; ++it) {
    const std::size_t i = static_cast<std::size_t>(it - rows_.begin());
    if (it->stream != stream || it->task != task || found_[i]) continue;
    const std::int64_t gap = std::abs(it->start_ns - start_ns);
    if (gap < best_gap) best = static_cast<std::int64_t>(i), best_gap = gap;
  }
  if (best >= 0) found_[static_cast<std::size_t>(best)] = true;
  return best;
}

const KernelFields& KernelTable::read(std::size_t row) {
  csv_.seek(rows_[row].offset);
  csv_.next();
  KernelFields& f = fields_;
  f.start_ns = rows_[row].start_ns;
  f.dur_ns = csv_time_ns(csv_.field(col_.dur)).value_or(0);
  f.stream = rows_[row].stream;
  f.task = rows_[row].task;
  f.name = csv_.field(col_.name);
  f.type = csv_.field(col_.type);
  f.core = csv_.field(col_.core);
  f.block_dim = csv_int(csv_.field(col_.block_dim));
  f.step = csv_int(csv_.field(col_.step));
  f.device = csv_int(csv_.field(col_.device));
  f.input_shapes = csv_.field(col_.in_shapes);
  f.input_dtypes = csv_.field(col_.in_dtypes);
  f.input_formats = csv_.field(col_.in_formats);
  f.output_shapes = csv_.field(col_.out_shapes);
  f.output_dtypes = csv_.field(col_.out_dtypes);
  f.output_formats = csv_.field(col_.out_formats);
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
  for (Pmu& p : pmu_) {
    const auto v = csv_double(csv_.field(p.column));
    if (!v) continue;
    if (p.id == 0) p.id = sink.id(p.name);
    sink.add(collector::TaskPmuRow{.task_id = t.task_id, .name_id = p.id, .value = *v});
  }
}

bool KernelTable::split_cores() const {
  const auto has = [&](std::string_view prefix) {
    return std::any_of(pmu_.begin(), pmu_.end(), [&](const Pmu& p) { return p.name.starts_with(prefix); });
  };
  return has("aic_") && has("aiv_");
}

void KernelTable::count_unmapped(ImportSink& sink) const {
  const std::int64_t rows = static_cast<std::int64_t>(rows_.size()) + bad_rows_;
  for (const std::string& c : csv_.unused_columns()) sink.unmapped(csv_.path(), "column " + c, rows);
  if (bad_rows_ > 0) sink.unmapped(csv_.path(), "row without a start time", bad_rows_);
}

}  // namespace npuscope::importer
