// Fuzzes the Ascend db importer (msprof_*.db, ascend_pytorch_profiler_{rank}.db: importer/src/
// ascend_db.h) and the foreign SQLite reader under it: a damaged, cut short or hand-edited database
// either imports (complete, or marked incomplete) or ends in ImportError naming the file.
#include "fuzz_input.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/importer/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace im = npuscope::importer;
  npuscope::fuzz::InputFile file("profile.db", data, size);
  try {
    // The input file's name is no profiler's: the source is named directly (detection is by name).
    const im::Source source{im::Format::kAscendPtDb, file.path(), {file.path()}};
    im::import_to_file(source, file.scratch(".trace.db"), true);
  } catch (const im::ImportError&) {
  } catch (const npuscope::collector::TraceError&) {
  }
  return 0;
}
