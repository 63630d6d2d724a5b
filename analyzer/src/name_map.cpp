// Name map files (Note [Op pairing]): YAML or JSON, the map form or the list form, every error
// naming the file, the item and its line, and the keys expected.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <utility>

#include "npuscope/analyzer/op_pairing.h"

namespace npuscope::analyzer {
namespace {

// "expected a map {NPU op name: golden op name} or a list of {npu: NAME, golden: NAME} items".
std::string expected(const NameMapKeys& k) {
  std::string out = std::string("expected a map {") + k.from + " op name: " + k.to + " op name} or a list of {" +
                    k.from + ": NAME, " + k.to + ": NAME} items";
  if (k.to_alias != nullptr) out += std::string(" (\"") + k.to_alias + "\" for \"" + k.to + "\" too)";
  return out;
}

// "npu and golden (or bench)".
std::string key_names(const NameMapKeys& k) {
  std::string out = std::string(k.from) + " and " + k.to;
  if (k.to_alias != nullptr) out += std::string(" (or ") + k.to_alias + ")";
  return out;
}

// "FILE: item 3 (line 7)" or "FILE: line 7": where a mapping-file error is.
std::string where(const std::string& path, const YAML::Node& node, int item = -1) {
  std::string out = path + ": ";
  if (item >= 0) out += "item " + std::to_string(item + 1) + " (line " + std::to_string(node.Mark().line + 1) + ")";
  if (item < 0) out += "line " + std::to_string(node.Mark().line + 1);
  return out;
}

// A non-empty op name; `at` says where (the node's own line when it is defined).
std::string scalar(const YAML::Node& node, const std::string& at, const char* what, const NameMapKeys& k) {
  if (!node.IsDefined() || !node.IsScalar() || node.Scalar().empty()) {
    throw NameMapError(at + ": " + what + " must be a non-empty op name; " + expected(k));
  }
  return node.Scalar();
}

// One {from: ..., to: ...} item of the list form: exactly these keys, to_alias as to's alias.
std::pair<std::string, std::string> list_item(const YAML::Node& item, const std::string& path, int index,
                                              const NameMapKeys& k) {
  const std::string at = where(path, item, index);
  if (!item.IsMap()) throw NameMapError(at + ": not a {" + k.from + ": NAME, " + k.to + ": NAME} map; " + expected(k));
  std::optional<YAML::Node> from, to;  // optional: assigning a YAML::Node writes through it
  for (const auto& kv : item) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const bool is_to = key == k.to || (k.to_alias != nullptr && key == k.to_alias);
    if (key == k.from) {
      from.emplace(kv.second);
    } else if (is_to && !to) {
      to.emplace(kv.second);
    } else if (is_to) {
      throw NameMapError(at + ": both \"" + k.to + "\" and \"" + k.to_alias +
                         "\" given; give one (they are the same key)");
    } else {
      throw NameMapError(at + ": unknown key \"" + key + "\"; the keys are " + key_names(k));
    }
  }
  if (!from) throw NameMapError(at + ": no \"" + k.from + "\" key; the keys are " + key_names(k));
  if (!to) {
    const std::string alias = k.to_alias != nullptr ? std::string(" (or \"") + k.to_alias + "\")" : "";
    throw NameMapError(at + ": no \"" + k.to + "\"" + alias + " key; the keys are " + k.from + " and " + k.to);
  }
  return {scalar(*from, at, k.from, k), scalar(*to, at, k.to, k)};
}

}  // namespace

NameMap load_name_map(const std::string& path, const NameMapKeys& keys) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw NameMapError(path + ": cannot read the mapping file");
  } catch (const YAML::Exception& e) {
    throw NameMapError(path + ": not a YAML or JSON mapping file: " + e.what());
  }
  NameMap mapping;
  const auto add = [&](const std::pair<std::string, std::string>& pair, const std::string& at) {
    if (!mapping.emplace(pair.first, pair.second).second) {
      throw NameMapError(at + ": op '" + pair.first + "' is mapped twice; map each " + keys.from + " op once");
    }
  };
  try {
    if (root.IsMap()) {
      for (const auto& entry : root) {
        const std::string at = where(path, entry.first);
        add({scalar(entry.first, at, "a key", keys), scalar(entry.second, at, "a value", keys)}, at);
      }
    } else if (root.IsSequence()) {
      int index = 0;
      for (const YAML::Node& item : root) {
        add(list_item(item, path, index, keys), where(path, item, index));
        ++index;
      }
    } else if (!root.IsNull()) {
      throw NameMapError(path + ": " + expected(keys));
    }
  } catch (const YAML::Exception& e) {  // yaml-cpp's own words name no file: say which
    throw NameMapError(path + ": not a valid mapping file (" + e.what() + "); " + expected(keys));
  }
  return mapping;
}

}  // namespace npuscope::analyzer
