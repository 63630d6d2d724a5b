// How fast does the comparator compute msprobe's metrics for a pair of dumped tensors?
//   CompareTensors/NPU_GOLDEN/N  compare_tensors() on N element pairs: an NPU tensor of dtype NPU
//                                against a golden one of dtype GOLDEN, the golden values ~ N(0, 1)
//                                and the NPU's the same with a relative noise of ~1e-4 (then rounded
//                                to the NPU dtype), as a real op's output would be. One thread.
//   CompareTensors/f32_f32_nan/N the f32 pair with a matched NaN every 65536 elements (one block in
//                                32 takes the NaN/Inf path).
// Counters:
//   bytes_per_second            bytes of ONE side read per second (the target: >= 1 GB/s of f32 data,
//                               i.e. 250M element pairs/s, per core)
//   both_sides_bytes_per_second bytes of both sides
//   elements_per_second         element pairs per second
// bench/report.py judges the f32_f32 case in its "Comparator" section.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "npuscope/comparator/tensor_metrics.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/float16.h"

using namespace npuscope;
using emulator::DType;

namespace {

constexpr std::int64_t kElements = std::int64_t{16} << 20;

// A dumped tensor: raw little-endian elements of `dtype`.
struct Raw {
  std::vector<unsigned char> bytes;
  DType dtype = DType::kF32;
  comparator::TensorData view() const {
    return {bytes.data(), static_cast<std::int32_t>(dtype), bytes.size() / emulator::dtype_size(dtype), bytes.size()};
  }
};

Raw encode(const std::vector<double>& values, DType dtype) {
  Raw r;
  r.dtype = dtype;
  r.bytes.resize(values.size() * emulator::dtype_size(dtype));
  unsigned char* out = r.bytes.data();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    if (dtype == DType::kF64) {
      std::memcpy(out + 8 * i, &values[i], 8);
    } else if (dtype == DType::kF16 || dtype == DType::kBF16) {
      const std::uint16_t h = dtype == DType::kF16 ? emulator::float_to_half_bits(f) : emulator::float_to_bf16_bits(f);
      std::memcpy(out + 2 * i, &h, 2);
    } else {
      std::memcpy(out + 4 * i, &f, 4);
    }
  }
  return r;
}

// Golden ~ N(0, 1); NPU = golden * (1 + 1e-4 * N(0, 1)); a shared NaN every `nan_every` elements.
std::pair<std::vector<double>, std::vector<double>> values(std::int64_t n, std::int64_t nan_every) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  std::vector<double> npu(static_cast<std::size_t>(n)), golden(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < golden.size(); ++i) {
    golden[i] = normal(rng);
    npu[i] = golden[i] * (1 + 1e-4 * normal(rng));
    if (nan_every != 0 && i % static_cast<std::size_t>(nan_every) == 0)
      npu[i] = golden[i] = std::numeric_limits<double>::quiet_NaN();
  }
  return {npu, golden};
}

void CompareTensors(benchmark::State& state, DType npu_dtype, DType golden_dtype, std::int64_t nan_every) {
  const std::int64_t n = state.range(0);
  const auto [npu_values, golden_values] = values(n, nan_every);
  const Raw npu = encode(npu_values, npu_dtype), golden = encode(golden_values, golden_dtype);
  comparator::TensorMetrics m;
  for (auto _ : state) {
    m = comparator::compare_tensors(npu.view(), golden.view());
    benchmark::DoNotOptimize(m);
  }
  if (!m.comparable || m.cosine < 0.99) state.SkipWithError(("unexpected result: " + m.why).c_str());
  const auto one_side = static_cast<double>(npu.bytes.size());
  const auto both = static_cast<double>(npu.bytes.size() + golden.bytes.size());
  using C = benchmark::Counter;
  state.counters["bytes_per_second"] = C(one_side, C::kIsIterationInvariantRate);
  state.counters["both_sides_bytes_per_second"] = C(both, C::kIsIterationInvariantRate);
  state.counters["elements_per_second"] = C(static_cast<double>(n), C::kIsIterationInvariantRate);
  state.counters["cosine"] = m.cosine;
}

}  // namespace

#define NPUSCOPE_COMPARE_CASE(name, npu, golden, nan_every) \
  BENCHMARK_CAPTURE(CompareTensors, name, npu, golden, nan_every)->Arg(kElements)->Unit(benchmark::kMillisecond)
NPUSCOPE_COMPARE_CASE(f32_f32, DType::kF32, DType::kF32, 0);
NPUSCOPE_COMPARE_CASE(f16_f32, DType::kF16, DType::kF32, 0);
NPUSCOPE_COMPARE_CASE(bf16_f32, DType::kBF16, DType::kF32, 0);
NPUSCOPE_COMPARE_CASE(f32_f64, DType::kF32, DType::kF64, 0);
NPUSCOPE_COMPARE_CASE(f32_f32_nan, DType::kF32, DType::kF32, 65536);

BENCHMARK_MAIN();
