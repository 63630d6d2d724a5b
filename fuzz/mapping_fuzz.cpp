// Fuzzes compare's op mapping files (`npuscope compare --mapping FILE`, YAML or JSON): any bytes give
// a mapping or a CompareError naming the file.
#include <cstdlib>

#include "fuzz_input.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/mapping.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cmp = npuscope::comparator;
  npuscope::fuzz::InputFile file("mapping.yaml", data, size);
  try {
    cmp::load_mapping(file.path());
  } catch (const cmp::CompareError& e) {
    if (std::string(e.what()).find(file.path()) == std::string::npos) std::abort();  // the error names the file
  }
  return 0;
}
