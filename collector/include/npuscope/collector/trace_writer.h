// Writes a trace database (SQLite). Owned and called by one thread (the injection library's drain
// thread, or a test/bench); not thread-safe.
//
// Note [Trace durability]
// The file is created with META.status = 'incomplete' and journal_mode=WAL. Rows are inserted with
// prepared multi-row INSERTs inside one long transaction that is committed at least every
// `commit_interval` (checked on every add), so a workload killed with SIGKILL leaves a valid
// database holding everything up to the last commit. finalize() builds the indexes, writes the
// stats and sets META.status = 'complete'. A writer destroyed without finalize() commits what it
// has and leaves the trace marked incomplete.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_rows.h"
#include "npuscope/collector/trace_stats.h"

namespace npuscope::collector {

// What finalize() leaves in META.status.
enum class TraceStatus { kComplete, kIncomplete };

struct WriterOptions {
  bool overwrite = false;  // replace an existing file (else TraceError)
  std::chrono::milliseconds commit_interval{500};
  // false: no journal and no fsync, for a file rebuilt from a durable source (a spool): ~20 % faster,
  // and a crash leaves a file to throw away, so write it under a temporary name and rename it.
  bool durable = true;
  // Note [Ranked tables] in collector/src/schema.h: the time-ordered tables' rows are held in
  // memory and stored sorted by finalize(), which makes the trace ready sooner; for a writer whose
  // rows are all there before anyone reads the trace (a spool converted after the workload exited
  // or recovered). Up to ranked_bytes of rows per table; a table with more is stored clustered.
  bool ranked = false;
  std::size_t ranked_bytes = std::size_t{32} << 20;
  // What "now" is for commit_interval: the steady clock; a test passes a clock it moves itself.
  std::chrono::steady_clock::time_point (*clock)() = &std::chrono::steady_clock::now;
};

class TraceWriter {
 public:
  // Throws TraceError if the file exists (and !overwrite) or cannot be created.
  static std::unique_ptr<TraceWriter> create(const std::string& path, const WriterOptions& options = {});
  virtual ~TraceWriter() = default;

  // Content-deduplicated string ids (1, 2, ...), rows written to STRING_IDS as they appear.
  virtual StringId intern(std::string_view s) = 0;
  virtual void set_meta(std::string_view key, std::string_view value) = 0;

  // Rows of any table (Note [Trace rows] in trace_rows.h): add(rows) for a span or vector of rows,
  // add(row) for one.
  template <TraceRow Row>
  void add(std::span<const Row> rows) {
    add_rows(RowSpan(rows));
  }
  template <TraceRow Row>
  void add(const Row& row) {
    add_rows(RowSpan(std::span<const Row>(&row, 1)));
  }
  template <class Rows>
  requires TraceRow<std::ranges::range_value_t<Rows>> && std::ranges::contiguous_range<Rows>
  void add(const Rows& rows) { add(std::span<const std::ranges::range_value_t<Rows>>(rows)); }
  // Counters reported in META (key "stat.<name>"), e.g. dropped records. Later values replace.
  // Producers name a declared counter (Note [Trace stats]); the name form carries counters through
  // a spool as they were written.
  void set_stat(StatId id, std::int64_t value) { set_stat(stat_name(id), value); }
  virtual void set_stat(std::string_view name, std::int64_t value) = 0;

  virtual void commit() = 0;  // make everything so far durable now
  // Indexes, META.status = 'complete' (or 'incomplete': a replayed spool cut short); no adds after.
  virtual void finalize(TraceStatus status = TraceStatus::kComplete) = 0;

  virtual std::int64_t rows_written() const = 0;

 protected:
  template <class Row>
  using SpanOf = std::span<const Row>;
  using RowSpan = TraceRows::Each<std::variant, SpanOf>;  // the rows of one table
  virtual void add_rows(const RowSpan& rows) = 0;
};

}  // namespace npuscope::collector
