// kernel_details.csv (Ascend PyTorch Profiler) and op_summary_*.csv (msprof): one row per device
// kernel, with what a timeline's events lack (op type, the core that ran it, block dim, shapes,
// dtypes, formats and the PMU columns).
//
// Note [Kernel details join]
// A row and the timeline's Ascend Hardware event of the same kernel share (Stream ID, Task ID,
// Start Time): the start is written from the same number in both files (trace_view's
// "1736408883704643.212" is kernel_details' "1736408883704643.212\t"), and the task id repeats on a
// stream only after 65536 tasks, so the three together are exact. A start that differs (another
// exporter's rounding) is matched within 1 us on the same stream and task id. The table keeps 24
// bytes per row (the key and the row's byte offset) and reads a row again when its task is written,
// in start order, which is the file's order: memory stays a small fraction of the file's size while
// the timeline is read. The rows no event matched are written on their own: the collectives (HCCL,
// no stream) and, for an export without trace_view.json (older torch_npu), every kernel.
// The PMU metrics are the columns right of the last column the table knows (the set depends on
// aic_metrics: PipeUtilization, Memory, ...); they become TASK_PMU rows named as the db export's
// TASK_PMU_INFO names them (pmu_metric_name). Known columns it does not map (Model ID, OP State,
// Wait Time, Mix Block Dim, HF32 Eligible, Context ID, ...) are counted in UNMAPPED.
// msprof writes op_summary once per device, or cut in slices, and a PROF_* folder of several devices
// has several: the table is every file's rows (each row keeps its file and its Device_id, which the
// join compares with the event's device when both say one).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "csv_reader.h"
#include "import_sink.h"

namespace npuscope::importer {

// One row, as read by KernelTable::read(): views valid until the next read().
struct KernelFields {
  std::int64_t start_ns = 0, dur_ns = 0;
  std::int32_t stream = -1, task = -1;  // -1: N/A (a collective)
  std::int32_t device = -1;             // Device_id; -1 not said
  std::string_view name, type, core;    // core: Accelerator Core / Task Type
  std::optional<std::int64_t> block_dim, step;
  std::string_view input_shapes, input_dtypes, input_formats, output_shapes, output_dtypes, output_formats;
};

class KernelTable {
 public:
  // Indexes `paths` (one table, or several files of one). ImportError when a column the join needs
  // is missing (naming the file and the column).
  explicit KernelTable(const std::vector<std::string>& paths);

  std::size_t size() const { return rows_.size(); }
  // The files cut short (a last row cut off: the rows before it are indexed).
  std::vector<std::string> truncated() const;

  // The row of the kernel of `device` (-1: any) on `stream` with `task` starting at `start_ns`
  // (Note [Kernel details join]), or -1. A row is found once: find() marks it.
  std::int64_t find(std::int32_t device, std::int32_t stream, std::int32_t task, std::int64_t start_ns);
  bool found(std::size_t row) const { return found_[row]; }
  void take(std::size_t row) { found_[row] = true; }  // matched otherwise (a collective's)
  // The row is a collective's (Accelerator Core / Task Type HCCL, or an `hcom_` name).
  bool collective(std::size_t row) const { return rows_[row].collective; }
  std::int64_t start_of(std::size_t row) const { return rows_[row].start_ns; }
  // Row `row`'s fields.
  const KernelFields& read(std::size_t row);
  // Fills a task from the last read() row: op type, task type, block dim, shapes, dtypes, formats
  // (and name and times when `whole`: a task of this file alone); writes its TASK_PMU rows.
  void apply(collector::TaskRow& task, ImportSink& sink, bool whole);

  // The steps the rows name (Step Id) and the span of their kernels, in step order.
  const std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>>& steps() const { return steps_; }
  // The first row's Device_id, if the table has the column.
  std::optional<std::int64_t> device() const { return device_; }
  // Both aic_* and aiv_* PMU columns: the kernels ran on separate cube and vector cores.
  bool split_cores() const;
  // Counts in `sink` what the table did not map: its unused columns (a value per row each).
  void count_unmapped(ImportSink& sink) const;

 private:
  struct Row {
    std::int64_t start_ns;
    std::int32_t stream, task;
    std::int64_t offset;
    std::int32_t device;
    std::int16_t part;
    bool collective;
  };
  struct Columns {
    int step = -1, device = -1, stream = -1, task = -1, name = -1, type = -1, core = -1, start = -1, dur = -1,
        block_dim = -1, in_shapes = -1, in_dtypes = -1, in_formats = -1, out_shapes = -1, out_dtypes = -1,
        out_formats = -1;
  };
  struct Pmu {
    int column;
    std::string name;
    collector::StringId id = 0;
  };
  // One file of the table.
  struct Part {
    explicit Part(const std::string& path) : csv(path) {}
    CsvReader csv;
    Columns col;
    std::vector<Pmu> pmu;
    std::int64_t rows = 0, bad_rows = 0;  // bad: without a start time
  };
  void find_columns(Part& p);
  void index(std::int16_t part);

  std::vector<std::unique_ptr<Part>> parts_;
  Part* current_ = nullptr;  // the part of the last read() row
  std::vector<Row> rows_;    // in start order
  std::vector<bool> found_;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> steps_;
  std::optional<std::int64_t> device_;
  KernelFields fields_;
};

}  // namespace npuscope::importer
