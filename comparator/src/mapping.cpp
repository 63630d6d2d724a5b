#include "npuscope/comparator/mapping.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <utility>

#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {
namespace {

constexpr const char* kExpected =
    "expected a map {NPU op name: golden op name} or a list of {npu: NAME, golden: NAME} items (\"bench\" for "
    "\"golden\" too)";

// "FILE: item 3 (line 7)" or "FILE: line 7": where a mapping-file error is.
std::string where(const std::string& path, const YAML::Node& node, int item = -1) {
  std::string out = path + ": ";
  if (item >= 0) out += "item " + std::to_string(item + 1) + " (line " + std::to_string(node.Mark().line + 1) + ")";
  if (item < 0) out += "line " + std::to_string(node.Mark().line + 1);
  return out;
}

// A non-empty op name; `at` says where (the node's own line when it is defined).
std::string scalar(const YAML::Node& node, const std::string& at, const char* what) {
  if (!node.IsDefined() || !node.IsScalar() || node.Scalar().empty()) {
    throw CompareError(at + ": " + what + " must be a non-empty op name; " + kExpected);
  }
  return node.Scalar();
}

// One {npu: ..., golden: ...} item of the list form: exactly these keys, "bench" as golden's alias.
std::pair<std::string, std::string> list_item(const YAML::Node& item, const std::string& path, int index) {
  const std::string at = where(path, item, index);
  if (!item.IsMap()) throw CompareError(at + ": not a {npu: NAME, golden: NAME} map; " + kExpected);
  std::optional<YAML::Node> npu, golden;  // optional: assigning a YAML::Node writes through it
  for (const auto& kv : item) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (key == "npu") {
      npu.emplace(kv.second);
    } else if ((key == "golden" || key == "bench") && !golden) {
      golden.emplace(kv.second);
    } else if (key == "golden" || key == "bench") {
      throw CompareError(at + ": both \"golden\" and \"bench\" given; give one (they are the same key)");
    } else {
      throw CompareError(at + ": unknown key \"" + key + "\"; the keys are npu and golden (or bench)");
    }
  }
  if (!npu) throw CompareError(at + ": no \"npu\" key; the keys are npu and golden (or bench)");
  if (!golden) throw CompareError(at + ": no \"golden\" (or \"bench\") key; the keys are npu and golden");
  return {scalar(*npu, at, "npu"), scalar(*golden, at, "golden")};
}

}  // namespace

std::map<std::string, std::string> load_mapping(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw CompareError(path + ": cannot read the mapping file");
  } catch (const YAML::Exception& e) {
    throw CompareError(path + ": not a YAML or JSON mapping file: " + e.what());
  }
  std::map<std::string, std::string> mapping;
  const auto add = [&](const std::pair<std::string, std::string>& pair, const std::string& at) {
    if (!mapping.emplace(pair.first, pair.second).second) {
      throw CompareError(at + ": op '" + pair.first + "' is mapped twice; map each NPU op once");
    }
  };
  try {
    if (root.IsMap()) {
      for (const auto& entry : root) {
        const std::string at = where(path, entry.first);
        add({scalar(entry.first, at, "a key"), scalar(entry.second, at, "a value")}, at);
      }
    } else if (root.IsSequence()) {
      int index = 0;
      for (const YAML::Node& item : root) {
        add(list_item(item, path, index), where(path, item, index));
        ++index;
      }
    } else if (!root.IsNull()) {
      throw CompareError(path + ": " + kExpected);
    }
  } catch (const YAML::Exception& e) {  // yaml-cpp's own words name no file: say which
    throw CompareError(path + ": not a valid mapping file (" + e.what() + "); " + kExpected);
  }
  return mapping;
}

}  // namespace npuscope::comparator
