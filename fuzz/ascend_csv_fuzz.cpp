// Fuzzes the Ascend text import: the profilers' CSV reader (Note [Reading profilers' CSVs]) and what
// reads it, and the timeline. The first byte picks the file the rest becomes (kernel_details.csv,
// memory_record.csv, npu_module_mem.csv or operator_memory.csv of a text export, an msprof folder's
// op_summary, a text export's trace_view.json or communication_matrix.json beside a small kernel
// table), which is then
// imported whole (the kernel table's index, join and rows, the memory totals and per-op blocks, the
// events and their joins); the
// CsvReader also reads it field by field. Any bytes import or end in an ImportError (Note [Harness rule]).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../importer/src/csv_reader.h"
#include "fuzz_input.h"
#include "npuscope/importer/import.h"

namespace {

namespace fs = std::filesystem;
namespace im = npuscope::importer;

// What a text export needs beside a memory CSV to be one.
constexpr const char* kKernelHeader =
    "Step Id,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
    "1,5,2,Add_1,Add,AI_VECTOR_CORE,1736408883704643.212\t,3.5\n";

void read_fields(const std::string& path) {
  im::CsvReader csv(path);
  std::size_t n = 0;
  while (csv.next()) {
    for (std::size_t i = 0; i < csv.fields(); ++i) {
      const std::string_view f = csv.field(static_cast<int>(i));
      n += f.size();
      (void)im::csv_time_ns(f);
      (void)im::csv_double(f);
    }
    if (csv.rows() == 2) csv.seek(csv.offset());  // read a record again, as the kernel table does
    if (csv.rows() > 100000) break;
  }
  (void)n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int kind = static_cast<std::uint8_t>(data[0] - '0') % 7;  // seeds: '0' to '6'
  npuscope::fuzz::InputFile input("input.csv", data + 1, size - 1);
  npuscope::fuzz::InputFile scratch("scratch", nullptr, 0);
  const fs::path root = scratch.scratch(kind == 3 ? "PROF_000001" : "_ascend_pt");
  const fs::path dir = root / (kind == 3 ? "mindstudio_profiler_output" : "ASCEND_PROFILER_OUTPUT");
  std::error_code ec;
  fs::create_directories(dir, ec);
  static constexpr const char* kNames[] = {"kernel_details.csv",       "memory_record.csv", "npu_module_mem.csv",
                                           "op_summary_1.csv",         "trace_view.json",   "operator_memory.csv",
                                           "communication_matrix.json"};
  fs::copy_file(input.path(), dir / kNames[kind], fs::copy_options::overwrite_existing, ec);
  if (kind == 1 || kind == 2 || kind >= 4) std::ofstream(dir / "kernel_details.csv") << kKernelHeader;
  if (kind == 3) std::ofstream(dir / "msprof_1.json") << "[]";
  try {
    if (kind != 4 && kind != 6) read_fields(input.path());
  } catch (const im::ImportError&) {
  }
  try {
    const auto source = im::detect(root.string());
    if (source) im::import_to_file(*source, scratch.scratch(".db"), true);
  } catch (const im::ImportError&) {
  }
  return 0;
}
