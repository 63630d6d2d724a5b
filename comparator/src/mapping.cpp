#include "npuscope/comparator/mapping.h"

#include <yaml-cpp/yaml.h>

#include "npuscope/comparator/compare.h"

namespace npuscope::comparator {
namespace {

std::string scalar(const YAML::Node& node, const std::string& path, const char* what) {
  if (!node || !node.IsScalar() || node.Scalar().empty()) {
    throw CompareError(path + ": " + what + " must be a non-empty op name (line " +
                       std::to_string(node.Mark().line + 1) + ")");
  }
  return node.Scalar();
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
  const auto add = [&](const std::string& npu, const std::string& golden) {
    if (!mapping.emplace(npu, golden).second) throw CompareError(path + ": op '" + npu + "' is mapped twice");
  };
  if (root.IsMap()) {
    for (const auto& entry : root) add(scalar(entry.first, path, "a key"), scalar(entry.second, path, "a value"));
  } else if (root.IsSequence()) {
    for (const YAML::Node& pair : root) {
      if (!pair.IsMap()) throw CompareError(path + ": list items must be {npu: NAME, golden: NAME}");
      add(scalar(pair["npu"], path, "npu"), scalar(pair["golden"] ? pair["golden"] : pair["bench"], path, "golden"));
    }
  } else if (!root.IsNull()) {
    throw CompareError(path + ": expected a map {npu name: golden name} or a list of {npu: ..., golden: ...}");
  }
  return mapping;
}

}  // namespace npuscope::comparator
