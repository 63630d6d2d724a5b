// Note [Dump mapping files] (npuscope/comparator/dump_mapping.h).
#include "npuscope/comparator/dump_mapping.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string_view>

#include "dump_match.h"
#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {
namespace {

using analyzer::NameMapError;

constexpr const char* kApiKeys =
    "ms_api, pt_api, ms_args, pt_args, ms_outputs, pt_outputs, ms_parameters and pt_parameters";

std::string line_of(const YAML::Node& node) { return "line " + std::to_string(node.Mark().line + 1); }

// The slot lists of an api_mapping item: the value kind and its two keys.
struct SlotList {
  const char* kind;
  const char* ms;
  const char* pt;
};
constexpr SlotList kSlotLists[] = {{"input", "ms_args", "pt_args"},
                                   {"output", "ms_outputs", "pt_outputs"},
                                   {"parameters", "ms_parameters", "pt_parameters"}};

std::string scalar(const YAML::Node& node, const std::string& at, const char* key) {
  if (!node.IsScalar() || node.Scalar().empty())
    throw NameMapError(at + ": " + key + " must be an API name such as Functional.abs");
  return node.Scalar();
}

std::vector<std::string> index_list(const YAML::Node& node, const std::string& at, const char* key) {
  if (!node.IsSequence()) throw NameMapError(at + ": " + key + " must be a list of indexes (- 0, - 1, ...)");
  std::vector<std::string> out;
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty())
      throw NameMapError(at + ": " + key + " holds an item that is no index (" + line_of(item) + ")");
    out.push_back(item.Scalar());
  }
  return out;
}

// One {ms_api, pt_api, ms_args, pt_args, ...} item.
void add_api_item(const YAML::Node& item, const std::string& path, DumpMapping& out) {
  const std::string at = path + ": " + line_of(item);
  if (!item.IsMap()) throw NameMapError(at + ": an api_mapping item must be a map of " + kApiKeys);
  std::map<std::string, YAML::Node> keys;
  for (const auto& kv : item) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    bool known = key == "ms_api" || key == "pt_api";
    for (const SlotList& l : kSlotLists) known = known || key == l.ms || key == l.pt;
    if (!known)
      throw NameMapError(path + ": " + line_of(kv.first) + ": unknown key \"" + key + "\"; the keys are " + kApiKeys);
    keys.emplace(key, kv.second);
  }
  for (const char* key : {"ms_api", "pt_api"}) {
    if (!keys.count(key))
      throw NameMapError(at + ": no \"" + key + "\" key; an api_mapping item needs ms_api and pt_api");
  }
  const std::string ms_api = scalar(keys["ms_api"], at, "ms_api");
  ApiMapping api;
  api.bench_api = scalar(keys["pt_api"], at, "pt_api");
  for (const SlotList& l : kSlotLists) {
    const bool has_ms = keys.count(l.ms) != 0, has_pt = keys.count(l.pt) != 0;
    if (!has_ms && !has_pt) continue;
    const std::vector<std::string> ms = has_ms ? index_list(keys[l.ms], at, l.ms) : std::vector<std::string>{};
    const std::vector<std::string> pt = has_pt ? index_list(keys[l.pt], at, l.pt) : std::vector<std::string>{};
    if (ms.size() != pt.size()) {
      throw NameMapError(at + ": " + l.ms + " has " + std::to_string(ms.size()) + " items and " + l.pt + " " +
                         std::to_string(pt.size()) + "; they pair item by item");
    }
    for (std::size_t i = 0; i < ms.size(); ++i)
      api.slots.emplace_back(std::string(l.kind) + "." + ms[i], std::string(l.kind) + "." + pt[i]);
  }
  out.names.emplace(ms_api, api.bench_api);  // the entries' renaming: an API name line
  if (!out.apis.emplace(ms_api, std::move(api)).second)
    throw NameMapError(at + ": API '" + ms_api + "' is mapped twice; map each NPU API once");
}

bool is_api_item(const YAML::Node& node) {
  if (!node.IsMap()) return false;
  for (const auto& kv : node) {
    if (kv.first.IsScalar() && (kv.first.Scalar() == "ms_api" || kv.first.Scalar() == "pt_api")) return true;
  }
  return false;
}

// The line of the item that maps `from` in a map or npu/bench list (for errors found after reading).
std::string line_naming(const YAML::Node& root, const std::string& from) {
  if (root.IsMap()) {
    for (const auto& kv : root) {
      if (kv.first.IsScalar() && kv.first.Scalar() == from) return line_of(kv.first);
    }
  } else if (root.IsSequence()) {
    for (const YAML::Node& item : root) {
      if (!item.IsMap()) continue;
      for (const auto& kv : item) {
        if (kv.second.IsScalar() && kv.second.Scalar() == from) return line_of(item);
      }
    }
  }
  return "a line";
}

// Moves the data_mapping lines (a value to a value) out of the name map.
void split_data_lines(DumpMapping& m, const YAML::Node& root, const std::string& path) {
  for (auto it = m.names.begin(); it != m.names.end();) {
    const std::size_t from = value_name_split(it->first), to = value_name_split(it->second);
    if (from == 0 && to == 0) {
      ++it;
      continue;
    }
    if (from == 0 || to == 0) {
      throw NameMapError(path + ": " + line_naming(root, it->first) + ": '" + (from != 0 ? it->first : it->second) +
                         "' names a value (an entry and a slot such as input.0) and '" +
                         (from != 0 ? it->second : it->first) +
                         "' does not: a data_mapping line maps a value to a value, a name map line an entry, API "
                         "or module to another");
    }
    const std::string npu_entry = it->first.substr(0, from), bench_entry = it->second.substr(0, to);
    m.data[npu_entry].push_back({it->first.substr(from + 1), bench_entry, it->second.substr(to + 1)});
    it = m.names.erase(it);
  }
  for (const auto& [npu_entry, pairs] : m.data) {  // the entry pairs with its first line's bench entry
    if (npu_entry != pairs.front().bench_entry) m.names.emplace(npu_entry, pairs.front().bench_entry);
  }
}

}  // namespace

void mapped_slots(const DumpMapping& mapping, std::string_view npu_entry, std::string_view bench_entry, SlotMap& out) {
  out.pairs.clear();
  out.only_listed = false;
  out.any_dtype = !mapping.data.empty();  // msprobe's gen_dtype_condition under data_mapping
  if (mapping.apis.empty() && mapping.data.empty()) return;
  const std::size_t dot = npu_entry.find('.');
  const std::string_view api = npu_entry.substr(0, dot == std::string_view::npos ? dot : npu_entry.find('.', dot + 1));
  if (const auto it = mapping.apis.find(api); it != mapping.apis.end()) {
    out.only_listed = true;
    for (const auto& [n, b] : it->second.slots) out.pairs.emplace_back(n, b);
  }
  if (const auto it = mapping.data.find(npu_entry); it != mapping.data.end()) {
    for (const DataPair& p : it->second) {
      if (p.bench_entry == bench_entry) out.pairs.emplace_back(p.npu_slot, p.bench_slot);
      // msprobe pairs the other values by their own names, which a renamed entry's bench lacks.
      if (p.bench_entry != npu_entry) out.only_listed = true;
    }
  }
}

DumpMapping load_dump_mapping(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception&) {
    return analyzer::load_name_map(path, kMappingKeys);  // throws, naming the file and what is wrong
  }
  DumpMapping m;
  try {
    if (root.IsSequence() && root.size() > 0 && is_api_item(root[0])) {
      for (const YAML::Node& item : root) add_api_item(item, path, m);
      return m;
    }
    if (is_api_item(root)) {
      add_api_item(root, path, m);
      return m;
    }
  } catch (const YAML::Exception& e) {
    throw NameMapError(path + ": not a valid api_mapping file (" + std::string(e.what()) + ")");
  }
  m.names = analyzer::load_name_map(path, kMappingKeys);
  split_data_lines(m, root, path);
  return m;
}

}  // namespace npuscope::comparator
