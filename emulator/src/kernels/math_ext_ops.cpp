// The ONNX element-wise math ops beyond unary_ops.cpp / binary_ops.cpp, with ONNX's names:
//   Reciprocal, Floor, Ceil, Round (half to even), Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
//   Asinh, Acosh, Atanh   floating inputs, output like the input
//   Sign                  numeric; −1, 0 or 1 (±0 and NaN are kept)
//   IsNaN, IsInf          floating input, bool output; IsInf(detect_negative=1, detect_positive=1)
//   Mod(fmod=0)           numeric, numpy broadcasting. Integers: fmod=0 takes the divisor's sign
//                         (numpy.mod), fmod=1 the dividend's (C %); exact in int64, x mod 0 = 0.
//                         Floats: ONNX demands fmod=1 (C fmod, exact in any precision).
// NPU: computed in f32 and rounded to the output dtype per op; CPU golden: computed in f64. The
// predicates see the inputs as the NPU loads them: under a precision mode that lowers f32 to f16,
// IsInf(1e5) is true on the NPU, as it would be there.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_ext_util.h"

namespace npuscope::emulator::kernels {
namespace {

using ext::cost_flops;
using ext::elementwise_schema;
using ext::infer_float_unary;
using ext::infer_numeric_unary;

constexpr char kReciprocal[] = "Reciprocal", kFloor[] = "Floor", kCeil[] = "Ceil", kRound[] = "Round", kSign[] = "Sign",
               kSin[] = "Sin", kCos[] = "Cos", kTan[] = "Tan", kAsin[] = "Asin", kAcos[] = "Acos", kAtan[] = "Atan",
               kSinh[] = "Sinh", kCosh[] = "Cosh", kAsinh[] = "Asinh", kAcosh[] = "Acosh", kAtanh[] = "Atanh",
               kIsNaN[] = "IsNaN", kIsInf[] = "IsInf", kMod[] = "Mod";

// ---- floating unary ops -------------------------------------------------------------------------

// Captureless generic lambdas: their types name the function in one kernel template.
constexpr auto reciprocal_fn = [](auto x) { return decltype(x)(1) / x; };
constexpr auto floor_fn = [](auto x) { return std::floor(x); };
constexpr auto ceil_fn = [](auto x) { return std::ceil(x); };
constexpr auto round_fn = [](auto x) { return std::nearbyint(x); };  // default mode: half to even
constexpr auto sin_fn = [](auto x) { return std::sin(x); };
constexpr auto cos_fn = [](auto x) { return std::cos(x); };
constexpr auto tan_fn = [](auto x) { return std::tan(x); };
constexpr auto asin_fn = [](auto x) { return std::asin(x); };
constexpr auto acos_fn = [](auto x) { return std::acos(x); };
constexpr auto atan_fn = [](auto x) { return std::atan(x); };
constexpr auto sinh_fn = [](auto x) { return std::sinh(x); };
constexpr auto cosh_fn = [](auto x) { return std::cosh(x); };
constexpr auto asinh_fn = [](auto x) { return std::asinh(x); };
constexpr auto acosh_fn = [](auto x) { return std::acosh(x); };
constexpr auto atanh_fn = [](auto x) { return std::atanh(x); };

template <class T, class F>
void float_unary(KernelContext& c) {
  unary_kernel<T>(c, F{});
}

// ---- Sign ---------------------------------------------------------------------------------------

constexpr auto sign_fn = [](auto x) {
  using E = decltype(x);
  return x > E(0) ? E(1) : x < E(0) ? E(-1) : x;  // 0, -0 and NaN stay
};

template <class T>
void sign_kernel(KernelContext& c) {
  ext::numeric_unary_kernel<T>(c, sign_fn);
}

// ---- IsNaN / IsInf ------------------------------------------------------------------------------

template <const char* Op>
std::vector<TensorMeta> infer_predicate(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, Op);
  return {{in[0].shape, DType::kBool}};
}

template <class T>
void isnan_kernel(KernelContext& c) {
  unary_kernel<T>(c, [](T x) { return T(x != x); });
}

template <class T>
void isinf_kernel(KernelContext& c) {
  const bool negative = c.attrs.get_int("detect_negative", 1) != 0;
  const bool positive = c.attrs.get_int("detect_positive", 1) != 0;
  unary_kernel<T>(c, [negative, positive](T x) { return T(std::isinf(x) && (x > 0 ? positive : negative)); });
}

// ---- Mod ----------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_mod(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape shape = ext::broadcast_all(in, kMod);
  if (in[0].dtype == DType::kBool) fail(kMod, "inputs must be numeric, got bool");
  const std::int64_t fmod = attrs.get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) fail(kMod, "fmod must be 0 or 1, got " + std::to_string(fmod));
  if (is_floating(in[0].dtype) && fmod != 1) {
    fail(kMod, "fmod must be 1 for floating inputs (" + std::string(dtype_name(in[0].dtype)) + ")");
  }
  return {{shape, in[0].dtype}};
}

std::int64_t int_mod(std::int64_t a, std::int64_t b, bool c_fmod) {
  if (b == 0 || b == -1) return 0;  // x mod 0: 0 as numpy gives; b == -1 avoids INT64_MIN % -1
  std::int64_t r = a % b;           // the dividend's sign
  if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

template <class T>
void mod_kernel(KernelContext& c) {
  const bool c_fmod = c.attrs.get_int("fmod", 0) != 0;
  ext::numeric_binary_kernel<T>(c, [c_fmod](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      return int_mod(a, b, c_fmod);
    } else {
      return std::fmod(a, b);
    }
  });
}

}  // namespace

NPUSCOPE_REGISTER_OP(elementwise_schema(kReciprocal, 1, infer_float_unary<kReciprocal>, cost_flops<4>));  // a divide
NPUSCOPE_REGISTER_OP(elementwise_schema(kFloor, 1, infer_float_unary<kFloor>, cost_flops<1>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kCeil, 1, infer_float_unary<kCeil>, cost_flops<1>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kRound, 1, infer_float_unary<kRound>, cost_flops<1>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kSign, 1, infer_numeric_unary<kSign>, cost_flops<1>));
// Transcendentals: a range reduction and a polynomial (sinh/cosh: exps; inverse hyperbolics: a log).
NPUSCOPE_REGISTER_OP(elementwise_schema(kSin, 1, infer_float_unary<kSin>, cost_flops<10>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kCos, 1, infer_float_unary<kCos>, cost_flops<10>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kTan, 1, infer_float_unary<kTan>, cost_flops<14>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAsin, 1, infer_float_unary<kAsin>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAcos, 1, infer_float_unary<kAcos>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAtan, 1, infer_float_unary<kAtan>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kSinh, 1, infer_float_unary<kSinh>, cost_flops<10>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kCosh, 1, infer_float_unary<kCosh>, cost_flops<10>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAsinh, 1, infer_float_unary<kAsinh>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAcosh, 1, infer_float_unary<kAcosh>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kAtanh, 1, infer_float_unary<kAtanh>, cost_flops<12>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kIsNaN, 1, infer_predicate<kIsNaN>, cost_flops<1>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kIsInf, 1, infer_predicate<kIsInf>, cost_flops<2>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kMod, 2, infer_mod, cost_flops<4>));

NPUSCOPE_REGISTER_FLOAT_KERNELS(kReciprocal, float_unary, decltype(reciprocal_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kFloor, float_unary, decltype(floor_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kCeil, float_unary, decltype(ceil_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kRound, float_unary, decltype(round_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSign, sign_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSin, float_unary, decltype(sin_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kCos, float_unary, decltype(cos_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kTan, float_unary, decltype(tan_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAsin, float_unary, decltype(asin_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAcos, float_unary, decltype(acos_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAtan, float_unary, decltype(atan_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kSinh, float_unary, decltype(sinh_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kCosh, float_unary, decltype(cosh_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAsinh, float_unary, decltype(asinh_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAcosh, float_unary, decltype(acosh_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAtanh, float_unary, decltype(atanh_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kIsNaN, isnan_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kIsInf, isinf_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kMod, mod_kernel);

}  // namespace npuscope::emulator::kernels
