// How much does emulating the NPU cost over the BLAS it runs on? Three 1024³ GEMMs:
//   NpuMatmulF16     ops::matmul on npu:0 f16 tensors + synchronize (dispatch, task queue, f16 -> f32
//                    loads, sgemm, rounding and overflow mode, f32 -> f16 store)
//   CblasSgemmF32    cblas_sgemm on f32 buffers: the floor the emulator is measured against
//   CpuGoldenMatmulF32  ops::matmul on cpu f32 tensors (the golden backend's path)
// Real time throughout: the work runs on the device worker and OpenBLAS's threads, not on the
// benchmark thread. bench/run_bench.sh turns the results into docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

constexpr std::int64_t kSize = 1024;

void set_flops(benchmark::State& state, std::int64_t n) {
  state.counters["FLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n), benchmark::Counter::kIsIterationInvariantRate);
}

void NpuMatmulF16(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Runtime::configure({});
  const Tensor a = Tensor::uniform({n, n}, DType::kF16, DeviceRef::npu(), 1, -1, 1);
  const Tensor b = Tensor::uniform({n, n}, DType::kF16, DeviceRef::npu(), 2, -1, 1);
  Device& device = Runtime::get().device();
  device.synchronize();
  for (auto _ : state) {
    Tensor c = ops::matmul(a, b);
    device.synchronize();
    benchmark::DoNotOptimize(c);
  }
  set_flops(state, n);
}

void CblasSgemmF32(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const std::vector<float> a = Tensor::uniform({n, n}, DType::kF32, DeviceRef::cpu(), 1, -1, 1).to_floats();
  const std::vector<float> b = Tensor::uniform({n, n}, DType::kF32, DeviceRef::cpu(), 2, -1, 1).to_floats();
  std::vector<float> c(static_cast<std::size_t>(n * n));
  const int ni = static_cast<int>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni, b.data(), ni, 0.0f, c.data(),
                ni);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, n);
}

void CpuGoldenMatmulF32(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Tensor a = Tensor::uniform({n, n}, DType::kF32, DeviceRef::cpu(), 1, -1, 1);
  const Tensor b = Tensor::uniform({n, n}, DType::kF32, DeviceRef::cpu(), 2, -1, 1);
  for (auto _ : state) {
    Tensor c = ops::matmul(a, b);
    benchmark::DoNotOptimize(c);
  }
  set_flops(state, n);
}

}  // namespace

BENCHMARK(NpuMatmulF16)->Arg(kSize)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(CblasSgemmF32)->Arg(kSize)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(CpuGoldenMatmulF32)->Arg(kSize)->UseRealTime()->Unit(benchmark::kMillisecond);

// BENCHMARK_MAIN plus what the report needs to say about the BLAS and the half conversions.
int main(int argc, char** argv) {
  benchmark::AddCustomContext("openblas", openblas_get_config());
  benchmark::AddCustomContext("f16c", has_f16c() ? "yes" : "no");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
