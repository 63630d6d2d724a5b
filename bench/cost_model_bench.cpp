// The cost model runs once per task launched, on the host's launch path: its price per evaluation,
// with the calibrated terms (waves, K fill, L2, floors; Note [Calibrated cost model]) against the
// plain roofline it replaced (kept below as the baseline, measured side by side in one run).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_spec.h"

namespace em = npuscope::emulator;

namespace {

// Shapes of a transformer step and a few odd ones, cycled so that no result is constant.
constexpr std::array<std::array<std::int64_t, 3>, 8> kShapes = {{{4096, 4096, 4096},
                                                                 {2048, 11008, 4096},
                                                                 {16, 5120, 1024},
                                                                 {100, 100, 100},
                                                                 {1024, 1024, 1024},
                                                                 {8192, 8192, 8192},
                                                                 {64, 64, 24576},
                                                                 {2048, 4096, 4096}}};

em::KernelCost cube(std::size_t i) {
  const auto& s = kShapes[i % kShapes.size()];
  em::KernelCost c;
  c.unit = em::ComputeUnit::kCube;
  c.m = s[0];
  c.n = s[1];
  c.k = s[2];
  c.flops = 2.0 * static_cast<double>(s[0] * s[1] * s[2]);
  c.bytes = 2.0 * static_cast<double>(s[0] * s[2] + s[2] * s[1] + s[0] * s[1]);
  return c;
}

em::KernelCost vector(std::size_t i) {
  em::KernelCost c;
  c.unit = em::ComputeUnit::kVector;
  c.bytes = static_cast<double>(std::int64_t{1} << (6 + i % 24));
  c.flops = c.bytes / 4;
  return c;
}

// The roofline before calibration: fractal padding, blocks of 64x64, one efficiency, HBM only. Not
// inlined, as estimate_kernel (in the emulator library) is not.
[[gnu::noinline]] std::uint64_t roofline_ns(const em::DeviceSpec& spec, const em::KernelCost& c, em::DType dtype) {
  const double peak = em::unit_peak_flops(spec, c.unit, dtype);
  double flops = c.flops, blocks, cores;
  if (c.unit == em::ComputeUnit::kCube) {
    const auto pad = [](std::int64_t v) { return std::ceil(static_cast<double>(v) / 16) * 16; };
    flops = 2.0 * pad(c.m) * pad(c.n) * pad(c.k);
    blocks = std::ceil(static_cast<double>(c.m) / 64) * std::ceil(static_cast<double>(c.n) / 64);
    cores = spec.cube_cores;
  } else {
    blocks = std::ceil(c.bytes / 65536);
    cores = spec.vector_cores;
  }
  const double used = std::clamp(blocks, 1.0, cores) / cores;
  const double compute = flops / (peak * 0.85 * used) * 1e9;
  const double memory = c.bytes / (spec.memory_bandwidth * std::min(1.0, 2 * used)) * 1e9;
  return spec.kernel_overhead_ns + static_cast<std::uint64_t>(std::ceil(std::max(compute, memory)));
}

void BM_CostModelCube(benchmark::State& state) {
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(em::estimate_kernel(spec, cube(i++), em::DType::kF16).duration_ns);
}

void BM_RooflineBaselineCube(benchmark::State& state) {
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(roofline_ns(spec, cube(i++), em::DType::kF16));
}

void BM_CostModelVector(benchmark::State& state) {
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(em::estimate_kernel(spec, vector(i++), em::DType::kF32).duration_ns);
}

void BM_RooflineBaselineVector(benchmark::State& state) {
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(roofline_ns(spec, vector(i++), em::DType::kF32));
}

}  // namespace

BENCHMARK(BM_CostModelCube)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RooflineBaselineCube)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_CostModelVector)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RooflineBaselineVector)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_MAIN();
