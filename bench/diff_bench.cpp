// How fast does `npuscope diff` compare two big traces, and how much memory does it take?
//   Diff/N   analyzer::diff() of two synthetic traces of N kernel tasks each (bench/synthetic_trace.h:
//            BASE, and NEW with op 7 3 us slower and one op type fallen back to the AI CPU), written
//            once through the real TraceWriter before the benchmark (10M: the target, <= 20 s,
//            <= 2 GB).
// Counters:
//   tasks_per_second   tasks of both traces / the whole diff (opening the traces included)
//   peak_rss_mb        the process's peak resident memory after the diff (getrusage): the writer
//                      that built the traces keeps only a 16 MiB cache, so this is the diff's peak
//   pairs              ops paired (every task: same names and call indexes)
#include <benchmark/benchmark.h>

#include <string>

#include "npuscope/analyzer/diff.h"
#include "npuscope/collector/trace_reader.h"
#include "synthetic_trace.h"

using namespace npuscope;

namespace {

void Diff(benchmark::State& state) {
  const std::int64_t tasks = state.range(0);
  const std::string& base_path = bench::cached_synthetic_trace(tasks, true, false);
  const std::string& new_path = bench::cached_synthetic_trace(tasks, true, true);
  std::int64_t pairs = 0;
  for (auto _ : state) {
    // As `npuscope diff` opens them, with the text report's 20 rows per table.
    const auto base = collector::TraceReader::open(base_path, {.verify = false});
    const auto next = collector::TraceReader::open(new_path, {.verify = false});
    const analyzer::DiffResult d = analyzer::diff(*base, *next, {.top = 20});
    const analyzer::Table* m = d.report.find("diff_matching");
    pairs = std::get<std::int64_t>(*m->cell(0, "by_name"));
    benchmark::DoNotOptimize(pairs);
  }
  state.counters["tasks_per_second"] =
      benchmark::Counter(static_cast<double>(2 * tasks), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_mb"] = bench::peak_rss_mb();
  state.counters["pairs"] = static_cast<double>(pairs);
}

}  // namespace

BENCHMARK(Diff)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

BENCHMARK_MAIN();
