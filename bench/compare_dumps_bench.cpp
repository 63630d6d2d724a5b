// How fast does compare_dumps go on a big statistics dump?
//   CompareDumps/ENTRIES  compare_dumps() of two statistics dumps of ENTRIES entries in memory, as
//                         bench/compare_dumps_bench.py's generator writes them (an API entry of two
//                         tensor inputs, a scalar argument and a tensor output; every tenth a module
//                         entry; the NPU's statistics off by ~1e-4): the pairing, msprobe's checkers
//                         and the verdicts, on one thread.
//   CompareDumpsReport/ENTRIES  the same, then its report's compare_result cells (what --format csv
//                         writes), as a user waits for them.
// Counters:
//   entries_per_second  NPU entries compared per second
// bench/compare_dumps_bench.py puts it beside the Python reference (json.load + msprobe's statistics
// math) and, once the dump reader is in, times `npuscope compare` of the two dump.json files.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "npuscope/comparator/compare_dumps.h"
#include "npuscope/comparator/compare_report.h"

using namespace npuscope;

namespace {

collector::DumpValue tensor(const char* slot, std::mt19937& rng, double noise) {
  std::normal_distribution<double> v(0, 1), n(0, noise);
  collector::DumpValue t;
  t.slot = slot;
  t.is_tensor = true;
  t.type = "torch.Tensor";
  t.dtype = "torch.float32";
  t.shape = {32, 64, 56, 56};
  t.has_stats = true;
  t.max = 3 + v(rng), t.min = -3 + v(rng), t.mean = v(rng) * 1e-3, t.norm = 100 + v(rng);
  for (double* s : {&t.max, &t.min, &t.mean, &t.norm}) *s *= 1 + n(rng);
  t.requires_grad = 0;
  return t;
}

collector::MsprobeDump make_dump(std::int64_t entries, bool npu) {
  collector::MsprobeDump d;
  d.path = npu ? "npu" : "bench";
  d.task = "statistics";
  d.framework = "pytorch";
  std::mt19937 rng(7);
  const double noise = npu ? 1e-4 : 0;
  d.entries.reserve(static_cast<std::size_t>(entries));
  for (std::int64_t i = 0; i < entries; ++i) {
    collector::DumpEntry e;
    if (i % 10 == 9) {
      e.name = "Module.layers." + std::to_string(i / 10) + ".Linear.forward.0";
      e.values = {tensor("input.0", rng, noise), tensor("output.0", rng, noise),
                  tensor("parameters.weight", rng, noise)};
    } else {
      e.name = "Functional.linear." + std::to_string(i) + ".forward";
      collector::DumpValue scalar;
      scalar.slot = "input.2";
      scalar.type = "int";
      scalar.value = "1";
      e.values = {tensor("input.0", rng, noise), tensor("input.1", rng, noise), scalar, tensor("output.0", rng, noise)};
    }
    d.entries.push_back(std::move(e));
  }
  return d;
}

void CompareDumps(benchmark::State& state) {
  const collector::MsprobeDump npu = make_dump(state.range(0), true), bench = make_dump(state.range(0), false);
  for (auto _ : state) {
    comparator::DumpCompareResult r = comparator::compare_dumps(npu, bench);
    benchmark::DoNotOptimize(r.rows.data());
  }
  state.counters["entries_per_second"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(CompareDumps)->Arg(100'000)->Unit(benchmark::kMillisecond);

void CompareDumpsReport(benchmark::State& state) {
  const collector::MsprobeDump npu = make_dump(state.range(0), true), bench = make_dump(state.range(0), false);
  for (auto _ : state) {
    const analyzer::Report report = comparator::compare_report(comparator::compare_dumps(npu, bench));
    benchmark::DoNotOptimize(report.tables.data());
  }
  state.counters["entries_per_second"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(CompareDumpsReport)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
