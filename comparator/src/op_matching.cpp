#include "op_matching.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>

namespace npuscope::comparator {
namespace {

// PYTORCH_API.id -> the op's pass name (Note [Model pass of an op]); empty without PYTORCH_API.
std::unordered_map<std::int64_t, std::string> passes_of(const collector::TraceReader& trace) {
  std::unordered_map<std::int64_t, std::string> passes;
  trace.for_each([&](const collector::PytorchApiRow& op) {
    passes.emplace(op.id, collector::stored_name<ModelPass>(op.pass, "pass"));
  });
  return passes;
}

}  // namespace

std::vector<OpInfo> load_ops(const collector::TraceReader& trace) {
  const std::unordered_map<std::int64_t, std::string> passes = passes_of(trace);
  std::vector<OpInfo> ops;
  trace.for_each([&](const collector::TaskRow& t) {
    if (!is_op(t.task_type)) return;
    OpInfo op{t.task_id,    t.start_ns,     trace.string(t.name_id), trace.string(t.op_type_id),
              t.call_index, t.overflow != 0};
    if (const auto it = passes.find(t.pytorch_api_id); t.pytorch_api_id != 0 && it != passes.end())
      op.pass = it->second;
    op.underflow = t.underflow;
    ops.push_back(std::move(op));
  });
  return ops;
}

Matching match_ops(const std::vector<OpInfo>& npu, const std::vector<OpInfo>& golden,
                   const std::map<std::string, std::string>& mapping) {
  std::map<std::pair<std::string, std::int32_t>, std::size_t> golden_by_name;
  for (std::size_t g = 0; g < golden.size(); ++g)
    golden_by_name.emplace(std::pair{golden[g].name, golden[g].call_index}, g);

  Matching m;
  std::vector<bool> golden_taken(golden.size(), false);
  std::vector<std::size_t> npu_left;
  std::vector<std::optional<OpPair>> pair_of(npu.size());
  for (std::size_t n = 0; n < npu.size(); ++n) {
    const auto renamed = mapping.find(npu[n].name);
    const bool mapped = renamed != mapping.end();
    const auto it = golden_by_name.find({mapped ? renamed->second : npu[n].name, npu[n].call_index});
    if (it != golden_by_name.end() && !golden_taken[it->second]) {
      golden_taken[it->second] = true;
      pair_of[n] = OpPair{n, it->second, mapped ? MatchKind::kMapping : MatchKind::kName};
    } else {
      npu_left.push_back(n);
    }
  }
  // The leftovers, in execution order by op type.
  std::map<std::string, std::deque<std::size_t>> golden_left_by_type;
  for (std::size_t g = 0; g < golden.size(); ++g) {
    if (!golden_taken[g]) golden_left_by_type[golden[g].type].push_back(g);
  }
  for (const std::size_t n : npu_left) {
    auto& queue = golden_left_by_type[npu[n].type];
    if (queue.empty()) {
      m.unmatched_npu.push_back(n);
      continue;
    }
    golden_taken[queue.front()] = true;
    pair_of[n] = OpPair{n, queue.front(), MatchKind::kOrder};
    queue.pop_front();
  }
  for (const auto& p : pair_of) {
    if (p) m.pairs.push_back(*p);
  }
  for (std::size_t g = 0; g < golden.size(); ++g) {
    if (!golden_taken[g]) m.unmatched_golden.push_back(g);
  }
  return m;
}

}  // namespace npuscope::comparator
