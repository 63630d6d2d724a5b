// How fast does `npuscope analyze` read and analyse a big trace, and how much memory does it take?
//   Analyze/N   every rule of analyze() on a synthetic trace of N kernel tasks, written once through
//               the real TraceWriter before the benchmark (10M: the target, ≤ 10 s, ≤ 2 GB).
// Counters:
//   tasks_per_second   kernel tasks / the whole analysis (opening the trace included)
//   peak_rss_mb        the process's peak resident memory after the analysis (getrusage): the writer
//                      that built the trace keeps only a 16 MiB cache, so this is the analysis' peak
//   trace_mb           the size of the trace file
// The trace: bench/synthetic_trace.h.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/collector/trace_reader.h"
#include "synthetic_trace.h"

using namespace npuscope;

namespace {

void Analyze(benchmark::State& state) {
  const std::int64_t tasks = state.range(0);
  const std::string& path = bench::cached_synthetic_trace(tasks);
  std::size_t findings = 0;
  for (auto _ : state) {
    const auto trace = collector::TraceReader::open(path, {.verify = false});  // as npuscope analyze opens it
    const analyzer::Report report = analyzer::analyze(*trace);
    for (const analyzer::Table& t : report.tables) findings += t.rows.size();
    benchmark::DoNotOptimize(findings);
  }
  state.counters["tasks_per_second"] =
      benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_mb"] = bench::peak_rss_mb();
  state.counters["trace_mb"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
}

}  // namespace

BENCHMARK(Analyze)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

BENCHMARK_MAIN();
