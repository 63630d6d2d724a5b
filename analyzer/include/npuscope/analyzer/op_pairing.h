// Pairing the ops of two runs, for every tool that does: `npuscope compare` (an NPU run with its
// golden run) and `npuscope diff` (a BASE profile with a NEW one). What counts as an op is Note
// [What is an op] in vocabulary.h; how a pair was found is the vocabulary's PairingStage.
//
// Note [Op pairing]
// The ops of two runs, the reference (golden, BASE) and the subject (NPU, NEW), are paired in
// stages, each on what the stages before it left. A tool runs the stages it needs, in this order:
//   1. name (PairingStage::kName): the same op name and call index (the n-th call of that name),
//      as msprobe pairs "the full name incl. the call index". A name map renames the ops of one
//      side first (ops renamed between the runs: compare --mapping, diff --op-name-map); a pair it
//      made is reported as kNameMap. Call indexes count from the first call of each name in the
//      compared range (rebase_call_indexes), so that step 3 of one run pairs with step 7 of the
//      other; over whole traces they are the trace's own.
//   2. type+shape: the same op type and input shapes (a renamed scope the map missed). Ops whose
//      input shapes were not recorded take no part: two of them would pair by type alone.
//   3. type+order: the same op type.
// Within a stage the k-th unpaired op of a key on one side pairs with the k-th on the other, both
// in execution order. What is left is reported on its side, never an error.
// Which stages each tool runs, and why:
//   - compare: 1, 2, 3 (kCompareStages in comparator/compare.h). Its two runs are the same
//     workload, so a leftover op still has its counterpart; shapes first so that two renamed ops
//     of one type but different shapes do not pair crosswise (their tensors could not be
//     compared), then type in order for the rest (renamed and reshaped, or no shapes recorded).
//   - diff: 1, 2 (kDiffStages in analyzer/diff.h). Its runs may be two versions of a model, or two
//     models: an op whose name and shapes both changed is a removed and an added op rather than a
//     pair of unrelated ops (two different models' MatMuls) that reads like a regression.
// Each stage sorts compact keys (16 bytes an op: a 64-bit key and the op's index) with a stable
// LSD radix sort and merges the two sides: a few linear passes, 10M ops a side in ~0.2 s, where
// msprof-analyze's LCS alignment is O(N*M) (its own warning: over 30 minutes past 5e9 cells). The
// keys are shared by both sides (KeySpace): each trace numbers its strings its own way
// (STRING_IDS), so SideKeys maps the few distinct ids of each side to one numbering once.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

// ---- name maps ----

// One side's op names -> the other side's, for ops renamed between the runs. YAML or JSON (a YAML
// subset), either a map
//     layer0/attn/MatMul: encoder.0.attention.matmul
// or a list of pairs
//     - {npu: layer0/attn/MatMul, golden: encoder.0.attention.matmul}
// whose keys each tool names (NameMapKeys: compare's npu/golden, diff's base/new).
using NameMap = std::map<std::string, std::string>;

struct NameMapKeys {
  const char* from;
  const char* to;
  const char* to_alias;  // also accepted for `to` (compare's "bench"); nullptr: none
};

// A name map file that cannot be read or is not a map: the message names the file, the item and
// its line, and the keys expected.
class NameMapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

NameMap load_name_map(const std::string& path, const NameMapKeys& keys);

// ---- keys ----

// One numbering of the strings of both sides (names, types, shapes, API names). Key 0 is "".
class KeySpace {
 public:
  std::int32_t key(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, static_cast<std::int32_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::string& str(std::int32_t key) const { return strings_[static_cast<std::size_t>(key)]; }

 private:
  std::unordered_map<std::string, std::int32_t> ids_{{"", 0}};
  std::vector<std::string> strings_{""};
};

// Two 32-bit keys (shared keys, a call index) as one sortable, hashable 64-bit key.
inline std::uint64_t pack_keys(std::int32_t high, std::int32_t low) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(high)) << 32 | static_cast<std::uint32_t>(low);
}

// What the pairing reads of an op; a tool's op row holds it as its member `keys`.
struct PairingKeys {
  std::int32_t name = 0, type = 0;  // keys (names after the name map)
  std::int32_t shapes = 0;          // the input shapes' key; 0: not recorded
  std::int32_t call = 0;            // TASK.call_index (rebase_call_indexes: from the range's first call)
  std::int8_t renamed = 0;          // the name map renamed it
};

// One side's string ids -> shared keys, each distinct id looked up once (a trace has few strings);
// names through the name map, when the side has one.
class SideKeys {
 public:
  SideKeys(const collector::TraceReader& trace, KeySpace& keys, const NameMap* name_map = nullptr)
      : trace_(trace), keys_(keys), name_map_(name_map) {}

  // String ids past int32 (a damaged trace) read as 0, the empty string (collector::compact_string_id).
  std::int32_t key(collector::StringId id);  // types, shapes, API names
  // An op's keys from its TASK columns (call_index as it is).
  PairingKeys op_keys(collector::StringId name_id, collector::StringId type_id, collector::StringId shapes_id,
                      std::int32_t call);
  // Name key -> the names the map renamed to it ("a, b"): what the other side called the op.
  const std::unordered_map<std::int32_t, std::string>& renamed_from() const { return renamed_from_; }

 private:
  const collector::TraceReader& trace_;
  KeySpace& keys_;
  const NameMap* name_map_;
  std::vector<std::int32_t> key_of_id_;   // -1: not seen yet
  std::vector<std::int32_t> name_of_id_;  // through the name map; -1: not seen yet
  std::vector<std::int8_t> renamed_;      // by name id
  std::unordered_map<std::int32_t, std::string> renamed_from_;
};

// Call indexes counted from the first call of each name among `ops` (a step of a run). Op holds
// `PairingKeys keys` whose names are small non-negative ints (string ids or keys).
template <class Op>
void rebase_call_indexes(std::vector<Op>& ops) {
  std::vector<std::int32_t> first_call;
  for (const Op& op : ops) {
    const auto name = static_cast<std::size_t>(op.keys.name);
    if (name >= first_call.size()) first_call.resize(name + 1, std::numeric_limits<std::int32_t>::max());
    first_call[name] = std::min(first_call[name], op.keys.call);
  }
  for (Op& op : ops) {  // in 64 bits: a damaged trace's negative call index must not overflow
    const std::int64_t call = std::int64_t{op.keys.call} - first_call[static_cast<std::size_t>(op.keys.name)];
    op.keys.call = static_cast<std::int32_t>(std::min<std::int64_t>(call, std::numeric_limits<std::int32_t>::max()));
  }
}

// ---- pairing ----

struct OpPair {
  std::uint32_t reference = 0, subject = 0;  // indexes into the two sides' ops
  PairingStage how = PairingStage::kName;
};

struct OpPairing {
  std::vector<OpPair> pairs;                  // in the subject's execution order
  std::vector<std::uint32_t> subject_only;    // subject ops with no counterpart, in execution order
  std::vector<std::uint32_t> reference_only;  // reference ops with no counterpart, in execution order
};

namespace pairing_detail {

struct SortKey {
  std::uint64_t key = 0;
  std::uint32_t op = 0;     // its index: ties stay in execution order
  std::int8_t renamed = 0;  // in the padding: 16 bytes
};
static_assert(sizeof(SortKey) == 16);

// Whether an op takes part in a stage, and its key there.
bool takes_part(const PairingKeys& k, PairingStage stage);
std::uint64_t stage_key(const PairingKeys& k, PairingStage stage);
void radix_sort(std::vector<SortKey>& v);

// Which ops are paired so far, and how.
class Pairer {
 public:
  Pairer(std::size_t reference, std::size_t subject);
  // The unpaired ops of a side that take part in `stage`, sorted by their key (ties in execution order).
  template <class Op>
  std::vector<SortKey> unpaired(const std::vector<Op>& ops, bool subject, PairingStage stage) const {
    const std::vector<std::uint32_t>& partner = subject ? subject_partner_ : reference_partner_;
    std::vector<SortKey> out;
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      if (partner[i] == kNone && takes_part(ops[i].keys, stage))
        out.push_back({stage_key(ops[i].keys, stage), i, ops[i].keys.renamed});
    }
    radix_sort(out);
    return out;
  }
  // Pairs equal keys of the two sorted lists in order.
  void pair(const std::vector<SortKey>& reference, const std::vector<SortKey>& subject, PairingStage stage);
  OpPairing result() const;

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> reference_partner_, subject_partner_;
  std::vector<PairingStage> how_;  // by subject op
};

}  // namespace pairing_detail

// Runs `stages` (Note [Op pairing]; kNameMap is how a kName pair through the name map is reported,
// not a stage to run). Op holds `PairingKeys keys`, its keys shared with the other side's.
template <class Op>
OpPairing pair_ops(const std::vector<Op>& reference, const std::vector<Op>& subject,
                   std::span<const PairingStage> stages) {
  pairing_detail::Pairer pairer(reference.size(), subject.size());
  for (const PairingStage stage : stages) {
    // The sides one after the other: the radix sort's buffer is held once.
    const auto r = pairer.unpaired(reference, false, stage);
    const auto s = pairer.unpaired(subject, true, stage);
    pairer.pair(r, s, stage);
  }
  return pairer.result();
}

}  // namespace npuscope::analyzer
