// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, and
// CANN's ReduceAll / ReduceAny (torch.all / torch.any: whether every / some value is non-zero, a bool
// output; NaN counts as non-zero; empty: true / false), with the axis conventions of reduce_ops.cpp
// ('axes', empty = all; 'keepdims'; 'noop_with_empty_axes'; see reduce_util.h).
//
// NPU: floating values accumulate in f32 (sums over 64 lanes folded by a tree, products in order),
// rounded to the storage dtype by store(). CPU golden: f64, in order. ReduceLogSumExp subtracts the
// maximum first (max + log Σ exp(x - max)) on both backends, so large inputs do not overflow.
// Integer inputs: Min, Prod, L1 and SumSquare are exact in int64 and wrap to the storage type; L2,
// LogSum and LogSumExp are computed in floating point and truncated, as ONNX's reference does.
// Empty reductions: Min +inf (the type's maximum for integers), Prod 1, L1 / L2 / SumSquare 0,
// LogSum and LogSumExp -inf. With noop_with_empty_axes and no axes, each element is reduced alone:
// L1 / L2 give |x|, SumSquare x², LogSum log x (the ONNX spec as clarified by onnx/onnx#7394 and
// onnxruntime#26436; the older text said the input is returned unchanged).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reduce_util.h"

namespace npuscope::emulator::kernels {
namespace {

using reduction::ReducePlan;

enum class Op { kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

constexpr char kReduceMin[] = "ReduceMin";
constexpr char kReduceProd[] = "ReduceProd";
constexpr char kReduceL1[] = "ReduceL1";
constexpr char kReduceL2[] = "ReduceL2";
constexpr char kReduceSumSquare[] = "ReduceSumSquare";
constexpr char kReduceLogSum[] = "ReduceLogSum";
constexpr char kReduceLogSumExp[] = "ReduceLogSumExp";
constexpr char kReduceAll[] = "ReduceAll";
constexpr char kReduceAny[] = "ReduceAny";

template <const char* kName>
std::vector<TensorMeta> infer_reduce(std::span<const TensorMeta> in, const Attrs& attrs) {
  return {{reduction::reduced_shape(in[0].shape, attrs, kName), in[0].dtype}};
}

// NaN propagates: once `m` is NaN no comparison replaces it.
template <class V>
V min_of(V m, V v) {
  return v < m || v != v ? v : m;
}
template <class V>
V max_of(V m, V v) {
  return v > m || v != v ? v : m;
}

template <class T>
T log_sum_exp(const T* v, std::int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t i = 0; i < n; ++i) m = max_of(m, v[i]);
  if (!std::isfinite(m)) return m;  // all -inf (or empty): -inf; +inf or NaN stays
  std::vector<T> e(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = std::exp(v[i] - m);
  return m + std::log(reduction::sum_values(e.data(), n));
}

// One output from its n values, in the floating accumulation type T.
template <class T>
T reduce_float(Op op, const T* v, std::int64_t n) {
  switch (op) {
    case Op::kMin: {
      T m = std::numeric_limits<T>::infinity();
      for (std::int64_t i = 0; i < n; ++i) m = min_of(m, v[i]);
      return m;
    }
    case Op::kProd: {
      T p = 1;
      for (std::int64_t i = 0; i < n; ++i) p *= v[i];
      return p;
    }
    case Op::kLogSumExp: return log_sum_exp(v, n);
    default: break;
  }
  std::vector<T> t(v, v + n);
  for (auto& e : t) e = op == Op::kL1 ? std::fabs(e) : op == Op::kLogSum ? e : e * e;
  const T s = reduction::sum_values(t.data(), n);
  if (op == Op::kL2) return std::sqrt(s);
  if (op == Op::kLogSum) return std::log(s);
  return s;
}

// The largest value of an integer storage type (the identity of an integer min).
std::int64_t int_max(DType t) {
  switch (t) {
    case DType::kI8: return std::numeric_limits<std::int8_t>::max();
    case DType::kU8: return std::numeric_limits<std::uint8_t>::max();
    case DType::kI32: return std::numeric_limits<std::int32_t>::max();
    case DType::kBool: return 1;
    default: return std::numeric_limits<std::int64_t>::max();
  }
}

// Exact integer reductions (wrapping as the storage type would, by store_i64).
std::int64_t reduce_int(Op op, const std::int64_t* v, std::int64_t n, std::int64_t identity_min) {
  std::uint64_t acc = op == Op::kProd ? 1 : 0;  // unsigned: wraps without undefined behaviour
  std::int64_t m = identity_min;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<std::uint64_t>(v[i]);
    switch (op) {
      case Op::kMin: m = std::min(m, v[i]); break;
      case Op::kProd: acc *= u; break;
      case Op::kL1: acc += v[i] < 0 ? 0 - u : u; break;
      default: acc += u * u; break;  // kSumSquare
    }
  }
  return op == Op::kMin ? m : static_cast<std::int64_t>(acc);
}

bool exact_integer_op(Op op) { return op == Op::kMin || op == Op::kProd || op == Op::kL1 || op == Op::kSumSquare; }

// T: the floating accumulation type (float on the NPU, double on the CPU).
template <class T, Op kOp>
void reduce_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const ReducePlan plan = reduction::plan_reduce(*x.shape, ctx.attrs);
  if (!is_floating(x.dtype) && exact_integer_op(kOp)) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(x.numel)), r(plan.outputs());
    load_i64(x, v.data());
    const std::int64_t identity = int_max(x.dtype);
    reduction::for_each_output(v, plan, [&](std::size_t o, const std::int64_t* run, std::int64_t n) {
      r[o] = reduce_int(kOp, run, n, identity);
    });
    store_i64(y, r.data());
    return;
  }
  std::vector<T> r(plan.outputs());
  reduction::for_each_output(load<T>(x, ctx), plan,
                             [&](std::size_t o, const T* run, std::int64_t n) { r[o] = reduce_float(kOp, run, n); });
  store<T>(y, r.data(), ctx);
}

template <const char* kName>
std::vector<TensorMeta> infer_truth(std::span<const TensorMeta> in, const Attrs& attrs) {
  return {{reduction::reduced_shape(in[0].shape, attrs, kName), DType::kBool}};
}

// ReduceAll (kAll) / ReduceAny over the truth of each value (a compare with zero: nothing to round).
template <class T, bool kAll>
void truth_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const ReducePlan plan = reduction::plan_reduce(*x.shape, ctx.attrs);
  std::vector<std::uint8_t> truth(static_cast<std::size_t>(x.numel));
  if (is_floating(x.dtype)) {
    const std::vector<T> v = load<T>(x, ctx);
    for (std::size_t i = 0; i < v.size(); ++i) truth[i] = v[i] != T(0);
  } else {
    std::vector<std::int64_t> v(truth.size());
    load_i64(x, v.data());
    for (std::size_t i = 0; i < v.size(); ++i) truth[i] = v[i] != 0;
  }
  std::vector<std::int64_t> r(plan.outputs());
  reduction::for_each_output(truth, plan, [&](std::size_t o, const std::uint8_t* run, std::int64_t n) {
    const auto is_true = [](std::uint8_t t) { return t != 0; };
    r[o] = kAll ? std::all_of(run, run + n, is_true) : std::any_of(run, run + n, is_true);
  });
  store_i64(y, r.data());
}

// Per input element: a compare (Min), a multiply, an abs + add, a square + add, an exp + add.
template <int kFlops>
KernelCost cost_reduce(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.flops = kFlops * static_cast<double>(in[0].numel());
  return c;
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceMin,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceMin>,
                              .cost = cost_reduce<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceProd,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceProd>,
                              .cost = cost_reduce<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceL1,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceL1>,
                              .cost = cost_reduce<2>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceL2,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceL2>,
                              .cost = cost_reduce<2>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceSumSquare,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceSumSquare>,
                              .cost = cost_reduce<2>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceLogSum,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceLogSum>,
                              .cost = cost_reduce<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceLogSumExp,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceLogSumExp>,
                              .cost = cost_reduce<4>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceAll,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_truth<kReduceAll>,
                              .cost = cost_reduce<1>});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceAny,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_truth<kReduceAny>,
                              .cost = cost_reduce<1>});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceMin, reduce_kernel, Op::kMin);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceProd, reduce_kernel, Op::kProd);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceL1, reduce_kernel, Op::kL1);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceL2, reduce_kernel, Op::kL2);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceSumSquare, reduce_kernel, Op::kSumSquare);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceLogSum, reduce_kernel, Op::kLogSum);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceLogSumExp, reduce_kernel, Op::kLogSumExp);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceAll, truth_kernel, true);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceAny, truth_kernel, false);

}  // namespace npuscope::emulator::kernels
