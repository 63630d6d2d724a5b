// Runs the rules the options ask for, in report order, into their finding tables.
#include "npuscope/analyzer/analyze.h"

#include <algorithm>

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

Report analyze(const collector::TraceReader& trace, const AnalyzeOptions& options) {
  if (options.top < 1) throw AnalyzeError("--top must be at least 1, got " + std::to_string(options.top));
  Report r;
  r.rules = chosen_rules(options);
  const auto cancelled = [&] { return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed); };
  if (cancelled()) throw AnalyzeCancelled();
  const TraceData data(trace, options.cancel);
  RuleContext context(data, options.top, r.tables, r.notes);
  std::string skipped;  // Note [Emulated-only rules]
  for (const Rule* rule : registered_rules()) {
    if (!rule->always && std::find(r.rules.begin(), r.rules.end(), rule->name) == r.rules.end()) continue;
    if (data.imported() && !rule->emulated_only.empty()) {
      skipped += std::string(skipped.empty() ? "" : "; ") + std::string(rule->name) + " (" +
                 std::string(rule->emulated_only) + ")";
      continue;
    }
    // A rule runs only if the analysis is still wanted: each takes up to a few seconds on 10M tasks.
    if (cancelled()) throw AnalyzeCancelled();
    for (const TableSpec* spec : rule->tables) context.table(*spec);  // reported even when empty
    rule->run(context);
  }
  for (const std::string& part : context.left_out()) skipped += (skipped.empty() ? "" : "; ") + part;
  if (!skipped.empty()) {
    r.notes.push_back("not run on this trace imported from " + data.source +
                      ", as they need what only the emulator records: " + skipped);
  }
  for (Table& t : r.tables) sort_by_impact(t);
  return r;
}

}  // namespace npuscope::analyzer
