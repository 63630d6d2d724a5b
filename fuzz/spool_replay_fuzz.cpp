// Fuzzes the trace spool's replay (what `npuscope run` and trace recovery convert into SQLite): any
// bytes replay into a trace that reads back, or end in TraceError.
#include "fuzz_input.h"
#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_spool.h"
#include "npuscope/collector/trace_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace col = npuscope::collector;
  npuscope::fuzz::InputFile file("trace.spool", data, size);
  const std::string db = file.scratch(".db");
  try {
    {
      // Both writers a spool meets: the live converter's clustered one, and the ranked one of a
      // conversion after exit or a recovery (Note [Ranked tables]), whose row bound a few inputs pass.
      const bool ranked = size % 2 == 1;
      auto writer = col::TraceWriter::create(
          db, {.overwrite = true, .durable = false, .ranked = ranked, .ranked_bytes = size % 4 == 1 ? 4096 : 1u << 28});
      col::replay_spool(file.path(), *writer);
    }
    const auto reader = col::TraceReader::open(db);
    reader->task_summary();
    reader->rows<npuscope::collector::TaskRow>();
    reader->rows<npuscope::collector::TaskRow>({.starting = {{0, 1'000'000}}});
    reader->task_start_range();
    reader->rows<npuscope::collector::MemoryRow>();
    reader->rows<npuscope::collector::TensorRow>({.with_data = true});
  } catch (const col::TraceError&) {
  }
  return 0;
}
