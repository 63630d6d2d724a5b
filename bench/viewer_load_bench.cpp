// How fast does the viewer load a big trace, and how much memory does its timeline take?
//   ViewerLoad/N/HOST  TimelineModel on a synthetic trace of N tasks (bench/synthetic_trace.h), with
//                      HOST = 1 an API call per task (and the memory records, copies), 0 the tasks
//                      alone. Targets (issue 7): 10M tasks load in <= 5 s, <= 48 bytes per task.
// Counters:
//   bytes_per_task     the model's memory (capacity of every lane row) / tasks
//   peak_rss_mb        the process's peak resident memory (getrusage)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/viewer/timeline_model.h"
#include "synthetic_trace.h"

using namespace npuscope;

namespace {

void ViewerLoad(benchmark::State& state) {
  const std::int64_t tasks = state.range(0);
  const std::string& path = bench::cached_synthetic_trace(tasks, state.range(1) != 0);
  double bytes = 0;
  for (auto _ : state) {
    const auto trace = collector::TraceReader::open(path, {.verify = false});
    const viewer::TimelineModel model(*trace);
    bytes = static_cast<double>(model.memory_bytes());
    benchmark::DoNotOptimize(model.lanes().data());
  }
  state.counters["bytes_per_task"] = bytes / static_cast<double>(tasks);
  state.counters["peak_rss_mb"] = bench::peak_rss_mb();
}

}  // namespace

BENCHMARK(ViewerLoad)
    ->Args({10'000'000, 0})
    ->Args({10'000'000, 1})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK_MAIN();
