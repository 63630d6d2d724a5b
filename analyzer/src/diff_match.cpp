// The stages of Note [Diff op matching]: each sorts the ops still unpaired by a key (ties in
// execution order) and pairs equal keys in order, the k-th BASE op of a key with the k-th NEW one.
#include "diff_match.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace npuscope::analyzer {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Entry {
  std::uint64_t key = 0;
  std::uint32_t op = 0;  // its index: ties stay in execution order
};

// Sorts by key, ties in the order given (the op index: execution order): a stable LSD radix sort on
// 16-bit digits that skips the digits every key shares (a name key and a call index rarely pass
// 2^16, so two passes of the four usually do). 10M keys: ~0.2 s where std::sort took ~1.8 s.
void radix_sort(std::vector<Entry>& v) {
  std::vector<Entry> tmp(v.size());
  for (int shift = 0; shift < 64; shift += 16) {
    std::vector<std::size_t> offset(1 << 16, 0);
    for (const Entry& e : v) ++offset[(e.key >> shift) & 0xffff];
    if (std::find(offset.begin(), offset.end(), v.size()) != offset.end()) continue;  // one digit for all
    std::size_t sum = 0;
    for (std::size_t& o : offset) sum += std::exchange(o, sum);
    for (const Entry& e : v) tmp[offset[(e.key >> shift) & 0xffff]++] = e;
    v.swap(tmp);
  }
}

template <class Key>
std::vector<Entry> unpaired_by(const std::vector<DiffOp>& ops, const std::vector<std::uint32_t>& partner, Key key) {
  std::vector<Entry> out;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    if (partner[i] == kNone) out.push_back({key(ops[i]), i});
  }
  radix_sort(out);
  return out;
}

struct State {
  State(const std::vector<DiffOp>& b, const std::vector<DiffOp>& n)
      : base(b), next(n), base_partner(b.size(), kNone), next_partner(n.size(), kNone), how(n.size()) {}

  const std::vector<DiffOp>& base;
  const std::vector<DiffOp>& next;
  std::vector<std::uint32_t> base_partner, next_partner;
  std::vector<DiffMatch> how;  // by NEW op

  // One stage. The sides one after the other: the radix sort's buffer is held once (Note [Diff memory]).
  template <class Key>
  void pair_by(Key key, DiffMatch kind) {
    const std::vector<Entry> b = unpaired_by(base, base_partner, key);
    const std::vector<Entry> n = unpaired_by(next, next_partner, key);
    std::size_t i = 0, j = 0;
    while (i < b.size() && j < n.size()) {
      if (b[i].key < n[j].key) {
        ++i;
      } else if (n[j].key < b[i].key) {
        ++j;
      } else {
        base_partner[b[i].op] = n[j].op;
        next_partner[n[j].op] = b[i].op;
        how[n[j].op] = kind == DiffMatch::kName && base[b[i].op].renamed != 0 ? DiffMatch::kNameMap : kind;
        ++i, ++j;
      }
    }
  }
};

}  // namespace

Matching match_diff_ops(const std::vector<DiffOp>& base, const std::vector<DiffOp>& next) {
  State s(base, next);
  s.pair_by([](const DiffOp& op) { return pack_keys(op.name, op.call); }, DiffMatch::kName);
  s.pair_by([](const DiffOp& op) { return pack_keys(op.type, op.shapes); }, DiffMatch::kTypeShape);
  Matching m;
  for (std::uint32_t j = 0; j < next.size(); ++j) {
    if (s.next_partner[j] == kNone) {
      m.added.push_back(j);
    } else {
      m.pairs.push_back({s.next_partner[j], j, s.how[j]});
    }
  }
  for (std::uint32_t i = 0; i < base.size(); ++i) {
    if (s.base_partner[i] == kNone) m.removed.push_back(i);
  }
  return m;
}

}  // namespace npuscope::analyzer
