// Fuzzes the Kineto / torch.profiler importer and the Chrome-event reader under it (chrome_events):
// any bytes named as torch.profiler names its traces either import (a cut-short file marked
// incomplete) or end in ImportError naming the file; the trace written then reads back.
#include "fuzz_input.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace imp = npuscope::importer;
  namespace col = npuscope::collector;
  npuscope::fuzz::InputFile file("trace.pt.trace.json", data, size);
  try {
    imp::detect(file.path());  // names and first bytes only
  } catch (const imp::ImportError&) {
  }
  const std::string db = file.scratch(".db");
  try {
    imp::import_to_file(imp::Source{imp::Format::kKineto, file.path(), {file.path()}}, db, true);
  } catch (const imp::ImportError&) {
    return 0;
  }
  try {
    const auto reader = col::TraceReader::open(db);
    reader->for_each([](const col::TaskRow&) {});
    reader->rows<col::PytorchApiRow>();
    reader->rows<col::CommunicationRow>();
  } catch (const col::TraceError&) {
  }
  return 0;
}
