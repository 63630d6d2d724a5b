// diff(): reads both traces at once (one thread each), maps their strings to shared keys, pairs the
// ops (op_pairing.h) and fills the tables (diff_report.cpp).
#include "npuscope/analyzer/diff.h"

#include <algorithm>
#include <future>

#include <unordered_map>

#include "diff_model_error.h"
#include "diff_report.h"
#include "diff_side.h"
#include "npuscope/runtime_hooks/cann_op_types.h"

namespace npuscope::analyzer {
namespace {

// Tallies by the trace's string id -> by shared key.
std::vector<Tally> tallies_by_key(const std::vector<Tally>& by_id, SideKeys& key) {
  std::vector<Tally> out;
  for (std::size_t id = 0; id < by_id.size(); ++id) {
    if (by_id[id].count == 0) continue;
    const auto k = static_cast<std::size_t>(key.key(static_cast<std::int32_t>(id)));
    if (k >= out.size()) out.resize(k + 1);
    out[k] = by_id[id];
  }
  return out;
}

// How the two runs' ops are keyed: as any two traces, across hardware (Note [Diff across hardware]),
// or an emulated run against a real one (Note [Diff emulated vs real] in diff_model_error.h).
enum class Keying { kSame, kAcrossHardware, kEmulatedVsReal };

// The type an op is paired by (Note [Diff emulated vs real]): an emulated op's CANN op type (its own
// name when the table has none), a real op's CANN type through the table both ways, so that CANN's
// aliases of one emulator op (MatMulV2 and V3, Fill and OnesLike) are one type, named by its first row.
std::string pairing_type(std::string_view type, bool emulated) {
  const std::string_view emulator_op = emulated ? type : emulator_op_of(type);
  const std::string_view cann = emulator_op.empty() ? std::string_view{} : cann_op_of(emulator_op);
  return std::string(cann.empty() ? type : cann);
}

// Note [Diff emulated vs real]: an op's type becomes its pairing_type; every op's shapes key the
// element count of its first output (key 0, no part in the pairing, when not recorded);
// output_shapes_of becomes the output shapes' shared keys, for the model-error table.
void emulated_vs_real_keys(DiffSide& side, SideKeys& key, KeySpace& keys) {
  const bool emulated = side.source.empty();
  std::unordered_map<std::int32_t, std::int32_t> cann_of, pairing_of;  // by key
  const auto cached = [](std::unordered_map<std::int32_t, std::int32_t>& m, std::int32_t k, auto make) {
    const auto [it, added] = m.try_emplace(k, 0);
    if (added) it->second = make();
    return it->second;
  };
  for (std::size_t i = 0; i < side.ops.size(); ++i) {
    DiffOp& op = side.ops[i];
    op.keys.type =
        cached(cann_of, op.keys.type, [&] { return keys.key(pairing_type(keys.str(op.keys.type), emulated)); });
    const std::int32_t id = side.output_shapes_of[i];
    const std::int32_t shapes = id != 0 ? key.key(id) : 0;
    side.output_shapes_of[i] = shapes;
    op.keys.shapes = id == 0 ? 0 : cached(pairing_of, shapes, [&] {
      const std::string k = output_pairing_key(keys.str(shapes));
      return k.empty() ? 0 : keys.key(k);
    });
  }
}

// Note [Diff memory]: the ops' names, types and shapes become shared keys, BASE's names through
// the name map (Note [Op pairing]); so do the API names.
// Note [Diff across hardware]
// A GPU's kernels and an NPU's tasks share no name and no op type (sm90_xmma_gemm_* and MatMulV2),
// so a diff of a GPU profile against an NPU one pairs them as msprof-analyze's compare pairs a GPU
// and an NPU profile: by the framework op that launched them (aten::addmm) and its input shapes.
// When one side has GPU kernels and the other NPU tasks, each op launched by a framework op takes
// that op's name as its type and that op's input shapes as its shapes (type+shape, Note [Op
// pairing]); the k-th kernel of an aten op call pairs with the k-th on the other side, and an op
// that launched more kernels on one side leaves the rest added or removed. Two GPU traces (a
// Kineto import's op type is already the aten op) and two NPU traces pair as any two traces.
constexpr std::string_view kAcrossHardwareNote =
    "one run is a GPU's and the other an NPU's: their ops are paired by the framework op that launched them and "
    "its input shapes (type+shape), as msprof-analyze's compare pairs them";

void ids_to_keys(DiffSide& side, SideKeys& key, KeySpace& keys, Keying keying) {
  const bool framework = keying == Keying::kAcrossHardware && side.framework_op_of.size() == side.ops.size();
  for (std::size_t i = 0; i < side.ops.size(); ++i) {
    DiffOp& op = side.ops[i];
    if (framework && side.framework_op_of[i].first != 0) {
      op.keys.type = side.framework_op_of[i].first;
      op.keys.shapes = side.framework_op_of[i].second;
    }
    op.keys = key.op_keys(op.keys.name, op.keys.type, op.keys.shapes, op.keys.call);
  }
  if (keying == Keying::kEmulatedVsReal) emulated_vs_real_keys(side, key, keys);
  side.framework_op_of = {};
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

const DiffPair* DiffResult::pair_of_new(std::int64_t task_id) const {
  const auto it = std::lower_bound(pairs.begin(), pairs.end(), task_id,
                                   [](const DiffPair& p, std::int64_t id) { return p.new_task_id < id; });
  return it != pairs.end() && it->new_task_id == task_id ? &*it : nullptr;
}

DiffResult diff(const collector::TraceReader& base, const collector::TraceReader& next, const DiffOptions& options) {
  check_options(options);
  // Both at once: reading is most of a diff, and the two traces are independent. One run emulated
  // and the other imported may be an emulated-vs-real diff: read the ops' output shapes.
  const auto source = [](const collector::TraceReader& t) { return t.meta(std::string(collector::kMetaSource)); };
  const bool one_emulated = source(base).value_or("").empty() != source(next).value_or("").empty();
  auto loading_base = std::async(std::launch::async,
                                 [&] { return load_diff_side(base, options.base_step, options.cancel, one_emulated); });
  DiffSide n = load_diff_side(next, options.new_step, options.cancel, one_emulated);
  DiffSide b = loading_base.get();
  KeySpace keys;
  SideKeys base_keys(base, keys, &options.op_name_map), new_keys(next, keys);
  Keying keying = Keying::kSame;
  if ((b.gpu && !b.npu && n.npu && !n.gpu) || (n.gpu && !n.npu && b.npu && !b.gpu)) {
    keying = Keying::kAcrossHardware;
  } else if (one_emulated && b.npu && n.npu && !b.gpu && !n.gpu) {
    keying = Keying::kEmulatedVsReal;
  }
  ids_to_keys(b, base_keys, keys, keying);
  ids_to_keys(n, new_keys, keys, keying);
  // Note [Diff emulated vs real]: type+shape only (a name the two share, "trans_TransData_3", need
  // not count the same conversions).
  constexpr PairingStage kTypeShapeOnly[] = {PairingStage::kTypeShape};
  const OpPairing pairing =
      keying == Keying::kEmulatedVsReal ? pair_ops(b.ops, n.ops, kTypeShapeOnly) : pair_ops(b.ops, n.ops, kDiffStages);
  DiffResult result;
  result.report = diff_report({b, n, pairing, keys, base_keys.renamed_from(), keying == Keying::kEmulatedVsReal});
  if (keying == Keying::kAcrossHardware) result.report.notes.emplace_back(kAcrossHardwareNote);
  if (options.top > 0) keep_top_rows(result.report, static_cast<std::size_t>(options.top));
  if (options.keep_pairs) {
    result.pairs.reserve(pairing.pairs.size());
    for (const OpPair& m : pairing.pairs) {
      const DiffOp& bo = b.ops[m.reference];
      const DiffOp& no = n.ops[m.subject];
      result.pairs.push_back({no.task_id, bo.task_id, no.dur_ns, bo.dur_ns, m.how});
    }
    std::sort(result.pairs.begin(), result.pairs.end(),
              [](const DiffPair& x, const DiffPair& y) { return x.new_task_id < y.new_task_id; });
  }
  return result;
}

}  // namespace npuscope::analyzer
