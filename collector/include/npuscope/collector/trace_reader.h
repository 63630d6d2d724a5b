// Reads a trace database: the typed API every tool uses (analyzer, comparator, exports, viewer).
// Tools never write SQL of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector {

// Device-task totals in one query (what `npuscope run` prints).
struct TaskSummary {
  std::int64_t tasks = 0;       // TASK rows
  std::int64_t overflows = 0;   // rows with overflow = 1
  std::int64_t first_start_ns = 0, last_end_ns = 0;
};

struct ReaderOptions {
  // PRAGMA quick_check on open: finds damage early, but reads the whole file (~0.1 s per 20 MB).
  // Skip it only for a trace this process saw written to the end.
  bool verify = true;
};

class TraceReader {
 public:
  // Opens read-only. Throws TraceError: missing file, not SQLite, not an npuscope trace (no META
  // with a schema_version), a schema newer than this build reads, or corruption found on open.
  static std::unique_ptr<TraceReader> open(const std::string& path, const ReaderOptions& options = {});
  virtual ~TraceReader() = default;

  virtual const std::string& path() const = 0;
  virtual std::optional<std::string> meta(const std::string& key) const = 0;
  virtual bool complete() const = 0;  // META.status == 'complete'
  virtual int schema_version() const = 0;
  // "" for id 0 or an unknown id.
  virtual const std::string& string(StringId id) const = 0;
  virtual std::vector<StatRow> stats() const = 0;
  virtual std::vector<DeviceInfoRow> devices() const = 0;

  // Rows in start-time order (tensors: by task, role, index). The callbacks stream large traces
  // without holding them; the vector forms are for small ones.
  virtual void for_each_task(const std::function<void(const TaskRow&)>& f) const = 0;
  virtual void for_each_api(const std::function<void(const ApiRow&)>& f) const = 0;
  virtual void for_each_memory(const std::function<void(const MemoryRow&)>& f) const = 0;
  virtual void for_each_memcpy(const std::function<void(const MemcpyRow&)>& f) const = 0;
  virtual void for_each_marker(const std::function<void(const MarkerRow&)>& f) const = 0;
  // with_data: also load (and decompress) dumped tensor bytes into TensorRow::data.
  virtual void for_each_tensor(bool with_data, const std::function<void(const TensorRow&)>& f) const = 0;

  std::vector<TaskRow> tasks() const;
  std::vector<ApiRow> apis() const;
  std::vector<MemoryRow> memory() const;
  std::vector<MemcpyRow> memcpys() const;
  std::vector<MarkerRow> markers() const;
  std::vector<TensorRow> tensors(bool with_data) const;

  virtual std::int64_t count(const std::string& table) const = 0;  // rows in a table (TaskRow: "TASK")
  virtual TaskSummary task_summary() const = 0;
};

}  // namespace npuscope::collector
