// The stages of Note [Op pairing]: each sorts the ops still unpaired by a key (ties in execution
// order) and pairs equal keys in order, the k-th reference op of a key with the k-th subject one.
#include "npuscope/analyzer/op_pairing.h"

#include <algorithm>
#include <utility>

namespace npuscope::analyzer {

std::int32_t SideKeys::key(collector::StringId string_id) {
  const std::int32_t compact = collector::compact_string_id(string_id);
  const auto i = static_cast<std::size_t>(compact);
  if (i >= key_of_id_.size()) key_of_id_.resize(i + 1, -1);
  if (key_of_id_[i] < 0) key_of_id_[i] = keys_.key(trace_.string(compact));
  return key_of_id_[i];
}

PairingKeys SideKeys::op_keys(collector::StringId name_id, collector::StringId type_id, collector::StringId shapes_id,
                              std::int32_t call) {
  const std::int32_t compact = collector::compact_string_id(name_id);
  const auto id = static_cast<std::size_t>(compact);
  if (id >= name_of_id_.size()) name_of_id_.resize(id + 1, -1), renamed_.resize(id + 1, 0);
  if (name_of_id_[id] < 0) {
    const std::string& name = trace_.string(compact);
    const auto mapped = name_map_ != nullptr ? name_map_->find(name) : NameMap::const_iterator{};
    if (name_map_ != nullptr && mapped != name_map_->end()) {
      name_of_id_[id] = keys_.key(mapped->second);
      renamed_[id] = 1;
      std::string& from = renamed_from_[name_of_id_[id]];
      from += (from.empty() ? "" : ", ") + name;
    } else {
      name_of_id_[id] = keys_.key(name);
    }
  }
  return {name_of_id_[id], key(type_id), key(shapes_id), call, renamed_[id]};
}

namespace pairing_detail {

bool takes_part(const PairingKeys& k, PairingStage stage) { return stage != PairingStage::kTypeShape || k.shapes != 0; }

std::uint64_t stage_key(const PairingKeys& k, PairingStage stage) {
  switch (stage) {
    case PairingStage::kName:
    case PairingStage::kNameMap: return pack_keys(k.name, k.call);
    case PairingStage::kTypeShape: return pack_keys(k.type, k.shapes);
    case PairingStage::kTypeOrder: return pack_keys(k.type, 0);
  }
  return 0;
}

// Sorts by key, ties in the order given (the op index: execution order): a stable LSD radix sort on
// 16-bit digits that skips the digits every key shares (a name key and a call index rarely pass
// 2^16, so two passes of the four usually do). 10M keys: ~0.2 s where std::sort took ~1.8 s.
void radix_sort(std::vector<SortKey>& v) {
  std::vector<SortKey> tmp(v.size());
  for (int shift = 0; shift < 64; shift += 16) {
    std::vector<std::size_t> offset(1 << 16, 0);
    for (const SortKey& e : v) ++offset[(e.key >> shift) & 0xffff];
    if (std::find(offset.begin(), offset.end(), v.size()) != offset.end()) continue;  // one digit for all
    std::size_t sum = 0;
    for (std::size_t& o : offset) sum += std::exchange(o, sum);
    for (const SortKey& e : v) tmp[offset[(e.key >> shift) & 0xffff]++] = e;
    v.swap(tmp);
  }
}

Pairer::Pairer(std::size_t reference, std::size_t subject)
    : reference_partner_(reference, kNone), subject_partner_(subject, kNone), how_(subject) {}

void Pairer::pair(const std::vector<SortKey>& r, const std::vector<SortKey>& s, PairingStage stage) {
  std::size_t i = 0, j = 0;
  while (i < r.size() && j < s.size()) {
    if (r[i].key < s[j].key) {
      ++i;
    } else if (s[j].key < r[i].key) {
      ++j;
    } else {
      reference_partner_[r[i].op] = s[j].op;
      subject_partner_[s[j].op] = r[i].op;
      const bool renamed = r[i].renamed != 0 || s[j].renamed != 0;
      how_[s[j].op] = stage == PairingStage::kName && renamed ? PairingStage::kNameMap : stage;
      ++i, ++j;
    }
  }
}

OpPairing Pairer::result() const {
  OpPairing out;
  for (std::uint32_t j = 0; j < subject_partner_.size(); ++j) {
    if (subject_partner_[j] == kNone) {
      out.subject_only.push_back(j);
    } else {
      out.pairs.push_back({subject_partner_[j], j, how_[j]});
    }
  }
  for (std::uint32_t i = 0; i < reference_partner_.size(); ++i) {
    if (reference_partner_[i] == kNone) out.reference_only.push_back(i);
  }
  return out;
}

}  // namespace pairing_detail

}  // namespace npuscope::analyzer
