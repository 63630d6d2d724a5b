// The CSV form: one file per table, header row first, times in ns (msprof's op_statistic columns
// for op_statistic.csv, in us as msprof writes them).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "npuscope/analyzer/format.h"
#include "npuscope/collector/csv.h"

namespace npuscope::analyzer {
namespace {

class CsvFile {
 public:
  CsvFile(const std::filesystem::path& path, const std::vector<std::string>& header) : path_(path), out_(path) {
    if (!out_) throw std::runtime_error("cannot write " + path.string());
    row(header);
  }
  ~CsvFile() noexcept(false) {
    out_.flush();
    if (!out_ && std::uncaught_exceptions() == 0) throw std::runtime_error("cannot write " + path_.string());
  }

  template <class... T>
  void operator()(const T&... cells) {
    std::vector<std::string> v;
    (v.push_back(text(cells)), ...);
    row(v);
  }

 private:
  template <class T>
  static std::string text(const T& v) {
    if constexpr (std::is_convertible_v<T, std::string>) {
      return std::string(v);
    } else {
      std::ostringstream o;
      o.precision(10);
      o << v;
      return o.str();
    }
  }
  void row(const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) line += ',';
      collector::append_csv_field(line, cells[i]);
    }
    out_ << line << '\n';
  }

  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace

void write_csv(const Report& r, const std::string& dir_name) {
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("cannot create the directory " + dir_name);
  {
    const Summary& s = r.summary;
    CsvFile f(dir / "summary.csv", {"Device_id", "Spec", "Tasks", "First(ns)", "Last(ns)", "Busy(ns)", "Busy(%)",
                                    "Complete", "Host API Calls", "Host API Time(ns)", "Dropped Records"});
    for (const DeviceUse& d : s.devices) {
      f(d.device_id, d.name, d.tasks, d.first_ns, d.last_ns, d.busy_ns, d.busy_pct, s.complete ? "yes" : "no",
        s.api_calls, s.host_api_ns, s.dropped_records);
    }
  }
  {
    CsvFile f(dir / "op_statistic.csv", {"OP Type", "Core Type", "Count", "Total Time(us)", "Avg Time(us)",
                                         "Min Time(us)", "Max Time(us)", "Ratio(%)"});
    for (const OpStat& s : r.op_statistics) {
      f(s.op_type, s.task_type, s.count, static_cast<double>(s.total_ns) / 1e3, s.avg_ns / 1e3,
        static_cast<double>(s.min_ns) / 1e3, static_cast<double>(s.max_ns) / 1e3, s.ratio_pct);
    }
  }
  {
    CsvFile f(dir / "top_ops.csv", {"Task ID", "Op Name", "OP Type", "Task Type", "Device_id", "Stream ID",
                                    "Start(ns)", "Duration(ns)", "Block Dim", "FLOPs", "Bytes", "Bound",
                                    "Achieved FLOP/s", "Achieved Bytes/s", "Compute(% of peak)", "Memory(% of peak)"});
    for (const TaskPerf& p : r.top_ops) {
      f(p.task_id, p.op_name, p.op_type, p.task_type, p.device_id, p.stream_id, p.start_ns, p.duration_ns, p.block_dim,
        p.flops, p.bytes, bound_name(p.bound), p.flops_per_s, p.bytes_per_s, p.compute_pct, p.memory_pct);
    }
  }
  {
    CsvFile f(dir / "idle.csv", {"Device_id", "Span(ns)", "Idle(ns)", "Host Wait(ns)", "Sync Wait(ns)", "Other(ns)", "Gaps"});
    for (const DeviceIdle& d : r.idle.devices) {
      f(d.device_id, d.span_ns, d.idle_ns, d.host_wait_ns, d.sync_wait_ns, d.other_ns, d.gaps);
    }
    CsvFile g(dir / "idle_gaps.csv", {"Device_id", "Start(ns)", "End(ns)", "Duration(ns)", "Kind", "Next Op",
                                      "Thread", "Host Activity"});
    for (const Gap& x : r.idle.longest) {
      g(x.device_id, x.start_ns, x.end_ns, x.end_ns - x.start_ns, gap_kind_name(x.kind), x.next_op, x.thread_id,
        x.host_activity);
    }
  }
  {
    CsvFile f(dir / "fallback_ops.csv", {"OP Type", "Fallback", "Count", "Total(ns)", "Avg(ns)", "Max(ns)", "Example Op Name"});
    for (const FallbackOp& x : r.fallback_ops) {
      f(x.op_type, x.fallback ? "yes" : "no", x.count, x.total_ns, x.avg_ns, x.max_ns, x.example_op_name);
    }
  }
  {
    CsvFile f(dir / "overflows.csv", {"Order", "Task ID", "Op Name", "OP Type", "Device_id", "Start(ns)", "Origin"});
    for (std::size_t i = 0; i < r.overflows.items.size(); ++i) {
      const OverflowTask& t = r.overflows.items[i];
      const bool origin = r.overflows.origin && r.overflows.origin->task.task_id == t.task_id;
      f(i + 1, t.task_id, t.op_name, t.op_type, t.device_id, t.start_ns, origin ? r.overflows.origin->method : "");
    }
  }
  {
    CsvFile f(dir / "memory.csv", {"Device_id", "Peak Allocated(B)", "Peak Allocated At(ns)", "Peak Reserved(B)",
                                   "Peak Reserved At(ns)", "Fragmentation At Peak", "Allocations", "Leaked Count",
                                   "Leaked(B)"});
    CsvFile g(dir / "leaks.csv", {"Device_id", "Address", "Bytes", "Allocated At(ns)"});
    for (const DeviceMemory& d : r.memory.devices) {
      f(d.device_id, d.peak_allocated_bytes, d.peak_allocated_ns, d.peak_reserved_bytes, d.peak_reserved_ns,
        d.fragmentation_at_peak, d.allocations, d.leaked_count, d.leaked_bytes);
      for (const Leak& l : d.largest_leaks) g(d.device_id, l.address, l.bytes, l.ts_ns);
    }
  }
  {
    CsvFile f(dir / "advice.csv", {"Rule", "Title", "Detail", "Action", "Ops", "Impact(ns)"});
    for (const Advice& a : r.advice) {
      std::string ops;
      for (const std::string& o : a.ops) ops += (ops.empty() ? "" : ";") + o;
      f(a.rule, a.title, a.detail, a.action, ops, a.impact_ns);
    }
  }
}

}  // namespace npuscope::analyzer
