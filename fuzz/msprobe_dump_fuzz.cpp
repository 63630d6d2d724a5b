// Fuzzes the msprobe dump reader (importer/msprobe_dump_reader.h): the input is split at NUL bytes
// into a dump folder's dump.json, stack.json, construct.json and dump_tensor_data/t.npy (the parts
// an input lacks are not written). Any bytes either read, each value's tensor then loading or ending
// in MsprobeDumpError, or end in ImportError naming the file.
#include <filesystem>
#include <fstream>
#include <string_view>

#include "fuzz_input.h"
#include "npuscope/importer/import.h"
#include "npuscope/importer/msprobe_dump_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  namespace imp = npuscope::importer;
  npuscope::fuzz::InputFile file("msprobe", nullptr, 0);
  const fs::path dir = file.scratch(".dump");
  fs::create_directories(dir / "dump_tensor_data");
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"dump.json", "stack.json", "construct.json", "dump_tensor_data/t.npy"}) {
    const std::size_t nul = rest.find('\0');
    std::ofstream(dir / name, std::ios::binary) << rest.substr(0, nul);
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  imp::is_msprobe_dump(dir.string());
  try {
    for (const auto& dump : imp::read_msprobe_dumps(dir.string())) {
      for (const auto& entry : dump.entries) {
        if (entry.stack >= static_cast<std::int32_t>(dump.stacks.size())) std::abort();
        for (const auto& value : entry.values) {
          if (!dump.load || value.data_name.empty()) continue;
          try {
            const auto t = dump.loaded(entry, value);
            if (t.shape != value.shape) std::abort();  // the loader checks the shape
          } catch (const npuscope::collector::MsprobeDumpError&) {
          }
        }
      }
    }
  } catch (const imp::ImportError&) {
  }
  return 0;
}
