// Fuzzes the op name map files of `npuscope compare --mapping FILE` and `npuscope diff
// --op-name-map FILE` (YAML or JSON, one loader), and the dump comparison's reading of the same
// flag (comparator::load_dump_mapping: name maps and msprobe's data_mapping and api_mapping): any
// bytes give a mapping or a NameMapError naming the file.
#include <cstdlib>

#include "fuzz_input.h"
#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/dump_mapping.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace an = npuscope::analyzer;
  npuscope::fuzz::InputFile file("mapping.yaml", data, size);
  try {
    an::load_name_map(file.path(), npuscope::comparator::kMappingKeys);
  } catch (const an::NameMapError& e) {
    if (std::string(e.what()).find(file.path()) == std::string::npos) std::abort();  // the error names the file
  }
  try {
    npuscope::comparator::load_dump_mapping(file.path());
  } catch (const an::NameMapError& e) {
    if (std::string(e.what()).find(file.path()) == std::string::npos) std::abort();
  }
  return 0;
}
