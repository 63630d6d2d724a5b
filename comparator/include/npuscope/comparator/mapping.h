// The mapping file of `npuscope compare --mapping FILE`: NPU op names -> golden op names, for ops
// renamed between the two runs (msprobe's mapping file). YAML or JSON (a YAML subset), either a map
//     layer0/attn/MatMul: encoder.0.attention.matmul
// or a list of pairs
//     - {npu: layer0/attn/MatMul, golden: encoder.0.attention.matmul}     ("bench" for "golden" too)
#pragma once

#include <map>
#include <string>

namespace npuscope::comparator {

// Throws CompareError naming the file and what is wrong with it.
std::map<std::string, std::string> load_mapping(const std::string& path);

}  // namespace npuscope::comparator
