// Add, Sub, Mul, Div, Pow: element-wise with numpy broadcasting. NPU: computed in f32 and rounded
// to the output dtype per op; CPU golden: computed in f64. Blocked, one pass over memory, and the
// output may alias an input: see Note [Blocked element-wise maps] in elementwise_map.h.
#include <cmath>

#include "elementwise_map.h"

namespace npuscope::emulator::kernels {
namespace {

std::vector<TensorMeta> infer_binary(std::span<const TensorMeta> in, const Attrs&) {
  require_same_dtype(in, "binary op");
  return {{broadcast_shapes(in[0].shape, in[1].shape, "binary op"), in[0].dtype}};
}

// ONNX Pow takes a base and an exponent of different types; the result has the base's type.
std::vector<TensorMeta> infer_pow(std::span<const TensorMeta> in, const Attrs&) {
  return {{broadcast_shapes(in[0].shape, in[1].shape, "Pow"), in[0].dtype}};
}

KernelCost cost_binary(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

KernelCost cost_pow(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);  // exp(b·log a)
}

// Integer division truncates (ONNX / C semantics); floats divide.
template <class T>
T divide_integer(T a, T b) {
  return b == 0 ? T(0) : std::trunc(a / b);
}

// The four operations in float on the golden when all is f32 (Note [Golden maps in f32]).
template <class T>
void add_kernel(KernelContext& c) {
  ieee_binary_kernel<T>(c, [](auto a, auto b) { return a + b; });
}
template <class T>
void sub_kernel(KernelContext& c) {
  ieee_binary_kernel<T>(c, [](auto a, auto b) { return a - b; });
}
template <class T>
void mul_kernel(KernelContext& c) {
  ieee_binary_kernel<T>(c, [](auto a, auto b) { return a * b; });
}
template <class T>
void div_kernel(KernelContext& c) {
  // Two maps, so that the float one has no branch in its loop.
  if (!is_floating(c.outputs[0].dtype)) {
    binary_kernel<T>(c, [](T a, T b) { return divide_integer(a, b); });
  } else {
    ieee_binary_kernel<T>(c, [](auto a, auto b) { return a / b; });
  }
}

// Whether input 1 is the one value 2 (x^2 from LayerNorm's variance).
bool squares(const KernelContext& c) {
  if (c.inputs[1].numel != 1) return false;
  double e = 0;
  load_f64(c.inputs[1], &e);
  return e == 2;
}

// x^2 (LayerNorm's variance as exported to ONNX before opset 17) as a · a: the correctly rounded
// square (NaN, inf and -0 as pow gives them), without a libm pow call per element; exact in float
// when x is f32.
template <class T>
void pow_kernel(KernelContext& c) {
  if (squares(c)) {
    ieee_binary_kernel<T>(c, [](auto a, auto) { return a * a; });
    return;
  }
  binary_kernel<T>(c, [](T a, T b) { return b == T(2) ? a * a : std::pow(a, b); });
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "Add",
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_binary,
                              .cost = cost_binary});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Sub",
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_binary,
                              .cost = cost_binary});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Mul",
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_binary,
                              .cost = cost_binary});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Div",
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_binary,
                              .cost = cost_binary});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Pow",
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_pow,
                              .cost = cost_pow});

NPUSCOPE_REGISTER_FLOAT_KERNELS("Add", add_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("Sub", sub_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("Mul", mul_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("Div", div_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS("Pow", pow_kernel);

}  // namespace npuscope::emulator::kernels
