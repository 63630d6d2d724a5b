// Note [Dump entry matching] (npuscope/comparator/compare_dumps.h): entries by name through the
// analyzer's pairing (Note [Op pairing]: one stage, the name), values by slot.
#include "dump_match.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "dump_values.h"

namespace npuscope::comparator {
namespace {

using collector::DumpEntry;
using collector::MsprobeDump;

constexpr std::string_view kForward = "forward", kBackward = "backward", kParamsGrad = "parameters_grad";

std::int32_t call_number(std::string_view call) {
  std::int32_t n = 0;
  const auto [end, ec] = std::from_chars(call.data(), call.data() + call.size(), n);
  return ec == std::errc() && end == call.data() + call.size() ? n : 0;
}

// MindSpore's prefixes as PyTorch's (msprobe's cell_mapping and internal api_mapping).
std::string cross_frame_name(const std::string& name) {
  static constexpr std::pair<std::string_view, std::string_view> kPrefixes[] = {
      {"Cell.", "Module."}, {"MintFunctional.", "Functional."}, {"Mint.", "Torch."}};
  for (const auto& [ms, pt] : kPrefixes) {
    if (name.starts_with(ms)) return std::string(pt) + name.substr(ms.size());
  }
  return name;
}

struct Item {
  analyzer::PairingKeys keys;
};

// One side's pairing keys: the name less its call index (and how it is written), and the call
// index; backward entries renumbered by their order (msprobe's update_backward_call) unless fuzzy.
std::vector<Item> side_keys(const MsprobeDump& dump, const analyzer::NameMap* mapping, bool fuzzy, bool cross_frame,
                            analyzer::KeySpace& keys) {
  std::vector<Item> items;
  items.reserve(dump.entries.size());
  std::unordered_map<std::int32_t, std::int32_t> backward_seen;
  std::string callless;
  for (const DumpEntry& e : dump.entries) {
    bool renamed = false;
    const std::string name = mapping != nullptr ? mapped_entry_name(e.name, *mapping, cross_frame, renamed) : e.name;
    const DumpName parts = split_dump_name(name);
    callless.assign(parts.base);
    callless += parts.call_first ? ".#." : ".";
    callless += pass_name(parts.pass);
    if (parts.pass == DumpName::Pass::kOther) callless = name;
    Item item;
    item.keys.name = keys.key(callless);
    item.keys.call = call_number(parts.call);
    item.keys.renamed = renamed ? 1 : 0;
    if (fuzzy) item.keys.call = 0;
    if (!fuzzy && parts.pass == DumpName::Pass::kBackward) item.keys.call = backward_seen[item.keys.name]++;
    items.push_back(item);
  }
  return items;
}

}  // namespace

DumpName split_dump_name(std::string_view name) {
  DumpName out;
  out.base = name;
  const std::size_t last_dot = name.rfind('.');
  if (last_dot == std::string_view::npos || last_dot == 0) return out;
  const std::size_t second_dot = name.rfind('.', last_dot - 1);
  const std::string_view last = name.substr(last_dot + 1);
  const std::string_view second = second_dot == std::string_view::npos
                                      ? name.substr(0, last_dot)
                                      : name.substr(second_dot + 1, last_dot - second_dot - 1);
  const std::size_t before_second = second_dot == std::string_view::npos ? 0 : second_dot;
  if (last == kParamsGrad) {
    out.base = name.substr(0, last_dot);
    out.pass = DumpName::Pass::kParamsGrad;
  } else if (second == kParamsGrad) {
    out.base = name.substr(0, before_second);
    out.call = last;
    out.pass = DumpName::Pass::kParamsGrad;
  } else if (last == kForward || last == kBackward) {
    out.base = name.substr(0, before_second);
    out.call = second;
    out.call_first = true;
    out.pass = last == kForward ? DumpName::Pass::kForward : DumpName::Pass::kBackward;
  } else if (second == kForward || second == kBackward) {
    out.base = name.substr(0, before_second);
    out.call = last;
    out.pass = second == kForward ? DumpName::Pass::kForward : DumpName::Pass::kBackward;
  }
  return out;
}

std::string_view pass_name(DumpName::Pass pass) {
  switch (pass) {
    case DumpName::Pass::kForward: return kForward;
    case DumpName::Pass::kBackward: return kBackward;
    case DumpName::Pass::kParamsGrad: return kParamsGrad;
    case DumpName::Pass::kOther: return "";
  }
  return "";
}

std::size_t value_name_split(std::string_view name) {
  for (std::size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    const DumpName parts = split_dump_name(name.substr(0, dot));
    const std::string_view slot = name.substr(dot + 1), first = slot.substr(0, slot.find('.'));
    if (parts.pass == DumpName::Pass::kOther || slot.empty()) continue;
    if (first.find_first_not_of("0123456789") == std::string_view::npos) continue;  // a module's call index
    if (parts.pass == DumpName::Pass::kParamsGrad || first == "input" || first == "output" || first == "parameters")
      return dot;
  }
  return 0;
}

std::string mapped_entry_name(const std::string& entry_name, const analyzer::NameMap& mapping, bool cross_frame,
                              bool& renamed) {
  renamed = false;
  const std::string name = cross_frame ? cross_frame_name(entry_name) : entry_name;
  if (mapping.empty()) return name;
  if (const auto it = mapping.find(name); it != mapping.end()) {
    renamed = true;
    return it->second;
  }
  const DumpName parts = split_dump_name(name);
  if (parts.pass == DumpName::Pass::kOther) return name;
  const std::string rest(name.substr(parts.base.size()));
  if (const auto it = mapping.find(std::string(parts.base)); it != mapping.end()) {
    renamed = true;
    return it->second + rest;
  }
  // msprobe's cell_mapping: the module's path and class without its Module. or Cell. prefix.
  const std::size_t dot = parts.base.find('.');
  if (dot != std::string_view::npos && (parts.base.starts_with("Module.") || parts.base.starts_with("Cell."))) {
    if (const auto it = mapping.find(std::string(parts.base.substr(dot + 1))); it != mapping.end()) {
      renamed = true;
      return std::string(parts.base.substr(0, dot + 1)) + it->second + rest;
    }
  }
  return name;
}

EntryPairing pair_dump_entries(const MsprobeDump& npu, const MsprobeDump& bench, const analyzer::NameMap& mapping,
                               bool fuzzy, bool cross_frame) {
  analyzer::KeySpace keys;
  const std::vector<Item> n = side_keys(npu, &mapping, fuzzy, cross_frame, keys);
  const std::vector<Item> b = side_keys(bench, nullptr, fuzzy, false, keys);
  constexpr PairingStage kStages[] = {PairingStage::kName};
  const analyzer::OpPairing pairing = analyzer::pair_ops(b, n, kStages);
  EntryPairing out;
  out.pairs.reserve(pairing.pairs.size());
  for (const analyzer::OpPair& p : pairing.pairs) {
    out.pairs.push_back({p.subject, p.reference, p.how == PairingStage::kNameMap});
  }
  out.npu_only = pairing.subject_only;
  out.bench_only = pairing.reference_only;
  return out;
}

void row_order(const DumpEntry& entry, std::vector<std::int32_t>& out) {
  out.clear();
  const auto take = [&](auto belongs) {
    for (std::size_t i = 0; i < entry.values.size(); ++i) {
      if (belongs(entry.values[i].slot)) out.push_back(static_cast<std::int32_t>(i));
    }
  };
  const auto input = [](std::string_view s) { return s.starts_with("input"); };
  const auto params = [](std::string_view s) { return s.starts_with("parameters.") || s == "parameters"; };
  take(input);
  take(params);
  take([](std::string_view s) { return output_slot(s); });
  take([&](std::string_view s) { return !input(s) && !params(s) && !output_slot(s); });
}

void pair_values(const DumpEntry& npu, const DumpEntry* bench, bool cross_frame, const SlotMap& slots,
                 ValuePairing& out) {
  row_order(npu, out.npu_order);
  out.bench_of.assign(out.npu_order.size(), -1);
  out.bench_only.clear();
  if (bench == nullptr) return;
  auto& by_slot = out.by_slot;
  by_slot.clear();
  for (std::size_t i = 0; i < bench->values.size(); ++i)
    by_slot.emplace_back(bench->values[i].slot, static_cast<std::int32_t>(i));
  std::sort(by_slot.begin(), by_slot.end());
  auto& taken = out.taken;
  taken.assign(bench->values.size(), 0);
  for (std::size_t k = 0; k < out.npu_order.size(); ++k) {
    const collector::DumpValue& n = npu.values[static_cast<std::size_t>(out.npu_order[k])];
    std::string_view slot = n.slot;
    if (!slots.pairs.empty() || slots.only_listed) {
      const auto mapped =
          std::find_if(slots.pairs.begin(), slots.pairs.end(), [&](const auto& p) { return p.first == slot; });
      if (mapped != slots.pairs.end()) {
        slot = mapped->second;
      } else if (slots.only_listed) {
        continue;  // api_mapping: a value its lists do not name pairs nothing
      }
    }
    const auto it =
        std::lower_bound(by_slot.begin(), by_slot.end(), std::pair<std::string_view, std::int32_t>(slot, -1));
    if (it == by_slot.end() || it->first != slot || taken[static_cast<std::size_t>(it->second)]) continue;
    const collector::DumpValue& b = bench->values[static_cast<std::size_t>(it->second)];
    const bool pairs =
        slots.any_dtype || (n.is_tensor && b.is_tensor ? dtypes_pair(n.dtype, b.dtype, cross_frame)
                                                       : dtypes_pair(msprobe_dtype(n), msprobe_dtype(b), cross_frame));
    if (!pairs) continue;
    out.bench_of[k] = it->second;
    taken[static_cast<std::size_t>(it->second)] = 1;
  }
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (!taken[i]) out.bench_only.push_back(static_cast<std::int32_t>(i));
  }
}

}  // namespace npuscope::comparator
