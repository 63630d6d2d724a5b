// What every importer writes through: the trace writer, with rows batched by table, the strings
// interned, task ids handed out, and what the source held that no table takes counted (UNMAPPED).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "npuscope/collector/trace_writer.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {

class ImportSink {
 public:
  ImportSink(collector::TraceWriter& out, const Source& source);
  ImportSink(const ImportSink&) = delete;
  ImportSink& operator=(const ImportSink&) = delete;

  collector::StringId id(std::string_view s) { return s.empty() ? 0 : out_.intern(s); }
  // Rows of any table, batched (Note [Trace rows]); tasks and host ops counted for the report.
  template <class Row>
  void add(Row&& row) {
    using R = std::remove_cvref_t<Row>;
    if constexpr (std::is_same_v<R, collector::TaskRow>) ++report_.tasks;
    if constexpr (std::is_same_v<R, collector::PytorchApiRow>) ++report_.host_ops;
    if constexpr (std::is_same_v<R, collector::ApiRow>) ++report_.api_calls;
    ++report_.rows;
    auto& batch = std::get<std::vector<R>>(batches_);
    batch.push_back(std::forward<Row>(row));
    if (batch.size() >= kBatchRows) flush(batch);
  }
  void meta(std::string_view key, std::string_view value) { out_.set_meta(key, value); }
  // `count` rows, events or values of `what`, found in `file`, that no table takes.
  void unmapped(std::string_view file, std::string_view what, std::int64_t count = 1);
  void note(std::string text) { report_.notes.push_back(std::move(text)); }
  void set_incomplete() { report_.incomplete = true; }
  std::int64_t next_task_id() { return ++last_task_id_; }
  // The call_index of the next task named `name` (the n-th of its name, from 0): tasks must be
  // added in start order (the diff pairs the n-th call of a name with the other run's n-th).
  std::int32_t next_call_index(collector::StringId name) {
    const auto i = static_cast<std::size_t>(std::max<collector::StringId>(0, name));
    if (i >= calls_.size()) calls_.resize(i + 1, 0);
    return calls_[i]++;
  }

  // Writes what is batched and the UNMAPPED rows; the report of the import.
  ImportReport finish();

 private:
  static constexpr std::size_t kBatchRows = 4096;
  template <class Row>
  void flush(std::vector<Row>& batch) {
    if (batch.empty()) return;
    out_.add(std::span<const Row>(batch));
    batch.clear();
  }

  collector::TraceWriter& out_;
  collector::TraceRows::Each<std::tuple, std::vector> batches_;
  // Looked up by string_views: counting in a parse loop allocates only for a new (file, what).
  struct PairLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, std::int64_t, PairLess> unmapped_;
  ImportReport report_;
  std::vector<std::int32_t> calls_;  // tasks so far by name id
  std::int64_t last_task_id_ = 0;
};

}  // namespace npuscope::importer
