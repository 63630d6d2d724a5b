// Runs the rules the options ask for, in report order.
#include "npuscope/analyzer/analyze.h"

#include <algorithm>

#include "analyses.h"

namespace npuscope::analyzer {

const std::vector<std::string>& all_rules() {
  static const std::vector<std::string> rules = {
      "summary",  "op_statistics", "top_ops",         "idle",     "fallback",     "overflows",
      "memory",   "fusion",        "cube_alignment",  "block_dim", "synchronization", "small_memcpy",
      "dynamic_shapes"};
  return rules;
}

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

}  // namespace

Report analyze(const collector::TraceReader& trace, const AnalyzeOptions& options) {
  if (options.top < 1) throw AnalyzeError("--top must be at least 1, got " + std::to_string(options.top));
  Report r;
  r.rules = chosen_rules(options);
  const auto cancelled = [&] { return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed); };
  // A rule runs only if the analysis is still wanted: each takes up to a few seconds on 10M tasks.
  const auto on = [&](const char* rule) {
    if (cancelled()) throw AnalyzeCancelled();
    return std::find(r.rules.begin(), r.rules.end(), rule) != r.rules.end();
  };
  if (cancelled()) throw AnalyzeCancelled();
  const TraceData data(trace, options.cancel);
  r.summary = summarize(data);  // always: every format starts with it
  if (!r.summary.complete) {
    r.notes.push_back("the trace is incomplete (the program did not exit cleanly): it ends at its last commit");
  }
  for (const collector::StatValue& lost : r.summary.data_loss) {
    r.notes.push_back("data lost while recording, figures undercount: " + collector::describe(lost));
  }
  if (on("op_statistics")) r.op_statistics = op_statistics(data);
  if (on("top_ops")) {
    r.top_ops = top_ops(data, options.top);
    r.bounds = bound_shares(data);
  }
  if (on("idle")) r.idle = idle_time(data, options.top);
  if (on("fallback")) r.fallback_ops = fallback_ops(data);
  if (on("overflows")) r.overflows = overflows(data);
  if (on("memory")) r.memory = memory_usage(data, options.top);

  if (on("fusion")) advise_fusion(data, options.top, r.advice, r.notes);
  if (on("block_dim")) advise_block_dim(data, options.top, r.advice);
  if (on("synchronization")) advise_synchronization(data, r.advice);
  if (on("small_memcpy")) advise_small_memcpy(data, r.advice);
  if (on("cube_alignment") || on("dynamic_shapes")) {
    const TensorShapes shapes(data);
    if (!shapes.any()) {
      r.notes.push_back("cube_alignment and dynamic_shapes need tensor shapes: record with `npuscope run --dump stats`");
    }
    if (on("cube_alignment")) advise_cube_alignment(data, shapes, options.top, r.advice);
    if (on("dynamic_shapes")) advise_dynamic_shapes(data, shapes, options.top, r.advice);
  }
  std::stable_sort(r.advice.begin(), r.advice.end(),
                   [](const Advice& a, const Advice& b) { return a.impact_ns > b.impact_ns; });
  return r;
}

}  // namespace npuscope::analyzer
