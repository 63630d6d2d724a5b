// Shared helpers for op tests: run one op on both backends and compare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::emulator::testing {

// torch.testing.assert_close defaults per dtype (rtol, atol).
struct Tolerance {
  double rtol, atol;
};
inline Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::kF16: return {1e-3, 1e-5};
    case DType::kBF16: return {1.6e-2, 1e-5};
    case DType::kF32: return {1.3e-6, 1e-5};
    default: return {0, 0};
  }
}

// Element-wise |a - b| <= atol + rtol * |b|, with NaN == NaN and equal infinities. Reports the first
// few mismatches with their index.
inline ::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                            double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size();
  }
  int bad = 0;
  std::string msg;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    const bool ok = (std::isnan(a) && std::isnan(e)) || a == e || std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (!ok && bad++ < 5) msg += " [" + std::to_string(i) + "] " + std::to_string(a) + " vs " + std::to_string(e) + ";";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << actual.size() << " elements differ:" << msg;
}

inline std::vector<double> to_vec(const Tensor& t) { return t.to_doubles(); }

// A cube op's NPU result against its CPU golden: the same dtype and shape, and within the dtype's
// tolerance, the f16 atol scaled by the accumulation length `taps` (f16 products summed in f32, one
// rounding of the output: two summation orders may differ by a few ulps of the running sum).
inline ::testing::AssertionResult cube_close_to_golden(const Tensor& npu, const Tensor& golden, std::int64_t taps) {
  if (npu.dtype() != golden.dtype() || npu.shape() != golden.shape()) {
    return ::testing::AssertionFailure() << "npu " << dtype_name(npu.dtype()) << " " << shape_str(npu.shape())
                                         << " vs golden " << dtype_name(golden.dtype()) << " "
                                         << shape_str(golden.shape());
  }
  Tolerance tol = default_tolerance(golden.dtype());
  if (golden.dtype() == DType::kF16) tol.atol *= static_cast<double>(taps);
  return all_close(to_vec(npu), to_vec(golden), tol.rtol, tol.atol) << " (" << dtype_name(golden.dtype()) << ")";
}

// A cpu tensor from float values, converted to `dtype`.
inline Tensor floats(std::vector<float> v, Shape shape, DType dtype = DType::kF32) {
  return Tensor::from_floats(v, std::move(shape), dtype);
}

// A 1-D cpu tensor from float values, converted to `dtype`.
inline Tensor floats_1d(const std::vector<float>& v, DType dtype = DType::kF32) {
  return Tensor::from_floats(v, {static_cast<std::int64_t>(v.size())}, dtype);
}

// A 1-D cpu tensor from integer values, stored as `dtype`.
inline Tensor ints_1d(const std::vector<std::int64_t>& v, DType dtype) {
  return Tensor::from_ints(v, {static_cast<std::int64_t>(v.size())}, dtype);
}

// Runs the one-output op `op` and returns its values.
inline std::vector<double> op_values(const char* op, std::vector<Tensor> inputs, const Attrs& attrs = {}) {
  return to_vec(call_op1(op, std::move(inputs), attrs));
}

// The raw bytes of a tensor (copied to the host), for bit-exact comparisons.
inline std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.cpu();
  std::vector<std::uint8_t> out(c.nbytes());
  if (!out.empty()) std::memcpy(out.data(), c.data<std::uint8_t>(), out.size());
  return out;
}

// Copies cpu tensors to npu:0 (undefined stay undefined).
inline std::vector<Tensor> on_npu(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const auto& x : xs) out.push_back(x.defined() ? x.to(DeviceRef::npu()) : Tensor());
  return out;
}

// The message of the emulator error that f() throws (InvalidArgument from an op, ModelError from
// an ONNX model), or "(nothing thrown)": for checks that an error names the op, the attribute or
// input, the bad value and the valid range.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const EmulatorError& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// Whether `text` contains every one of `parts` (the failure shows the text).
inline ::testing::AssertionResult mentions(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* p : parts) {
    if (text.find(p) == std::string::npos) return ::testing::AssertionFailure() << "'" << p << "' not in: " << text;
  }
  return ::testing::AssertionSuccess();
}

// Fresh runtime per test: default ascend910b, inf_nan, must_keep_origin_dtype.
class OpTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::configure({}); }
};

}  // namespace npuscope::emulator::testing
