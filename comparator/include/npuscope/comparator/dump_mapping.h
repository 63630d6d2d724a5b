// The --mapping file of a dump comparison: npuscope's name map, and msprobe's data_mapping and
// api_mapping YAML files (docs/compare.md "Comparing msprobe dumps").
//
// Note [Dump mapping files]
// One file, its form told by its shape:
//  - a list of maps with ms_api/pt_api keys (or one such map, as msprobe's docs write it): msprobe's
//    api_mapping (-am). Each item renames an NPU API (its type.name, "Functional.abs") to the bench's
//    ("Torch.abs") and pairs the values by the index lists: ms_args[i] with pt_args[i] (input.N),
//    ms_outputs[i] with pt_outputs[i] (output.N), ms_parameters[i] with pt_parameters[i]
//    (parameters.NAME). A value of the API that no list names pairs nothing, as msprobe's
//    modify_compare_data_with_user_mapping abandons it; the lists of a pair have one length.
//  - a map (or an npu/bench list) of names: each line is either a name map line (an entry, API or
//    module name: Note [Dump entry matching]) or, when both sides name a value
//    ("Functional.x.0.forward.input.0: Functional.y.0.forward.input.1", module forms too), a line
//    of msprobe's data_mapping (-dm): the NPU value pairs with that bench value, and its entry with
//    that bench entry (the first line of an entry names its bench entry). As msprobe does under
//    data_mapping, values then pair whatever their dtypes. A line whose one side names a value and
//    the other not is an error naming its line.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"

namespace npuscope::comparator {

// One NPU value's bench value under a data_mapping line: the NPU entry's slot, the bench's.
struct DataPair {
  std::string npu_slot, bench_entry, bench_slot;
};

// One api_mapping item: the bench API and the slot pairs (NPU slot, bench slot).
struct ApiMapping {
  std::string bench_api;
  std::vector<std::pair<std::string, std::string>> slots;
};

struct DumpMapping {
  DumpMapping() = default;
  DumpMapping(analyzer::NameMap n) : names(std::move(n)) {}        // NOLINT: a name map is a mapping
  analyzer::NameMap names;                                         // entry, API and module names, NPU -> bench
  std::map<std::string, std::vector<DataPair>, std::less<>> data;  // data_mapping, by NPU entry name
  std::map<std::string, ApiMapping, std::less<>> apis;             // api_mapping, by NPU API ("Functional.abs")
  bool empty() const { return names.empty() && data.empty() && apis.empty(); }
};

// Reads FILE in any of Note [Dump mapping files]'s forms. Throws analyzer::NameMapError whose
// message starts with the file and names the line.
DumpMapping load_dump_mapping(const std::string& path);

}  // namespace npuscope::comparator
