// CANN's foreach ops: one kernel over a whole list of tensors (torch_npu's aclnnForeachAddListV2,
// aclnnForeachMulScalarV2, ...; PyTorch's _foreach_* ops, which the optimizers call once a step for
// all parameters with foreach=True: SGD's add and mul, Adam's and AdamW's addcmul, sqrt, div, add
// and addcdiv, RMSprop's and Adagrad's the same).
//   ForeachAddList             (a0..aN-1, b0..bN-1; alpha)        a_i + alpha * b_i
//   ForeachMulList / DivList   (a0..aN-1, b0..bN-1)               a_i * b_i, a_i / b_i
//   ForeachAddScalar / MulScalar / DivScalar          (x0..xN-1; scalar)    x_i + s, x_i * s, x_i / s
//   ForeachAddScalarList / MulScalarList / DivScalarList  (x0..; scalars)   the same with s_i
//   ForeachSqrt                (x0..xN-1)                         sqrt(x_i)
//   ForeachAddcmulScalar(List) (x0.., t0.., u0..; scalar(s))      x_i + s * t_i * u_i
//   ForeachAddcdivScalar(List) (x0.., t0.., u0..; scalar(s))      x_i + s * t_i / u_i
// Floating tensors only; the tensors of one position i have one shape and one dtype; the positions
// may mix shapes and dtypes; a ScalarList op has one scalar per position. Outputs may alias inputs
// (the in-place overloads: Note [Aliasing outputs] in fused_util.h). NPU: f32 inputs, the result
// computed in f64 and rounded once to the output dtype (the products of f32 values are exact in f64);
// CPU golden: f64.
//
// Note [Foreach launches]
// The real 910B profile (shared/realdata, level1 rank 0) has 3 ForeachAddList + 1 ForeachMulScalar
// tasks a step for SGD(momentum, weight_decay, foreach=True) over AlexNet's 16 parameters: one
// launch per list, not one per tensor. Its cost is that of one streaming vector kernel over the
// bytes of every list (vector_cost over all inputs and outputs), so the kernel floor is paid once.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// Where an op's scalar comes from: none, one attribute for every position, or one per position.
enum class Scalar { kNone, kOne, kList };

// An op of the family: its name, how many lists it takes, its scalar, the attribute naming a single
// scalar, and its per-element arithmetic in f64 (a, b, c: the lists' elements; s: the scalar).
struct AddList {
  static constexpr int kLists = 2, kFlops = 2;
  static constexpr Scalar kScalar = Scalar::kOne;
  static constexpr const char* kAttr = "alpha";
  static double f(double a, double b, double, double s) { return a + s * b; }
};
struct MulList {
  static constexpr int kLists = 2, kFlops = 1;
  static constexpr Scalar kScalar = Scalar::kNone;
  static constexpr const char* kAttr = "";
  static double f(double a, double b, double, double) { return a * b; }
};
struct DivList {
  static constexpr int kLists = 2, kFlops = 1;
  static constexpr Scalar kScalar = Scalar::kNone;
  static constexpr const char* kAttr = "";
  static double f(double a, double b, double, double) { return a / b; }
};
template <Scalar kS>
struct AddScalar {
  static constexpr int kLists = 1, kFlops = 1;
  static constexpr Scalar kScalar = kS;
  static constexpr const char* kAttr = "scalar";
  static double f(double a, double, double, double s) { return a + s; }
};
template <Scalar kS>
struct MulScalar {
  static constexpr int kLists = 1, kFlops = 1;
  static constexpr Scalar kScalar = kS;
  static constexpr const char* kAttr = "scalar";
  static double f(double a, double, double, double s) { return a * s; }
};
template <Scalar kS>
struct DivScalar {
  static constexpr int kLists = 1, kFlops = 1;
  static constexpr Scalar kScalar = kS;
  static constexpr const char* kAttr = "scalar";
  static double f(double a, double, double, double s) { return a / s; }
};
struct Sqrt {
  static constexpr int kLists = 1, kFlops = 4;
  static constexpr Scalar kScalar = Scalar::kNone;
  static constexpr const char* kAttr = "";
  static double f(double a, double, double, double) { return std::sqrt(a); }
};
template <Scalar kS>
struct Addcmul {
  static constexpr int kLists = 3, kFlops = 3;
  static constexpr Scalar kScalar = kS;
  static constexpr const char* kAttr = "scalar";
  static double f(double a, double b, double c, double s) { return a + s * b * c; }
};
template <Scalar kS>
struct Addcdiv {
  static constexpr int kLists = 3, kFlops = 3;
  static constexpr Scalar kScalar = kS;
  static constexpr const char* kAttr = "scalar";
  static double f(double a, double b, double c, double s) { return a + s * (b / c); }
};

template <const char* kName, class Op>
std::vector<TensorMeta> infer_foreach(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in.size() % Op::kLists != 0) {
    fail(kName,
         "takes " + std::to_string(Op::kLists) + " lists of one length, got " + std::to_string(in.size()) + " inputs");
  }
  const std::size_t n = in.size() / Op::kLists;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present) fail(kName, "input " + std::to_string(i) + " is missing");
    if (!is_floating(in[i].dtype)) {
      fail(kName, "input " + std::to_string(i) + " must be floating (f32, f16, bf16, f64), got " +
                      std::string(dtype_name(in[i].dtype)));
    }
    const TensorMeta& first = in[i % n];
    if (in[i].shape != first.shape || in[i].dtype != first.dtype) {
      fail(kName, "inputs " + std::to_string(i % n) + " (" + shape_str(first.shape) + ' ' +
                      std::string(dtype_name(first.dtype)) + ") and " + std::to_string(i) + " (" +
                      shape_str(in[i].shape) + ' ' + std::string(dtype_name(in[i].dtype)) +
                      ") differ (the lists pair tensors of one shape and dtype)");
    }
  }
  if constexpr (Op::kScalar == Scalar::kList) {
    const std::size_t scalars = attrs.get_floats("scalars").size();
    if (scalars != n) {
      fail(kName, "needs one of 'scalars' per tensor: " + std::to_string(n) + " tensors, " + std::to_string(scalars) +
                      " scalars");
    }
  }
  std::vector<TensorMeta> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back({in[i].shape, in[i].dtype});
  return out;
}

// Note [Foreach launches]: one streaming kernel over every list.
template <class Op>
KernelCost cost_foreach(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, Op::kFlops);
}

// out_i = Op::f over position i's tensors, each loaded whole before its output is stored (aliasing).
template <class T, class Op>
void foreach_kernel(KernelContext& ctx) {
  const std::size_t n = ctx.outputs.size();
  std::vector<double> scalars;
  if constexpr (Op::kScalar == Scalar::kList) scalars = ctx.attrs.get_floats("scalars");
  const double one = Op::kScalar == Scalar::kOne ? ctx.attrs.get_float(Op::kAttr, 1.0) : 0.0;
  std::vector<T> a, b, c;
  for (std::size_t i = 0; i < n; ++i) {
    a = load<T>(ctx.inputs[i], ctx);
    if constexpr (Op::kLists >= 2) b = load<T>(ctx.inputs[n + i], ctx);
    if constexpr (Op::kLists >= 3) c = load<T>(ctx.inputs[2 * n + i], ctx);
    const double s = Op::kScalar == Scalar::kList ? scalars[i] : one;
    for (std::size_t j = 0; j < a.size(); ++j) {
      const double bj = Op::kLists >= 2 ? static_cast<double>(b[j]) : 0.0;
      const double cj = Op::kLists >= 3 ? static_cast<double>(c[j]) : 0.0;
      a[j] = static_cast<T>(Op::f(static_cast<double>(a[j]), bj, cj, s));
    }
    store<T>(ctx.outputs[i], a.data(), ctx);
  }
}

constexpr char kAddList[] = "ForeachAddList", kMulList[] = "ForeachMulList", kDivList[] = "ForeachDivList",
               kAddScalar[] = "ForeachAddScalar", kMulScalar[] = "ForeachMulScalar", kDivScalar[] = "ForeachDivScalar",
               kAddScalarList[] = "ForeachAddScalarList", kMulScalarList[] = "ForeachMulScalarList",
               kDivScalarList[] = "ForeachDivScalarList", kSqrt[] = "ForeachSqrt",
               kAddcmulScalar[] = "ForeachAddcmulScalar", kAddcmulScalarList[] = "ForeachAddcmulScalarList",
               kAddcdivScalar[] = "ForeachAddcdivScalar", kAddcdivScalarList[] = "ForeachAddcdivScalarList";

template <const char* kName, class Op>
constexpr OpSchema foreach_schema() {
  return OpSchema{.type = kName,
                  .category = OpCategory::kVector,
                  .min_inputs = Op::kLists,
                  .max_inputs = -1,
                  .infer = infer_foreach<kName, Op>,
                  .cost = cost_foreach<Op>};
}

}  // namespace

#define NPUSCOPE_FOREACH_OP(name, ...)                         \
  NPUSCOPE_REGISTER_OP((foreach_schema<name, __VA_ARGS__>())); \
  NPUSCOPE_REGISTER_FLOAT_KERNELS(name, foreach_kernel, __VA_ARGS__)

NPUSCOPE_FOREACH_OP(kAddList, AddList);
NPUSCOPE_FOREACH_OP(kMulList, MulList);
NPUSCOPE_FOREACH_OP(kDivList, DivList);
NPUSCOPE_FOREACH_OP(kAddScalar, AddScalar<Scalar::kOne>);
NPUSCOPE_FOREACH_OP(kMulScalar, MulScalar<Scalar::kOne>);
NPUSCOPE_FOREACH_OP(kDivScalar, DivScalar<Scalar::kOne>);
NPUSCOPE_FOREACH_OP(kAddScalarList, AddScalar<Scalar::kList>);
NPUSCOPE_FOREACH_OP(kMulScalarList, MulScalar<Scalar::kList>);
NPUSCOPE_FOREACH_OP(kDivScalarList, DivScalar<Scalar::kList>);
NPUSCOPE_FOREACH_OP(kSqrt, Sqrt);
NPUSCOPE_FOREACH_OP(kAddcmulScalar, Addcmul<Scalar::kOne>);
NPUSCOPE_FOREACH_OP(kAddcmulScalarList, Addcmul<Scalar::kList>);
NPUSCOPE_FOREACH_OP(kAddcdivScalar, Addcdiv<Scalar::kOne>);
NPUSCOPE_FOREACH_OP(kAddcdivScalarList, Addcdiv<Scalar::kList>);
#undef NPUSCOPE_FOREACH_OP

}  // namespace npuscope::emulator::kernels
