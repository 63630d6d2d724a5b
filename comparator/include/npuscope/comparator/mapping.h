// The mapping file of `npuscope compare --mapping FILE`: NPU op names -> golden op names, for ops
// renamed between the two runs (msprobe's mapping file); and of `npuscope diff --op-name-map FILE`:
// BASE op names -> NEW op names. YAML or JSON (a YAML subset), either a map
//     layer0/attn/MatMul: encoder.0.attention.matmul
// or a list of pairs
//     - {npu: layer0/attn/MatMul, golden: encoder.0.attention.matmul}     ("bench" for "golden" too)
#pragma once

#include <map>
#include <string>

namespace npuscope::comparator {

// The keys of the list form's items: {npu, golden} (alias "bench") for compare, {base, new} for
// `npuscope diff --op-name-map` (msprof-analyze's --op_name_map is the map form).
struct MappingKeys {
  const char* from = "npu";
  const char* to = "golden";
  const char* to_alias = "bench";  // nullptr: none
};
inline constexpr MappingKeys kDiffMappingKeys{"base", "new", nullptr};

// Throws CompareError naming the file and what is wrong with it.
std::map<std::string, std::string> load_mapping(const std::string& path, const MappingKeys& keys = {});

}  // namespace npuscope::comparator
