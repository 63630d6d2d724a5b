// Reads a trace database: the typed API every tool uses (analyzer, comparator, exports, viewer).
// Tools never write SQL of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_rows.h"
#include "npuscope/collector/trace_stats.h"

namespace npuscope::collector {

// Device-task totals in one query (what `npuscope run` prints).
struct TaskSummary {
  std::int64_t tasks = 0;      // TASK rows
  std::int64_t overflows = 0;  // rows with overflow = 1
  std::int64_t first_start_ns = 0, last_end_ns = 0;
};

struct ReaderOptions {
  // PRAGMA quick_check on open: finds damage early, but reads the whole file (~0.3 s per 1M tasks).
  // Without it a truncated file is still refused on open (from its header), and other damage gives
  // a TraceError ("corrupt trace") when a read reaches it: what a tool that reads everything anyway
  // (analyze) can rely on.
  bool verify = true;
  // Columns the caller does not need, as "TABLE.column" (e.g. "TASK.emulation_ns"): they are not
  // read and their members read as 0 or empty, each saving ~5 % of the time of reading a wide table
  // for a tool that reads millions of rows. TASK's kernel columns (name, type, costs: Note [Kernel
  // table] in collector/src/schema.h) cost nothing and are kept. An unknown name is a TraceError.
  std::vector<std::string> skip_columns;
};

// Which rows of a table to read (all by default). A filter names a column the table must have (else
// TraceError): task_id (TENSOR, PIPE_INSTRUCTION, OP_CHECK, ... through their task index), id
// (PYTORCH_API's primary key), a window of start_ns (TASK's index: what a timeline shows, or one part
// of a big trace read by several threads, each with its own reader), a window of task ids (the rows
// of many tasks at once from a table ordered by task_id: TASK_PMU, COMPARE_RESULT).
struct RowQuery {
  std::optional<std::int64_t> task_id;
  std::optional<std::pair<std::int64_t, std::int64_t>> task_ids;  // from <= task_id < to
  std::optional<std::int64_t> id;
  std::optional<std::pair<std::int64_t, std::int64_t>> starting;  // from_ns <= start_ns < to_ns
  bool with_data = false;  // TENSOR: also load (and decompress) the dumped bytes into TensorRow::data
};

namespace detail {
// The row type a callback takes: its one parameter, without const and &; none for other types.
template <class M>
struct ArgOf {};
template <class C, class R, class A>
struct ArgOf<R (C::*)(A) const> {
  using type = std::remove_cvref_t<A>;
};
template <class C, class R, class A>
struct ArgOf<R (C::*)(A)> {
  using type = std::remove_cvref_t<A>;
};
template <class F, class = void>
struct RowOf {};
template <class F>
struct RowOf<F, std::void_t<decltype(&std::remove_cvref_t<F>::operator())>>
    : ArgOf<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class F>
using row_of = typename RowOf<F>::type;
}  // namespace detail

// Thread safety: one reader may be shared by any number of threads, and a row callback may call the
// reader again (from its own or another thread): queries take turns on the reader's one connection
// under a lock held while rows are read, never while a callback runs.
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
  virtual std::vector<StatValue> stats() const = 0;

  // Streams the rows of a table (Note [Trace rows] in trace_rows.h) in its documented order (tasks
  // and most tables by start time, tensors by task, role, index), without holding them:
  //   reader.for_each([&](const TaskRow& t) { ... });            // the row type from the callback
  //   reader.for_each<TensorRow>(f, {.task_id = 7, .with_data = true});
  // The callback may modify the row it is given (move a tensor's data away): rows are the reader's
  // reused buffers. A table a trace predates is read as empty (Note [Older traces] in trace_reader.cpp).
  template <TraceRow Row>
  void for_each(const std::function<void(Row&)>& f, const RowQuery& query = {}) const {
    scan(RowCallback(&f), query);
  }
  template <class F>
  requires TraceRow<detail::row_of<F>>
  void for_each(F&& f, const RowQuery& query = {}) const {
    for_each<detail::row_of<F>>(std::function<void(detail::row_of<F>&)>(std::forward<F>(f)), query);
  }
  // The same rows in a vector: for small tables and tests.
  template <TraceRow Row>
  std::vector<Row> rows(const RowQuery& query = {}) const {
    std::vector<Row> out;
    for_each<Row>([&](Row& row) { out.push_back(std::move(row)); }, query);
    return out;
  }
  // The first row the query gives (a PYTORCH_API row by id), nullopt if none.
  template <TraceRow Row>
  std::optional<Row> first(const RowQuery& query) const {
    std::optional<Row> found;
    for_each<Row>(
        [&](Row& row) {
          if (!found) found = std::move(row);
        },
        query);
    return found;
  }

  virtual std::int64_t count(const std::string& table) const = 0;  // rows in a table (TaskRow: "TASK")
  virtual TaskSummary task_summary() const = 0;
  // The first and the last task start ({0, -1} without tasks), through the start_ns index: no scan.
  virtual std::pair<std::int64_t, std::int64_t> task_start_range() const = 0;

 protected:
  template <class Row>
  using CallbackOf = const std::function<void(Row&)>*;
  using RowCallback = TraceRows::Each<std::variant, CallbackOf>;  // the callback of one table's rows
  virtual void scan(const RowCallback& f, const RowQuery& query) const = 0;
};

}  // namespace npuscope::collector
