// How fast does `npuscope compare` go end to end, from two traces on disk to the verdicts?
//   CompareTraces/OPS  compare_traces() on two traces of OPS ops, each with one f32 input and one f32
//                      output of 1M elements dumped as `npuscope run --dump tensor` does (zstd level
//                      1), written once through the real TraceWriter. The golden values ~ N(0, 1),
//                      the NPU's the same with a relative noise of ~1e-4. Reading, decompressing
//                      and the metrics, on one thread.
// Counters:
//   bytes_per_second  f32 bytes of ONE side compared per second (the issue's >= 1 GB/s per core is
//                     judged on compare_bench's metrics kernel; this is what a user waits for)
#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/comparator/compare.h"

using namespace npuscope;

namespace {

constexpr std::int64_t kElements = 1 << 20;

std::vector<std::uint8_t> compress(const std::vector<float>& values) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(values.size() * 4));
  out.resize(ZSTD_compress(out.data(), out.size(), values.data(), values.size() * 4, 1));
  return out;
}

void write_trace(const std::string& path, int ops, bool npu) {
  auto w = collector::TraceWriter::create(path, {.overwrite = true, .durable = false});
  std::mt19937 rng(7);
  std::normal_distribution<float> value(0, 1), noise(0, 1e-4f);
  std::mt19937 npu_rng(11);
  const collector::StringId type = w->intern("Add");
  for (int k = 0; k < ops; ++k) {
    collector::TaskRow t;
    t.task_id = k + 1;
    t.start_ns = t.queued_ns = 1000 * t.task_id;
    t.end_ns = t.start_ns + 500;
    t.name_id = w->intern("layer" + std::to_string(k) + "/Add");
    t.op_type_id = type;
    t.task_type = static_cast<std::int32_t>(npu ? TaskType::kAiVectorCore : TaskType::kHostCpu);
    t.device_id = npu ? 0 : -1;
    w->add(std::span<const collector::TaskRow>(&t, 1));
    for (int role = 0; role < 2; ++role) {
      std::vector<float> v(kElements);
      for (float& x : v) x = value(rng);
      if (npu) {
        for (float& x : v) x *= 1 + noise(npu_rng);
      }
      collector::TensorRow r;
      r.task_id = t.task_id;
      r.role = role;
      r.shape = std::to_string(kElements);
      r.numel = kElements;
      r.data = compress(v);
      r.data_bytes = kElements * 4;
      w->add(r);
    }
  }
  w->finalize();
}

void CompareTraces(benchmark::State& state) {
  const int ops = static_cast<int>(state.range(0));
  const auto dir = std::filesystem::temp_directory_path();
  const std::string npu = (dir / ("npuscope_compare_bench_npu_" + std::to_string(getpid()) + ".db")).string();
  const std::string golden = (dir / ("npuscope_compare_bench_cpu_" + std::to_string(getpid()) + ".db")).string();
  write_trace(npu, ops, true);
  write_trace(golden, ops, false);
  for (auto _ : state) {
    const auto n = collector::TraceReader::open(npu, {.verify = false});
    const auto g = collector::TraceReader::open(golden, {.verify = false});
    const comparator::CompareResult r = comparator::compare_traces(*n, *g);
    if (r.passed != ops) state.SkipWithError("the traces should compare equal");
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(static_cast<double>(ops) * 2 * kElements * 4, benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(npu);
  std::filesystem::remove(golden);
}

}  // namespace

BENCHMARK(CompareTraces)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
