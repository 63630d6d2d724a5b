// Advice: repeated chains of small vector ops worth fusing into one kernel.
//
// Note [Fusion chains]
// Every chain of 2-10 consecutive small vector ops on one stream (a run not broken by any other
// kernel) is a candidate, as msprof-analyze's advisor looks for them. A chain counts each time it
// occurs without overlapping its previous counted occurrence on that stream; chains seen at least 5
// times are reported, largest saving first (each time: the chain's time minus its longest op, what
// one fused kernel would take), skipping parts, extensions and rotations of chains already reported.
// That is up to 9 candidates per task, so the chains ending at each task are hashed backwards one op
// at a time and counted in an open-addressing table of 64-bit keys (a std::map keyed by the vector of
// op type ids cost an allocation and ~300 ns per task). The table stops taking new chains at
// kMaxChains distinct ones; a note then says that chains first seen later were not counted.
#include <algorithm>
#include <array>
#include <map>

#include "analyses.h"
#include "npuscope/analyzer/text_table.h"
#include "rules.h"

namespace npuscope::analyzer {

using analyzer::format_ns;
namespace {

constexpr std::int64_t kSmallOpNs = 20'000;  // a vector op this short is worth fusing
constexpr std::size_t kMinChain = 2, kMaxChain = 10;
constexpr std::int64_t kMinRepeats = 5;
constexpr std::size_t kMaxChains = std::size_t{1} << 20;

bool small_vector_op(const Task& t) { return is(t.task_type, TaskType::kAiVectorCore) && duration(t) < kSmallOpNs; }

struct Chain {
  std::uint64_t key = 0;  // 0: an empty slot
  std::int64_t saving_ns = 0;
  std::uint32_t repeats = 0;
  std::uint32_t len = 0;
  std::uint32_t stream = 0;       // where it was counted last, and...
  std::uint64_t next_free = 0;    // ...the stream position after that occurrence: the next may not overlap it
  std::uint64_t last_kernel = 0;  // data.kernels index of the last op of an occurrence: to name its ops
};

// Chains by key; linear probing in a power-of-two table kept at most half full.
class ChainTable {
 public:
  ChainTable() : slots_(1 << 12) {}

  // The chain of `key`, added if new; nullptr when it is new and the table is full.
  Chain* find_or_add(std::uint64_t key) {
    for (std::size_t i = key & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Chain& c = slots_[i];
      if (c.key == key) return &c;
      if (c.key != 0) continue;
      if (size_ >= kMaxChains) {
        full_ = true;
        return nullptr;
      }
      if (2 * (size_ + 1) > slots_.size()) {
        grow();
        return find_or_add(key);
      }
      ++size_;
      c.key = key;
      return &c;
    }
  }

  bool full() const { return full_; }
  const std::vector<Chain>& slots() const { return slots_; }

 private:
  void grow() {
    std::vector<Chain> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Chain& c : old) {
      if (c.key == 0) continue;
      std::size_t i = c.key & (slots_.size() - 1);
      while (slots_[i].key != 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = c;
    }
  }

  std::vector<Chain> slots_;
  std::size_t size_ = 0;
  bool full_ = false;
};

std::uint64_t mix(std::uint64_t h) {  // splitmix64's finalizer
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// One stream's position and its current run of small vector ops (the last kMaxChain of it).
struct StreamRun {
  std::uint64_t position = 0;  // kernels seen on the stream
  std::size_t len = 0;         // small vector ops ending the stream so far, at most kMaxChain
  std::array<std::int32_t, kMaxChain> types{};
  std::array<std::int64_t, kMaxChain> ns{};
};

// The op type ids of the chain `c`, in launch order.
std::vector<std::int64_t> chain_types(const TraceData& data, const Chain& c) {
  const Task& last = data.kernels[c.last_kernel];
  std::vector<std::int64_t> types;
  for (std::size_t i = c.last_kernel + 1; i-- > 0 && types.size() < c.len;) {
    const Task& t = data.kernels[i];
    if (t.device_id == last.device_id && t.stream_id == last.stream_id) types.push_back(t.op_type_id);
  }
  std::reverse(types.begin(), types.end());
  return types;
}

}  // namespace

void advise_fusion(const TraceData& data, int top, std::vector<Advice>& out, std::vector<std::string>& notes) {
  ChainTable table;
  std::map<std::pair<std::int32_t, std::int32_t>, std::uint32_t> stream_index;
  std::vector<StreamRun> streams;
  std::pair<std::int32_t, std::int32_t> last_key{0, 0};
  std::uint32_t s = 0;
  for (std::size_t k = 0; k < data.kernels.size(); ++k) {
    const Task& t = data.kernels[k];
    const std::pair<std::int32_t, std::int32_t> key{t.device_id, t.stream_id};
    if (streams.empty() || key != last_key) {
      const auto [it, added] = stream_index.try_emplace(key, static_cast<std::uint32_t>(streams.size()));
      if (added) streams.emplace_back();
      s = it->second;
      last_key = key;
    }
    StreamRun& run = streams[s];
    const std::uint64_t position = run.position++;
    if (!small_vector_op(t)) {
      run.len = 0;
      continue;
    }
    const std::size_t slot = position % kMaxChain;
    run.types[slot] = t.op_type_id;
    run.ns[slot] = duration(t);
    run.len = std::min(run.len + 1, kMaxChain);
    // The chains ending here, growing backwards: [position - len + 1, position].
    std::uint64_t h = 0;
    std::int64_t sum = 0, longest = 0;
    for (std::size_t len = 1; len <= run.len; ++len) {
      const std::size_t at = (position + 1 - len) % kMaxChain;
      h = mix(h ^ static_cast<std::uint32_t>(run.types[at]) ^ (static_cast<std::uint64_t>(len) << 40));
      sum = add_ns(sum, run.ns[at]);
      longest = std::max(longest, run.ns[at]);
      if (len < kMinChain) continue;
      Chain* c = table.find_or_add(h | 1);  // never 0, the empty key
      if (!c) continue;
      const std::uint64_t start = position + 1 - len;
      if (c->repeats > 0 && c->stream == s && start < c->next_free) continue;  // overlaps the last occurrence
      c->len = static_cast<std::uint32_t>(len);
      c->stream = s;
      c->next_free = position + 1;
      c->last_kernel = k;
      ++c->repeats;
      c->saving_ns = add_ns(c->saving_ns, sum - longest);
    }
  }
  if (table.full()) {
    notes.push_back("fusion: more than " + std::to_string(kMaxChains) +
                    " distinct chains of small vector ops; chains first seen after that were not counted");
  }

  std::vector<const Chain*> found;
  for (const Chain& c : table.slots()) {
    if (c.key != 0 && c.repeats >= kMinRepeats) found.push_back(&c);
  }
  std::sort(found.begin(), found.end(), [](const Chain* a, const Chain* b) {
    if (a->saving_ns != b->saving_ns) return a->saving_ns > b->saving_ns;
    if (a->len != b->len) return a->len > b->len;
    return a->key < b->key;  // a stable order for equal chains
  });
  std::vector<std::vector<std::int64_t>> reported;
  // A part of a reported chain, or a rotation of one (Add Mul vs Mul Add in one run) says nothing new.
  auto inside = [](const std::vector<std::int64_t>& part, const std::vector<std::int64_t>& whole) {
    std::vector<std::int64_t> twice = whole;
    twice.insert(twice.end(), whole.begin(), whole.end());
    return part.size() <= whole.size() &&
           std::search(twice.begin(), twice.end(), part.begin(), part.end()) != twice.end();
  };
  for (const Chain* c : found) {
    if (static_cast<int>(reported.size()) >= top) break;
    const std::vector<std::int64_t> types = chain_types(data, *c);
    if (std::any_of(reported.begin(), reported.end(),
                    [&](const auto& r) { return inside(types, r) || inside(r, types); })) {
      continue;  // a part (or an extension) of a chain already reported
    }
    reported.push_back(types);
    std::vector<std::string> names;
    for (std::int64_t id : types) names.push_back(data.str(id));
    Advice a;
    a.rule = "fusion";
    a.title = "fuse the chain " + join(names, " -> ") + " (" + std::to_string(c->repeats) + " times)";
    a.detail = std::to_string(types.size()) + " small vector ops launched back to back " + std::to_string(c->repeats) +
               " times; one fused kernel would save about " + format_ns(static_cast<double>(c->saving_ns)) +
               " of device time, and the host " + std::to_string(types.size() - 1) + " launches each time";
    a.action = "fuse them into one kernel (a fused op or graph mode) to pay one launch instead of " +
               std::to_string(types.size());
    a.ops = names;
    a.impact_ns = c->saving_ns;
    out.push_back(std::move(a));
  }
}

namespace {

void run_fusion(RuleContext& c) {
  std::vector<Advice> advice;
  std::vector<std::string> notes;
  advise_fusion(c.data, c.top, advice, notes);
  for (std::string& n : notes) c.note(std::move(n));
  add_advice(c, advice);
}

constexpr const TableSpec* kFusionTables[] = {&kAdviceTable};

}  // namespace

extern const Rule kFusionRule{"fusion", "repeated chains of small vector ops", run_fusion, kFusionTables};

}  // namespace npuscope::analyzer
