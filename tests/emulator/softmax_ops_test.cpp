// Softmax, LogSoftmax: CPU golden vs hand-computed values, NPU vs CPU in f32 and f16, a non-last
// axis, large logits, the precision-sensitive category, and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class SoftmaxOpsTest : public OpTest {};

// Softmax (or log-softmax) of `x` over `axis` of `shape`, straight from the definition, in f64.
std::vector<double> reference(const std::vector<double>& x, const Shape& shape, std::size_t axis, bool log) {
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t len = shape[axis];
  std::vector<double> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * len + j) * inner + i); };
      double sum = 0;
      for (std::int64_t j = 0; j < len; ++j) sum += std::exp(x[at(j)]);
      for (std::int64_t j = 0; j < len; ++j) y[at(j)] = log ? x[at(j)] - std::log(sum) : std::exp(x[at(j)]) / sum;
    }
  }
  return y;
}

void expect_npu_matches_cpu(const Tensor& x, std::int64_t axis, bool log) {
  auto run = [&](const Tensor& t) { return log ? ops::log_softmax(t, axis) : ops::softmax(t, axis); };
  const auto tol = default_tolerance(x.dtype());
  EXPECT_TRUE(all_close(to_vec(run(on_npu({x})[0])), to_vec(run(x)), tol.rtol, tol.atol))
      << (log ? "LogSoftmax" : "Softmax") << " axis " << axis << " " << dtype_name(x.dtype());
}

}  // namespace

TEST_F(SoftmaxOpsTest, CpuMatchesHandComputedValues) {
  const Tensor x = floats({1, 2, 3, 0, 0, 0}, {2, 3});
  EXPECT_TRUE(all_close(to_vec(ops::softmax(x)),
                        {0.09003057317038046, 0.24472847105479764, 0.6652409557748219, 1 / 3.0, 1 / 3.0, 1 / 3.0}, 1e-7,
                        0));
  const double lse = 3.4076059644443806;  // log(e + e² + e³)
  EXPECT_TRUE(all_close(to_vec(ops::log_softmax(x)),
                        {1 - lse, 2 - lse, 3 - lse, -std::log(3.0), -std::log(3.0), -std::log(3.0)}, 1e-7, 0));
}

TEST_F(SoftmaxOpsTest, LargeLogitsDoNotOverflow) {
  const std::vector<double> soft{0.2689414213699951, 0.7310585786300049};
  const std::vector<double> logsoft{-1.3132616875182228, -0.31326168751822286};
  for (DType dt : {DType::kF32, DType::kF16}) {
    const auto tol = default_tolerance(dt);
    // The last axis (contiguous rows) and a first axis (the strided path).
    for (const auto& [shape, axis] : {std::pair{Shape{1, 2}, -1}, std::pair{Shape{2, 1}, 0}}) {
      const Tensor x = floats({1000, 1001}, shape, dt);
      for (const Tensor& in : {x, on_npu({x})[0]}) {
        EXPECT_TRUE(all_close(to_vec(ops::softmax(in, axis)), soft, tol.rtol, tol.atol)) << dtype_name(dt);
        EXPECT_TRUE(all_close(to_vec(ops::log_softmax(in, axis)), logsoft, tol.rtol, tol.atol)) << dtype_name(dt);
      }
    }
  }
  // Nothing saturated either.
  Runtime::get().device().set_overflow_mode(OverflowMode::kSaturation);
  const Tensor y = ops::softmax(on_npu({floats({1000, 1001, -1000}, {3}, DType::kF16)})[0]);
  EXPECT_TRUE(all_close(to_vec(y), {0.2689414213699951, 0.7310585786300049, 0}, 1e-3, 1e-5));
  EXPECT_FALSE(Runtime::get().device().float_status());
}

TEST_F(SoftmaxOpsTest, NonLastAxisMatchesDefinition) {
  const Shape shape{2, 3, 4};
  const Tensor x = Tensor::randn(shape, DType::kF32, DeviceRef::cpu(), 7);
  for (std::int64_t axis : {0, 1, -2}) {
    const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + 3 : axis);
    EXPECT_TRUE(all_close(to_vec(ops::softmax(x, axis)), reference(to_vec(x), shape, a, false), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(to_vec(ops::log_softmax(x, axis)), reference(to_vec(x), shape, a, true), 1e-6, 1e-7));
    expect_npu_matches_cpu(x, axis, false);
    expect_npu_matches_cpu(x, axis, true);
  }
}

TEST_F(SoftmaxOpsTest, NpuMatchesCpuInF32AndF16) {
  for (DType dt : {DType::kF32, DType::kF16}) {
    const Tensor x = Tensor::randn({5, 37}, dt, DeviceRef::cpu(), 11, 3.0f);
    for (std::int64_t axis : {-1, 0}) {
      expect_npu_matches_cpu(x, axis, false);
      expect_npu_matches_cpu(x, axis, true);
    }
  }
}

TEST_F(SoftmaxOpsTest, StaysF32UnderMixPrecisionButNotForceFp16) {
  // A wide row of small logits: f16 rounding of the results shows against the f32 tolerance.
  const Tensor x = Tensor::randn({2, 64}, DType::kF32, DeviceRef::cpu(), 3);
  const auto golden = to_vec(ops::softmax(x));
  const auto tol = default_tolerance(DType::kF32);
  Runtime::get().device().set_precision_mode(PrecisionMode::kAllowMixPrecision);
  EXPECT_TRUE(all_close(to_vec(ops::softmax(on_npu({x})[0])), golden, tol.rtol, tol.atol));
  Runtime::get().device().set_precision_mode(PrecisionMode::kForceFp16);
  const auto forced = to_vec(ops::softmax(on_npu({x})[0]));
  EXPECT_FALSE(all_close(forced, golden, tol.rtol, 0));
  EXPECT_TRUE(all_close(forced, golden, 2e-3, 1e-5));  // f16 inputs and outputs: a few f16 ulps
}

TEST_F(SoftmaxOpsTest, BadArgumentsAreInvalid) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(ops::softmax(x, 2), InvalidArgument);
  EXPECT_THROW(ops::log_softmax(x, -3), InvalidArgument);
  EXPECT_THROW(ops::softmax(on_npu({x})[0], 5), InvalidArgument);
  const std::vector<std::int64_t> ints{1, 2};
  EXPECT_THROW(ops::softmax(Tensor::from_ints(ints, {2}, DType::kI32)), InvalidArgument);
}
