// CANN's foreach ops: one kernel over a whole list of tensors (torch_npu's aclnnForeachAddListV2,
// aclnnForeachMulScalarV2; PyTorch's _foreach_add_.List, _foreach_mul_.Scalar, which
// SGD(foreach=True) calls once a step for all parameters).
//   ForeachAddList    (a0..aN-1, b0..bN-1; alpha)  N outputs a_i + alpha * b_i
//   ForeachMulScalar  (x0..xN-1; scalar)           N outputs x_i * scalar
// Floating tensors only; a_i and b_i have one shape and one dtype; the lists may mix shapes and
// dtypes. Outputs may alias inputs (the in-place overloads: Note [Aliasing outputs] in
// fused_util.h). NPU: f32 arithmetic rounded once to the output dtype; CPU golden: f64.
//
// Note [Foreach launches]
// The real 910B profile (shared/realdata, level1 rank 0) has 3 ForeachAddList + 1 ForeachMulScalar
// tasks a step for SGD(momentum, weight_decay, foreach=True) over AlexNet's 16 parameters: one
// launch per list, not one per tensor. Its cost is that of one streaming vector kernel over the
// bytes of every list (vector_cost over all inputs and outputs), so the kernel floor is paid once.
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kForeachAddList[] = "ForeachAddList", kForeachMulScalar[] = "ForeachMulScalar";

void require_floating_list(std::span<const TensorMeta> in, const char* op) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present) fail(op, "input " + std::to_string(i) + " is missing");
    if (!is_floating(in[i].dtype)) {
      fail(op, "input " + std::to_string(i) + " must be floating (f32, f16, bf16, f64), got " +
                   std::string(dtype_name(in[i].dtype)));
    }
  }
}

std::vector<TensorMeta> infer_add_list(std::span<const TensorMeta> in, const Attrs&) {
  if (in.size() % 2 != 0) {
    fail(kForeachAddList,
         "takes two lists of one length (a0..aN-1, b0..bN-1), got " + std::to_string(in.size()) + " inputs");
  }
  require_floating_list(in, kForeachAddList);
  const std::size_t n = in.size() / 2;
  std::vector<TensorMeta> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const TensorMeta& a = in[i];
    const TensorMeta& b = in[n + i];
    if (a.shape != b.shape || a.dtype != b.dtype) {
      std::string what = "a" + std::to_string(i);
      what += ' ' + shape_str(a.shape) + ' ' + std::string(dtype_name(a.dtype));
      what += " and b" + std::to_string(i);
      what += ' ' + shape_str(b.shape) + ' ' + std::string(dtype_name(b.dtype));
      fail(kForeachAddList, what + " differ (the lists pair tensors of one shape and dtype)");
    }
    out.push_back({a.shape, a.dtype});
  }
  return out;
}

std::vector<TensorMeta> infer_mul_scalar(std::span<const TensorMeta> in, const Attrs&) {
  require_floating_list(in, kForeachMulScalar);
  std::vector<TensorMeta> out;
  out.reserve(in.size());
  for (const TensorMeta& x : in) out.push_back({x.shape, x.dtype});
  return out;
}

// Note [Foreach launches]: one streaming kernel over every list.
KernelCost cost_add_list(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 2);
}
KernelCost cost_mul_scalar(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

// out_i = f(inputs of pair i), each tensor loaded whole before its output is stored (aliasing).
template <class T>
void add_list_kernel(KernelContext& ctx) {
  const double alpha = ctx.attrs.get_float("alpha", 1.0);
  const std::size_t n = ctx.outputs.size();
  std::vector<T> a, b;
  for (std::size_t i = 0; i < n; ++i) {
    a = load<T>(ctx.inputs[i], ctx);
    b = load<T>(ctx.inputs[n + i], ctx);
    // One rounding, as Axpy (scalar_ops.cpp): the f32 product is exact in f64.
    for (std::size_t j = 0; j < a.size(); ++j)
      a[j] = static_cast<T>(static_cast<double>(a[j]) + alpha * static_cast<double>(b[j]));
    store<T>(ctx.outputs[i], a.data(), ctx);
  }
}

template <class T>
void mul_scalar_kernel(KernelContext& ctx) {
  const double scalar = ctx.attrs.get_float("scalar", 1.0);
  std::vector<T> x;
  for (std::size_t i = 0; i < ctx.outputs.size(); ++i) {
    x = load<T>(ctx.inputs[i], ctx);
    for (T& e : x) e = static_cast<T>(static_cast<double>(e) * scalar);
    store<T>(ctx.outputs[i], x.data(), ctx);
  }
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kForeachAddList,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = -1,
                              .infer = infer_add_list,
                              .cost = cost_add_list});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kForeachMulScalar,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = -1,
                              .infer = infer_mul_scalar,
                              .cost = cost_mul_scalar});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kForeachAddList, add_list_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kForeachMulScalar, mul_scalar_kernel);

}  // namespace npuscope::emulator::kernels
