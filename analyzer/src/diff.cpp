// diff(): reads both traces at once (one thread each), maps their strings to shared keys, pairs the
// ops (diff_match.cpp) and fills the tables (diff_report.cpp).
#include "npuscope/analyzer/diff.h"

#include <algorithm>
#include <future>

#include "diff_keys.h"
#include "diff_match.h"
#include "diff_report.h"
#include "diff_side.h"

namespace npuscope::analyzer {
namespace {

// A side's string ids -> shared keys, each distinct id looked up once (a trace has few strings).
class IdToKey {
 public:
  IdToKey(const collector::TraceReader& trace, KeySpace& keys) : trace_(trace), keys_(keys) {}
  std::int32_t operator()(std::int32_t id) {
    const auto i = static_cast<std::size_t>(id);
    if (i >= keys_by_id_.size()) keys_by_id_.resize(i + 1, -1);
    if (keys_by_id_[i] < 0) keys_by_id_[i] = keys_.key(trace_.string(id));
    return keys_by_id_[i];
  }

 private:
  const collector::TraceReader& trace_;
  KeySpace& keys_;
  std::vector<std::int32_t> keys_by_id_;
};

// Tallies by the trace's string id -> by shared key.
std::vector<Tally> tallies_by_key(const std::vector<Tally>& by_id, IdToKey& key) {
  std::vector<Tally> out;
  for (std::size_t id = 0; id < by_id.size(); ++id) {
    if (by_id[id].count == 0) continue;
    const auto k = static_cast<std::size_t>(key(static_cast<std::int32_t>(id)));
    if (k >= out.size()) out.resize(k + 1);
    out[k] = by_id[id];
  }
  return out;
}

// Note [Diff memory]: the ops' names, types and shapes become shared keys; BASE's names through
// the name map first (`renamed_from` collects what it renamed).
void ids_to_keys(DiffSide& side, const collector::TraceReader& trace, KeySpace& keys,
                 const std::map<std::string, std::string>* name_map,
                 std::unordered_map<std::int32_t, std::string>* renamed_from) {
  IdToKey key(trace, keys);
  std::vector<std::int32_t> name_keys;  // by id; -1 not seen yet
  std::vector<std::int8_t> renamed;
  for (DiffOp& op : side.ops) {
    const auto id = static_cast<std::size_t>(op.name);
    if (id >= name_keys.size()) name_keys.resize(id + 1, -1), renamed.resize(id + 1, 0);
    if (name_keys[id] < 0) {
      const std::string& name = trace.string(op.name);
      const auto mapped =
          name_map != nullptr ? name_map->find(name) : std::map<std::string, std::string>::const_iterator{};
      if (name_map != nullptr && mapped != name_map->end()) {
        name_keys[id] = keys.key(mapped->second);
        renamed[id] = 1;
        std::string& from = (*renamed_from)[name_keys[id]];
        from += (from.empty() ? "" : ", ") + name;
      } else {
        name_keys[id] = keys.key(name);
      }
    }
    op.renamed = renamed[id];
    op.name = name_keys[id];
    op.type = key(op.type);
    op.shapes = key(op.shapes);
  }
  side.apis = tallies_by_key(side.apis, key);
  side.framework_ops = tallies_by_key(side.framework_ops, key);
}

void check_options(const DiffOptions& o) {
  if (o.base_step.has_value() != o.new_step.has_value()) {
    throw DiffError(
        "give a step of both runs (--base-step N --new-step M) or of neither: one step is compared "
        "with one step");
  }
  if (o.top < 0) throw DiffError("top must be 0 (all rows) or more, got " + std::to_string(o.top));
}

// The long tables keep their first `top` rows (those adding the most time); a note says what was cut.
void keep_top_rows(Report& r, std::size_t top) {
  for (Table& t : r.tables) {
    if (t.spec->section != Section::kDetail || t.rows.size() <= top) continue;
    r.notes.push_back(std::string(t.spec->name) + ": the " + std::to_string(top) + " rows adding the most time of " +
                      std::to_string(t.rows.size()) + " (--top N: more)");
    t.rows.resize(top);
  }
}

}  // namespace

std::string_view diff_match_name(DiffMatch m) {
  switch (m) {
    case DiffMatch::kName: return "name";
    case DiffMatch::kNameMap: return "name map";
    case DiffMatch::kTypeShape: return "type+shape";
  }
  return "?";
}

const DiffPair* DiffResult::pair_of_new(std::int64_t task_id) const {
  const auto it = std::lower_bound(pairs.begin(), pairs.end(), task_id,
                                   [](const DiffPair& p, std::int64_t id) { return p.new_task_id < id; });
  return it != pairs.end() && it->new_task_id == task_id ? &*it : nullptr;
}

DiffResult diff(const collector::TraceReader& base, const collector::TraceReader& next, const DiffOptions& options) {
  check_options(options);
  // Both at once: reading is most of a diff, and the two traces are independent.
  auto loading_base =
      std::async(std::launch::async, [&] { return load_diff_side(base, options.base_step, options.cancel); });
  DiffSide n = load_diff_side(next, options.new_step, options.cancel);
  DiffSide b = loading_base.get();
  KeySpace keys;
  std::unordered_map<std::int32_t, std::string> renamed_from;
  ids_to_keys(b, base, keys, &options.op_name_map, &renamed_from);
  ids_to_keys(n, next, keys, nullptr, nullptr);
  const Matching matching = match_diff_ops(b.ops, n.ops);
  DiffResult result;
  result.report = diff_report({b, n, matching, keys, renamed_from});
  if (options.top > 0) keep_top_rows(result.report, static_cast<std::size_t>(options.top));
  if (options.keep_pairs) {
    result.pairs.reserve(matching.pairs.size());
    for (const OpMatch& m : matching.pairs) {
      const DiffOp& bo = b.ops[m.base];
      const DiffOp& no = n.ops[m.next];
      result.pairs.push_back({no.task_id, bo.task_id, no.dur_ns, bo.dur_ns, m.how});
    }
    std::sort(result.pairs.begin(), result.pairs.end(),
              [](const DiffPair& x, const DiffPair& y) { return x.new_task_id < y.new_task_id; });
  }
  return result;
}

}  // namespace npuscope::analyzer
