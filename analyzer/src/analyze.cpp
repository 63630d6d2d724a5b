// Runs the rules the options ask for, in report order, into their finding tables.
#include "npuscope/analyzer/analyze.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

std::vector<std::string> chosen_rules(const AnalyzeOptions& options) {
  if (options.rules.empty()) return all_rules();
  for (const std::string& r : options.rules) {
    if (std::find(all_rules().begin(), all_rules().end(), r) == all_rules().end()) {
      std::string known;
      for (const std::string& k : all_rules()) known += (known.empty() ? "" : ", ") + k;
      throw AnalyzeError("unknown rule '" + r + "': the rules are " + known);
    }
  }
  return options.rules;
}

// Advice tables: most time at stake first (Note [Finding tables]).
void sort_by_impact(Table& t) {
  const int column = t.spec->column_index(t.spec->impact_column);
  if (column < 0) return;
  const auto impact = [column](const Row& r) {
    const auto* v = std::get_if<std::int64_t>(&r[static_cast<std::size_t>(column)]);
    return v ? *v : 0;
  };
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const Row& a, const Row& b) { return impact(a) > impact(b); });
}

}  // namespace

// Note [Rules in parallel]
// Once the trace is read, the rules are independent readers of it: each runs on its own context
// (its tables, notes and what it left out), on as many threads as the machine has (up to 4), and
// the outputs are merged in report order, so the report is the same whatever thread ran what. Two
// rules writing one table (the advice table) append in report order; a table a rule drops on an
// imported trace is its own. The tensor shapes two rules read are read once (SharedShapes), and
// the note both would make about their absence is kept once. A rule that throws fails the
// analysis as it did in order: the first in report order wins.
namespace {

struct RuleRun {
  const Rule* rule = nullptr;
  std::vector<Table> tables;
  std::vector<std::string> notes, left_out;
  std::vector<const TableSpec*> dropped;
  std::exception_ptr failed;
};

void run_rules(const TraceData& data, const AnalyzeOptions& options, std::vector<RuleRun>& runs) {
  SharedShapes shapes(data);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      RuleRun& run = runs[i];
      try {
        // A rule runs only if the analysis is still wanted: each takes up to a few seconds on 10M tasks.
        if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) throw AnalyzeCancelled();
        RuleContext context(data, options.top, run.tables, run.notes, shapes);
        for (const TableSpec* spec : run.rule->tables) context.table(*spec);  // reported even when empty
        run.rule->run(context);
        run.left_out = context.left_out();
        run.dropped = context.dropped();
      } catch (...) {
        run.failed = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>({std::max(1U, std::thread::hardware_concurrency()), 4, runs.size()});
  std::vector<std::jthread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  helpers.clear();  // joins
  for (const RuleRun& run : runs) {
    if (run.failed) std::rethrow_exception(run.failed);
  }
}

}  // namespace

Report analyze(const collector::TraceReader& trace, const AnalyzeOptions& options) {
  if (options.top < 1) throw AnalyzeError("--top must be at least 1, got " + std::to_string(options.top));
  Report r;
  r.rules = chosen_rules(options);
  const auto cancelled = [&] { return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed); };
  if (cancelled()) throw AnalyzeCancelled();
  const TraceData data(trace, options.cancel);
  std::string skipped;  // Note [Emulated-only rules]
  std::vector<RuleRun> runs;
  for (const Rule* rule : registered_rules()) {
    if (!rule->always && std::find(r.rules.begin(), r.rules.end(), rule->name) == r.rules.end()) continue;
    if (data.imported() && !rule->emulated_only.empty()) {
      skipped += std::string(skipped.empty() ? "" : "; ") + std::string(rule->name) + " (" +
                 std::string(rule->emulated_only) + ")";
      continue;
    }
    runs.push_back({.rule = rule});
  }
  run_rules(data, options, runs);
  std::vector<const TableSpec*> dropped;
  for (RuleRun& run : runs) {
    for (Table& t : run.tables) {
      const auto same =
          std::find_if(r.tables.begin(), r.tables.end(), [&](const Table& m) { return m.spec == t.spec; });
      if (same == r.tables.end()) {
        r.tables.push_back(std::move(t));
      } else {
        for (Row& row : t.rows) same->rows.push_back(std::move(row));
      }
    }
    for (std::string& note : run.notes) {
      if (std::find(r.notes.begin(), r.notes.end(), note) == r.notes.end()) r.notes.push_back(std::move(note));
    }
    for (const std::string& part : run.left_out) skipped += (skipped.empty() ? "" : "; ") + part;
    dropped.insert(dropped.end(), run.dropped.begin(), run.dropped.end());
  }
  std::erase_if(r.tables,
                [&](const Table& t) { return std::find(dropped.begin(), dropped.end(), t.spec) != dropped.end(); });
  if (!skipped.empty()) {
    r.notes.push_back("not run on this trace imported from " + data.source +
                      ", as they need what only the emulator records: " + skipped);
  }
  for (Table& t : r.tables) sort_by_impact(t);
  return r;
}

}  // namespace npuscope::analyzer
