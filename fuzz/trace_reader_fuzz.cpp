// Fuzzes what reads a trace database (`npuscope analyze`, `export`, `compare`, the viewer's loader):
// a damaged or hand-edited SQLite file either reads, analyzes and exports (msprobe's dump from its
// msprobe fragments included: corpus/trace_reader/msprobe_fragments.db; Perfetto's flows, counters,
// hardware metrics, collectives and verdicts: corpus/trace_reader/perfetto_rows.db), or ends in
// TraceError.
#include <sstream>

#include "fuzz_input.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/analyzer/msprobe_entries.h"
#include "npuscope/collector/export_chrome.h"
#include "npuscope/collector/export_csv.h"
#include "npuscope/collector/export_error.h"
#include "npuscope/collector/export_msprobe.h"
#include "npuscope/collector/export_perfetto.h"
#include "npuscope/collector/op_statistic.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace col = npuscope::collector;
  namespace an = npuscope::analyzer;
  npuscope::fuzz::InputFile file("trace.db", data, size);
  try {
    const auto reader = col::TraceReader::open(file.path(), {.verify = false});
    reader->stats();
    reader->rows<npuscope::collector::DeviceInfoRow>();
    reader->task_summary();
    reader->rows<npuscope::collector::ApiRow>();
    reader->rows<npuscope::collector::MemcpyRow>();
    reader->rows<npuscope::collector::MarkerRow>();
    reader->rows<npuscope::collector::TensorRow>({.with_data = true});
    col::op_statistic(*reader);
    std::ostringstream text;
    an::write_text(an::analyze(*reader), text);
    col::export_chrome_trace(*reader, file.scratch(".json"));
    col::export_perfetto_trace(*reader, file.scratch(".pftrace"));
    col::export_csv(*reader, file.scratch(".csv.d"));
    col::export_msprobe(an::msprobe_dumps(*reader), file.scratch(".msprobe.d"));  // loads every tensor's data
  } catch (const col::TraceError&) {
  } catch (const col::ExportError&) {  // an output it cannot write
  }
  return 0;
}
