// The cost model runs once per task launched, on the host's launch path: its price per evaluation,
// with the calibrated terms (waves, K fill, L2, floors; Note [Calibrated cost model]) against the
// estimate_kernel it replaced (kept below as the baseline, measured side by side in one run).
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

// estimate_kernel as it was before calibration (issue 17): fractal padding, blocks of 64x64, one
// efficiency, HBM only; the same result type, and not inlined, as the library's is not.
[[gnu::noinline]] em::CostEstimate previous_estimate_kernel(const em::DeviceSpec& spec, const em::KernelCost& cost,
                                                            em::DType dtype) {
  em::CostEstimate e;
  e.peak_flops = em::unit_peak_flops(spec, cost.unit, dtype);
  const double cores = cost.unit == em::ComputeUnit::kCube ? spec.cube_cores : spec.vector_cores;
  const auto padded = [](std::int64_t v, int to) { return std::ceil(static_cast<double>(v) / to) * to; };
  double efficiency;
  if (cost.unit == em::ComputeUnit::kCube) {
    const std::int64_t m = std::max<std::int64_t>(cost.m, 1), n = std::max<std::int64_t>(cost.n, 1);
    const std::int64_t k = std::max<std::int64_t>(cost.k, 1), batch = std::max<std::int64_t>(cost.batch, 1);
    e.padded_flops =
        2.0 * static_cast<double>(batch) * padded(m, spec.cube_m) * padded(n, spec.cube_n) * padded(k, spec.cube_k);
    const double tiles =
        static_cast<double>(batch) * std::ceil(static_cast<double>(m) / 64) * std::ceil(static_cast<double>(n) / 64);
    e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::min(tiles, cores));
    efficiency = 0.85;
  } else {
    e.padded_flops = cost.flops;
    const double blocks = std::ceil(cost.bytes / 65536);
    e.block_dim = cost.block_dim ? cost.block_dim : static_cast<std::uint32_t>(std::clamp(blocks, 1.0, cores));
    efficiency = spec.vector_efficiency;
  }
  const double used = std::min<double>(e.block_dim, cores) / cores;
  e.overhead_ns = spec.kernel_overhead_ns;
  e.compute_ns = e.padded_flops / (e.peak_flops * efficiency * used) * 1e9;
  const double bandwidth_share = std::min(1.0, 2.0 * std::min<double>(e.block_dim, cores) / cores);
  e.memory_ns = cost.bytes / (spec.memory_bandwidth * bandwidth_share) * 1e9;
  e.memory_bound = e.memory_ns > e.compute_ns;
  const double ns = std::ceil(std::max(e.compute_ns, e.memory_ns));
  e.duration_ns = std::min(em::kMaxTaskNs, e.overhead_ns + static_cast<std::uint64_t>(ns));
  return e;
}

// Estimates kernel(0), kernel(1), ... with `estimate` (the library's or the previous one).
template <class Estimate, class Kernel>
void run_estimates(benchmark::State& state, Estimate estimate, Kernel kernel, em::DType dtype) {
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(estimate(spec, kernel(i++), dtype).duration_ns);
}

// The library's estimate and the previous one, as lambdas so that each call is as direct as before.
constexpr auto kEstimate = [](const em::DeviceSpec& s, const em::KernelCost& c, em::DType t) {
  return em::estimate_kernel(s, c, t);
};
constexpr auto kPreviousEstimate = [](const em::DeviceSpec& s, const em::KernelCost& c, em::DType t) {
  return previous_estimate_kernel(s, c, t);
};

void BM_CostModelCube(benchmark::State& state) { run_estimates(state, kEstimate, cube, em::DType::kF16); }
void BM_PreviousCostModelCube(benchmark::State& state) {
  run_estimates(state, kPreviousEstimate, cube, em::DType::kF16);
}
void BM_CostModelVector(benchmark::State& state) { run_estimates(state, kEstimate, vector, em::DType::kF32); }
void BM_PreviousCostModelVector(benchmark::State& state) {
  run_estimates(state, kPreviousEstimate, vector, em::DType::kF32);
}

}  // namespace

BENCHMARK(BM_CostModelCube)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_PreviousCostModelCube)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_CostModelVector)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_PreviousCostModelVector)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_MAIN();
