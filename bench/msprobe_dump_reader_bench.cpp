// Reading a large msprobe statistics dump (importer/msprobe_dump_reader.h): the synthetic dump.json
// of bench/synthetic_dump.h, 100,000 entries in msprobe's own layout, written once, then read.
// The comparator's budget for a whole compare of such a dump is 2 s (issue 38).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "npuscope/importer/msprobe_dump_reader.h"
#include "synthetic_dump.h"

namespace {

namespace fs = std::filesystem;

void BM_ReadStatisticsDump(benchmark::State& state) {
  const auto entries = static_cast<std::size_t>(state.range(0));
  const std::string dir = npuscope::bench::synthetic_dump_dir(entries);
  const auto bytes = static_cast<std::int64_t>(fs::file_size(fs::path(dir) / "dump.json"));
  std::size_t values = 0;
  for (auto _ : state) {
    auto dumps = npuscope::importer::read_msprobe_dumps(dir);
    values = 0;
    for (const auto& e : dumps.at(0).entries) values += e.values.size();
    benchmark::DoNotOptimize(values);
    state.PauseTiming();  // freeing the result is the comparator's, at its end
    dumps.clear();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["dump_json_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["values"] = static_cast<double>(values);
}
BENCHMARK(BM_ReadStatisticsDump)->Arg(100000)->Arg(140000)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
