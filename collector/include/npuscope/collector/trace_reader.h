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

class TraceReader {
 public:
  // Opens read-only. Throws TraceError: missing file, not SQLite, not an npuscope trace (no META
  // with a schema_version), a schema newer than this build reads, or corruption found on open.
  static std::unique_ptr<TraceReader> open(const std::string& path);
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
};

}  // namespace npuscope::collector
