// compare_tensors (comparator/src/tensor_metrics.cpp): msprobe's metrics on small hand-computed
// cases, mixed dtypes, NaN/Inf, the edge cases of the contract, allclose at each dtype's tolerance
// boundary, and a large random tensor against a naive long-double reference.
#include "npuscope/comparator/tensor_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/float16.h"

using namespace npuscope;
using comparator::compare_tensors;
using comparator::TensorMetrics;
using emulator::DType;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// RelErr's eps where b == 0, as msprobe's newest get_relative_err: float64's (2^-52) when either side
// is f64 or no float, float32's (2^-23) for pairs of f16, bf16 and f32.
constexpr double kEps = 2.220446049250313e-16;
constexpr double kF32Eps = 1.1920928955078125e-07;

// A dumped tensor: raw little-endian elements of `dtype`.
struct Raw {
  std::vector<unsigned char> bytes;
  DType dtype = DType::kF32;
  std::size_t numel = 0;
  comparator::TensorData view() const { return {bytes.data(), static_cast<std::int32_t>(dtype), numel, bytes.size()}; }
};

template <class T>
Raw raw(DType dtype, const std::vector<T>& values) {
  Raw r;
  r.dtype = dtype;
  r.numel = values.size();
  r.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(r.bytes.data(), values.data(), r.bytes.size());
  return r;
}
Raw f32(const std::vector<float>& v) { return raw(DType::kF32, v); }
Raw f64(const std::vector<double>& v) { return raw(DType::kF64, v); }
Raw f16(const std::vector<float>& v) {
  std::vector<std::uint16_t> h;
  for (float x : v) h.push_back(emulator::float_to_half_bits(x));
  return raw(DType::kF16, h);
}
Raw bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> h;
  for (float x : v) h.push_back(emulator::float_to_bf16_bits(x));
  return raw(DType::kBF16, h);
}

TensorMetrics compare(const Raw& npu, const Raw& golden) { return compare_tensors(npu.view(), golden.view()); }

// What a comparable case must give: each metric to a few ulps (NaN: NaN).
struct Expected {
  double cosine, max_abs_err, max_rel_err, one_thousandth_ratio, five_thousandth_ratio, rmse, euclidean, rel_euclidean;
};

void expect_metrics(const TensorMetrics& m, const Expected& e) {
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_TRUE(m.why.empty()) << m.why;
  const std::pair<const char*, std::pair<double, double>> metrics[] = {
      {"cosine", {m.cosine, e.cosine}},
      {"max_abs_err", {m.max_abs_err, e.max_abs_err}},
      {"max_rel_err", {m.max_rel_err, e.max_rel_err}},
      {"one_thousandth_ratio", {m.one_thousandth_ratio, e.one_thousandth_ratio}},
      {"five_thousandth_ratio", {m.five_thousandth_ratio, e.five_thousandth_ratio}},
      {"rmse", {m.rmse, e.rmse}},
      {"euclidean", {m.euclidean, e.euclidean}},
      {"rel_euclidean", {m.rel_euclidean, e.rel_euclidean}}};
  for (const auto& [name, values] : metrics) {
    if (std::isnan(values.second)) {
      EXPECT_TRUE(std::isnan(values.first)) << name << ": " << values.first;
    } else {
      EXPECT_DOUBLE_EQ(values.first, values.second) << name;
    }
  }
}

void expect_not_comparable(const TensorMetrics& m) {
  EXPECT_FALSE(m.comparable);
  EXPECT_FALSE(m.allclose);
  for (double v : {m.cosine, m.max_abs_err, m.max_rel_err, m.one_thousandth_ratio, m.five_thousandth_ratio, m.rmse,
                   m.euclidean, m.rel_euclidean})
    EXPECT_TRUE(std::isnan(v)) << v;
}

TEST(TensorMetrics, IdenticalVectors) {
  const auto m = compare(f32({1.5f, -2, 3, 0.25f}), f32({1.5f, -2, 3, 0.25f}));
  expect_metrics(m, {1, 0, 0, 1, 1, 0, 0, 0});
  EXPECT_TRUE(m.allclose);
  EXPECT_EQ(m.allclose_mismatches, 0);
  EXPECT_EQ(m.nan_inf_matched, 0);
  EXPECT_EQ(m.nan_inf_mismatches, 0);
}

TEST(TensorMetrics, OrthogonalVectors) {
  // d = (1, -1); RelErr: 1 vs 0 is |(1 + eps) - eps| / eps = 2^23 (f32's eps), 0 vs 1 is 1.
  const auto m = compare(f32({1, 0}), f32({0, 1}));
  expect_metrics(m, {0, 1, 0x1p23, 0, 0, 1, std::sqrt(2.0), std::sqrt(2.0)});
  EXPECT_FALSE(m.allclose);
  EXPECT_EQ(m.allclose_mismatches, 2);
}

TEST(TensorMetrics, OppositeVectors) {
  const auto m = compare(f64({1, 2, 3}), f64({-1, -2, -3}));
  expect_metrics(m, {-1, 6, 2, 0, 0, std::sqrt(56.0 / 3), std::sqrt(56.0), 2});
}

TEST(TensorMetrics, EveryMetricOnASmallCase) {
  // n.b = 83, |n|^2 = 79, |b|^2 = 88, d = (0, 0, 0, -1, 0), RelErr = (0, 0, 0, 0.2, 0); the fifth
  // element is the kernel's padded tail.
  const auto m = compare(f32({1, 2, 3, 4, 7}), f32({1, 2, 3, 5, 7}));
  expect_metrics(m, {83 / std::sqrt(79.0 * 88.0), 1, 0.2, 0.8, 0.8, std::sqrt(1.0 / 5), 1, std::sqrt(1.0 / 88)});
  EXPECT_EQ(m.allclose_mismatches, 1);
}

TEST(TensorMetrics, RelErrWithZerosInGolden) {
  // 0 vs 0: RelErr 0; 1e-20 vs 0: |(1e-20 + eps) - eps| / eps ~ 4.5e-5; 1 vs 0: 2^52; 3 vs 2: 0.5.
  const auto m = compare(f64({0, 1e-20, 1, 3}), f64({0, 0, 0, 2}));
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_EQ(m.max_rel_err, 0x1p52);
  EXPECT_DOUBLE_EQ(m.one_thousandth_ratio, 0.5);
  EXPECT_DOUBLE_EQ(m.five_thousandth_ratio, 0.5);
  EXPECT_EQ(m.max_abs_err, 1);
  // Only the zeros: Σb² = 0 with Σd² > 0 gives an infinite relative Euclidean distance.
  const auto zeros = compare(f64({0, 1e-20, 1}), f64({0, 0, 0}));
  EXPECT_EQ(zeros.rel_euclidean, kInf);
  EXPECT_TRUE(std::isnan(zeros.cosine));  // the golden norm is 0, the NPU's is not
  // eps is added to n too, rounding included (not |n| / eps).
  const auto small = compare(f64({0, 1e-20}), f64({0, 0}));
  EXPECT_EQ(small.max_rel_err, std::fabs((1e-20 + kEps) - kEps) / kEps);
  EXPECT_NE(small.max_rel_err, 1e-20 / kEps);
}

TEST(TensorMetrics, RelErrEpsIsTheDtypesOwn) {
  // msprobe's get_relative_err: np.finfo(np.result_type(n, b, np.float32)).eps where b == 0. In f32,
  // 1e-10 vs 0 is |(1e-10 + 2^-23) - 2^-23| / 2^-23 ~ 8.4e-4, below One Thousandth; in f64 it is
  // 1e-10 / 2^-52 ~ 4.5e5.
  const auto f = compare(f32({1e-10f, 1}), f32({0, 1}));
  ASSERT_TRUE(f.comparable) << f.why;
  EXPECT_NEAR(f.max_rel_err, 1e-10 / kF32Eps, 1e-6);
  EXPECT_EQ(f.one_thousandth_ratio, 1.0);
  const auto d = compare(f64({1e-10, 1}), f64({0, 1}));
  EXPECT_NEAR(d.max_rel_err, 1e-10 / kEps, 1.0);
  EXPECT_EQ(d.one_thousandth_ratio, 0.5);
  // f16 and bf16 pairs are float32's too (np.result_type(f16, f16, f32) is f32; bf16 is read as f32).
  EXPECT_EQ(compare(f16({0.0f, 1}), f32({0, 1})).max_rel_err, 0);
  EXPECT_EQ(compare(bf16({1e-10f, 1}), bf16({0, 1})).one_thousandth_ratio, 1.0);
  // Either side f64, or an integer or bool (cast to float64 first): float64's.
  EXPECT_EQ(compare(f32({1e-10f, 1}), f64({0, 1})).one_thousandth_ratio, 0.5);
  const auto i = compare(f32({1e-10f, 1}), raw<std::int32_t>(DType::kI32, {0, 1}));
  EXPECT_NEAR(i.max_rel_err, static_cast<double>(1e-10f) / kEps, 1.0);
}

TEST(TensorMetrics, ThousandthRatiosAtTheirBoundaries) {
  // RelErr = 1/1000 and 1/200 are exactly the thresholds (strict <); a hair below counts.
  for (const bool as_f32 : {true, false}) {
    const std::vector<double> npu = {1001, std::nextafter(1001.0, 0.0), 201, std::nextafter(201.0, 0.0), 1000.5};
    const std::vector<double> golden = {1000, 1000, 200, 200, 1000};
    const auto m =
        as_f32 ? compare(f32({1001.0f, std::nextafter(1001.0f, 0.0f), 201, std::nextafter(201.0f, 0.0f), 1000.5f}),
                         f32({1000, 1000, 200, 200, 1000}))
               : compare(f64(npu), f64(golden));
    ASSERT_TRUE(m.comparable) << m.why;
    // < 0.001: the hair below 1001 and 1000.5; < 0.005: also 1001 and the hair below 201.
    EXPECT_DOUBLE_EQ(m.one_thousandth_ratio, 2.0 / 5) << as_f32;
    EXPECT_DOUBLE_EQ(m.five_thousandth_ratio, 4.0 / 5) << as_f32;
    EXPECT_DOUBLE_EQ(m.max_rel_err, 0.005) << as_f32;
  }
}

TEST(TensorMetrics, F16AgainstF32ComparesValues) {
  const float tenth = 0.1f, tiny = 0x1p-24f;  // tiny: the smallest f16 subnormal
  const auto same = compare(f16({1, 0.5f, -2, 65504, tiny}), f32({1, 0.5f, -2, 65504, tiny}));
  ASSERT_TRUE(same.comparable) << same.why;
  EXPECT_EQ(same.max_abs_err, 0);
  EXPECT_TRUE(same.allclose);
  const auto m = compare(f16({tenth, 1}), f32({tenth, 1}));
  ASSERT_TRUE(m.comparable) << m.why;
  const double err = std::fabs(static_cast<double>(emulator::round_to_half(tenth)) - static_cast<double>(tenth));
  EXPECT_GT(err, 0);
  EXPECT_EQ(m.max_abs_err, err);
  EXPECT_EQ(m.max_rel_err, err / static_cast<double>(tenth));
  // An f16 NPU side against an f64 golden goes through the double kernel: same values, same result.
  const auto wide = compare(f16({tenth, 1}), f64({static_cast<double>(tenth), 1}));
  EXPECT_EQ(wide.max_abs_err, err);
}

TEST(TensorMetrics, Bf16IsTheUpperHalfOfAnF32) {
  const Raw npu = raw<std::uint16_t>(DType::kBF16, {0x3f80, 0x4049, 0xc000});  // 1, 3.140625, -2
  const auto m = compare(npu, f32({1, 3.140625f, -2}));
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_EQ(m.max_abs_err, 0);
  const auto pi = compare(npu, f32({1, 3.14159265f, -2}));
  EXPECT_EQ(pi.max_abs_err, std::fabs(3.140625 - static_cast<double>(3.14159265f)));
  EXPECT_EQ(compare(bf16({-0.5f, 8}), f64({-0.5, 8})).max_abs_err, 0);
}

TEST(TensorMetrics, IntegersAndBool) {
  const auto m = compare(raw<std::int8_t>(DType::kI8, {-128, 127, 0}), raw<std::int32_t>(DType::kI32, {-128, 127, 1}));
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_EQ(m.max_abs_err, 1);
  EXPECT_EQ(m.allclose_mismatches, 1);  // integers: exact
  EXPECT_EQ(compare(raw<std::uint8_t>(DType::kU8, {255}), raw<std::int8_t>(DType::kI8, {-1})).max_abs_err, 256);
  const std::int64_t big = (std::int64_t{1} << 40) + 3;
  const auto i64 = compare(raw<std::int64_t>(DType::kI64, {big, -big}), f64({static_cast<double>(big), -1e12}));
  EXPECT_EQ(i64.max_abs_err, static_cast<double>(big) - 1e12);
  // Bool: any non-zero byte is true (1).
  const auto b = compare(raw<std::uint8_t>(DType::kBool, {0, 1, 2}), raw<std::uint8_t>(DType::kU8, {0, 1, 1}));
  EXPECT_EQ(b.max_abs_err, 0);
  EXPECT_TRUE(b.allclose);
}

TEST(TensorMetrics, MatchedNanInfAreZeroed) {
  const auto m = compare(f32({NAN, INFINITY, -INFINITY, 1, 2}), f32({NAN, INFINITY, -INFINITY, 1, 2.5f}));
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_EQ(m.nan_inf_matched, 3);
  EXPECT_EQ(m.nan_inf_mismatches, 0);
  EXPECT_EQ(m.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(m.rmse, std::sqrt(0.25 / 5));  // zeroed positions stay in the count
  EXPECT_DOUBLE_EQ(m.one_thousandth_ratio, 4.0 / 5);
  EXPECT_DOUBLE_EQ(m.cosine, 6 / std::sqrt(5 * 7.25));
  EXPECT_EQ(m.allclose_mismatches, 1);
  // f16 infinity against f32's, and NaN in an f64 golden: matched across dtypes.
  const auto mixed = compare(f16({INFINITY, NAN, 1}), f64({kInf, kNaN, 1}));
  ASSERT_TRUE(mixed.comparable) << mixed.why;
  EXPECT_EQ(mixed.nan_inf_matched, 2);
  EXPECT_TRUE(mixed.allclose);
}

TEST(TensorMetrics, MismatchedNanInfMakeItImpossible) {
  // NaN vs 1, +inf vs -inf, 1 vs NaN differ; -inf vs -inf matches.
  const auto m = compare(f32({NAN, INFINITY, 1, -INFINITY, 5}), f32({1, -INFINITY, NAN, -INFINITY, 5}));
  expect_not_comparable(m);
  EXPECT_EQ(m.why, "NaN/Inf at 3 positions differ");
  EXPECT_EQ(m.nan_inf_mismatches, 3);
  EXPECT_EQ(m.nan_inf_matched, 1);
  EXPECT_EQ(m.allclose_mismatches, 3);
}

TEST(TensorMetrics, NanInfInALaterBlock) {
  // One block in several takes the NaN/Inf path; the other elements of that block still count.
  std::vector<float> n(10000), b(10000);
  for (std::size_t i = 0; i < n.size(); ++i) b[i] = n[i] = static_cast<float>(i % 7) - 3;
  n[100] = 1;  // b[100] = 100 % 7 - 3 = -1: d = 2
  n[5000] = b[5000] = NAN;
  n[9999] = b[9999] = -INFINITY;
  const auto m = compare(f32(n), f32(b));
  ASSERT_TRUE(m.comparable) << m.why;
  EXPECT_EQ(m.nan_inf_matched, 2);
  EXPECT_EQ(m.max_abs_err, 2);
  EXPECT_DOUBLE_EQ(m.rmse, std::sqrt(4.0 / 10000));
  n[6000] = NAN;
  const auto bad = compare(f32(n), f32(b));
  expect_not_comparable(bad);
  EXPECT_EQ(bad.nan_inf_mismatches, 1);
}

TEST(TensorMetrics, ElementCountMismatch) {
  const auto m = compare(f32({1, 2, 3}), f32({1, 2}));
  expect_not_comparable(m);
  EXPECT_EQ(m.why, "element counts differ: NPU 3, golden 2");
}

TEST(TensorMetrics, UnknownDtypeOrMissingData) {
  Raw bad = f32({1, 2});
  bad.dtype = static_cast<DType>(42);
  const auto m = compare(bad, f32({1, 2}));
  expect_not_comparable(m);
  EXPECT_EQ(m.why, "unknown NPU dtype 42");
  const auto missing = compare_tensors({nullptr, 0, 2}, f32({1, 2}).view());
  expect_not_comparable(missing);
  EXPECT_EQ(missing.why, "no NPU data for 2 elements");
}

// The kernel's boundary: numel and dtype that claim more than the bytes given are refused before any
// element is read (ASan would see the read past the end otherwise).
TEST(TensorMetrics, NeverReadsPastTheBytesGiven) {
  const Raw n = f32({1, 2, 3, 4}), b = f32({1, 2, 3, 4});
  comparator::TensorData wide = n.view();
  wide.dtype = static_cast<std::int32_t>(DType::kF64);  // 4 f32 read as 4 f64: 32 bytes of 16
  auto m = compare_tensors(wide, b.view());
  expect_not_comparable(m);
  EXPECT_EQ(m.why, "NPU data holds 16 bytes, 4 elements of 8 bytes need more");
  comparator::TensorData many_n = n.view(), many_b = b.view();
  many_n.numel = many_b.numel = 400000;
  m = compare_tensors(many_n, many_b);
  expect_not_comparable(m);
  EXPECT_EQ(m.why, "NPU data holds 16 bytes, 400000 elements of 4 bytes need more");
  many_n.numel = 4;
  many_b.numel = 4;
  many_b.bytes = 15;
  EXPECT_EQ(compare_tensors(many_n, many_b).why, "golden data holds 15 bytes, 4 elements of 4 bytes need more");
}

TEST(TensorMetrics, SingleElement) {
  // The cosine is n/a for one element.
  expect_metrics(compare(f32({2}), f32({1})), {kNaN, 1, 1, 0, 0, 1, 1, 1});
}

TEST(TensorMetrics, ZeroNorms) {
  const auto both = compare(f32({0, 0, 0}), f32({0, 0, 0}));
  ASSERT_TRUE(both.comparable) << both.why;
  EXPECT_EQ(both.cosine, 1);
  EXPECT_EQ(both.rel_euclidean, 0);
  EXPECT_EQ(both.one_thousandth_ratio, 1);  // 0 vs 0: RelErr 0
  EXPECT_TRUE(both.allclose);
  EXPECT_EQ(compare(f64({1e-200, 0}), f64({0, 1e-200})).cosine, 1);  // both norms below eps
  EXPECT_TRUE(std::isnan(compare(f32({0, 0}), f32({1, 2})).cosine));
  EXPECT_TRUE(std::isnan(compare(f32({1, 2}), f32({0, 0})).cosine));
}

TEST(TensorMetrics, EmptyTensors) {
  const auto m = compare_tensors({nullptr, 0, 0}, {nullptr, 1, 0});
  expect_metrics(m, {1, 0, 0, 1, 1, 0, 0, 0});
  EXPECT_TRUE(m.allclose);
}

TEST(TensorMetrics, UnalignedDataGivesTheSameResult) {
  const std::vector<float> n = {1.25f, -3, 7, 0.5f, 9, 11}, b = {1, -3, 7.5f, 0.5f, 9, 10};
  Raw shifted = f32(n);
  shifted.bytes.insert(shifted.bytes.begin(), 0);  // the elements now start at an odd address
  const comparator::TensorData view{shifted.bytes.data() + 1, 0, n.size(), n.size() * sizeof(float)};
  const auto a = compare(f32(n), f32(b)), u = compare_tensors(view, f32(b).view());
  EXPECT_EQ(a.cosine, u.cosine);
  EXPECT_EQ(a.rmse, u.rmse);
  EXPECT_EQ(a.max_rel_err, u.max_rel_err);
}

// The largest NPU value (of type T) within golden's allclose bound, and the next one, outside it.
template <class T>
std::pair<T, T> allclose_edge(double golden, double rtol, double atol) {
  const double bound = atol + rtol * std::fabs(golden);
  T x = static_cast<T>(golden + bound);
  while (static_cast<double>(x) - golden > bound) x = std::nextafter(x, static_cast<T>(-kInf));
  while (static_cast<double>(std::nextafter(x, static_cast<T>(kInf))) - golden <= bound)
    x = std::nextafter(x, static_cast<T>(kInf));
  return {x, std::nextafter(x, static_cast<T>(kInf))};
}

TEST(TensorMetrics, AllcloseAtEachDtypesToleranceBoundary) {
  struct Case {
    DType golden;
    double rtol, atol;
  };
  const Case cases[] = {{DType::kF16, 1e-3, 1e-5}, {DType::kBF16, 1.6e-2, 1e-5}, {DType::kF32, 1.3e-6, 1e-5}};
  for (const Case& c : cases) {
    const auto tol = comparator::allclose_tolerance(static_cast<std::int32_t>(c.golden));
    EXPECT_EQ(tol.rtol, c.rtol);
    EXPECT_EQ(tol.atol, c.atol);
    for (const float golden : {0.0f, 1.0f, -3.0f, 256.0f}) {  // exact in f16, bf16 and f32
      const auto [inside, outside] = allclose_edge<float>(golden, c.rtol, c.atol);
      const Raw g = c.golden == DType::kF16 ? f16({golden}) : c.golden == DType::kBF16 ? bf16({golden}) : f32({golden});
      const auto in = compare(f32({inside}), g), out = compare(f32({outside}), g);
      EXPECT_TRUE(in.allclose) << static_cast<int>(c.golden) << " " << golden;
      EXPECT_EQ(in.allclose_mismatches, 0);
      EXPECT_FALSE(out.allclose) << static_cast<int>(c.golden) << " " << golden;
      EXPECT_EQ(out.allclose_mismatches, 1);
      EXPECT_TRUE(out.comparable);  // allclose is a column, not a reason for n/a
    }
  }
  for (const double golden : {0.0, 1.0, -3.0, 1e6}) {  // f64: through the double kernel
    const auto [inside, outside] = allclose_edge<double>(golden, 1e-7, 1e-7);
    EXPECT_TRUE(compare(f64({inside}), f64({golden})).allclose) << golden;
    EXPECT_FALSE(compare(f64({outside}), f64({golden})).allclose) << golden;
  }
  // Integer and bool goldens are exact, whatever the NPU side.
  EXPECT_TRUE(compare(f32({5}), raw<std::int32_t>(DType::kI32, {5})).allclose);
  EXPECT_FALSE(compare(f32({5.0001f}), raw<std::int32_t>(DType::kI32, {5})).allclose);
  EXPECT_FALSE(compare(f32({0.5f}), raw<std::uint8_t>(DType::kBool, {0})).allclose);
}

// The metrics as the definitions read, in long double, for the random tensors below.
struct Reference {
  long double nb = 0, nn = 0, bb = 0, dd = 0, max_abs = 0, max_rel = 0;
  std::int64_t below_1e3 = 0, below_5e3 = 0, violations = 0;
};

Reference reference(const std::vector<double>& npu, const std::vector<double>& golden, double rtol, double atol,
                    double eps) {
  Reference r;
  for (std::size_t i = 0; i < npu.size(); ++i) {
    long double n = npu[i], b = golden[i];
    if (!std::isfinite(npu[i])) n = b = 0;  // the tests below only hold matched NaN/Inf
    const long double d = n - b, e = b == 0 ? eps : 0;
    const long double rel = std::fabs((n + e) - (b + e)) / std::fabs(b + e);
    r.nb += n * b;
    r.nn += n * n;
    r.bb += b * b;
    r.dd += d * d;
    r.max_abs = std::max(r.max_abs, std::fabs(d));
    r.max_rel = std::max(r.max_rel, rel);
    r.below_1e3 += rel < 0.001L;
    r.below_5e3 += rel < 0.005L;
    r.violations += std::fabs(d) > atol + rtol * std::fabs(b);
  }
  return r;
}

void expect_rel_near(double actual, long double expected, const char* what) {
  EXPECT_LE(std::fabs(static_cast<long double>(actual) - expected), 1e-12L * std::fabs(expected))
      << what << ": " << actual << " vs " << static_cast<double>(expected);
}

void check_against_reference(const TensorMetrics& m, const Reference& r, std::size_t numel) {
  ASSERT_TRUE(m.comparable) << m.why;
  const auto count = static_cast<long double>(numel);
  expect_rel_near(m.cosine, r.nb / std::sqrt(r.nn * r.bb), "cosine");
  expect_rel_near(m.max_abs_err, r.max_abs, "max_abs_err");
  expect_rel_near(m.max_rel_err, r.max_rel, "max_rel_err");
  expect_rel_near(m.rmse, std::sqrt(r.dd / count), "rmse");
  expect_rel_near(m.euclidean, std::sqrt(r.dd), "euclidean");
  expect_rel_near(m.rel_euclidean, std::sqrt(r.dd / r.bb), "rel_euclidean");
  EXPECT_EQ(m.one_thousandth_ratio, static_cast<double>(r.below_1e3) / static_cast<double>(numel));
  EXPECT_EQ(m.five_thousandth_ratio, static_cast<double>(r.below_5e3) / static_cast<double>(numel));
  EXPECT_EQ(m.allclose_mismatches, r.violations);
}

// Golden ~ N(0, 1) with a few zeros (half of them against 0, half against small values) and matched
// NaN/Inf; NPU = golden * (1 + noise), the noise's
// scale spread so that every RelErr bucket is populated.
std::pair<std::vector<double>, std::vector<double>> random_pair(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> npu(n), golden(n);
  for (std::size_t i = 0; i < n; ++i) {
    golden[i] = i % 997 == 0 ? 0 : normal(rng);
    npu[i] = golden[i] * (1 + std::ldexp(normal(rng), -static_cast<int>(i % 20)));
    if (i % 1994 == 997) npu[i] = 1e-3 * normal(rng);  // x vs 0: a RelErr of ~x / eps
    if (i % 50021 == 7) npu[i] = golden[i] = i % 2 ? kNaN : -kInf;
  }
  return {npu, golden};
}

TEST(TensorMetrics, LargeRandomF32MatchesALongDoubleReference) {
  auto [npu, golden] = random_pair(300007, 1);
  std::vector<float> n(npu.begin(), npu.end()), b(golden.begin(), golden.end());
  for (std::size_t i = 0; i < npu.size(); ++i) npu[i] = n[i], golden[i] = b[i];  // the f32 values exactly
  const auto m = compare(f32(n), f32(b));
  check_against_reference(m, reference(npu, golden, 1.3e-6, 1e-5, kF32Eps), npu.size());
  EXPECT_EQ(m.nan_inf_matched, 6);
}

TEST(TensorMetrics, LargeRandomF64MatchesALongDoubleReference) {
  const auto [npu, golden] = random_pair(200003, 2);
  const auto m = compare(f64(npu), f64(golden));
  check_against_reference(m, reference(npu, golden, 1e-7, 1e-7, kEps), npu.size());
  EXPECT_EQ(m.nan_inf_matched, 4);
}

}  // namespace
