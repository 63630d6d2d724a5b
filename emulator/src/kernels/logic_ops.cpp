// Comparisons and logic with ONNX's names; all produce bool tensors, with numpy broadcasting.
//   Equal, Less, Greater, LessOrEqual, GreaterOrEqual   two inputs of one dtype (Equal also bool).
//     Floats compare the values as loaded: f16 and bf16 exactly (f32 holds them), and f32 as
//     stored unless a precision mode lowers the op to f16 on the NPU (then the inputs are rounded
//     first, as the NPU would see them). NaN compares false (unequal to itself). Integers compare
//     exactly in int64.
//   Not, And, Or, Xor   bool inputs.
// The same arithmetic on both backends: a comparison has nothing to approximate.
#include <cstdint>
#include <string>
#include <vector>

#include "elementwise_ext_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kEqual[] = "Equal", kLess[] = "Less", kGreater[] = "Greater", kLessOrEqual[] = "LessOrEqual",
               kGreaterOrEqual[] = "GreaterOrEqual", kNot[] = "Not", kAnd[] = "And", kOr[] = "Or", kXor[] = "Xor";

// Comparisons: numeric inputs (AllowBool: Equal takes bool too).
template <const char* Op, bool AllowBool>
std::vector<TensorMeta> infer_compare(std::span<const TensorMeta> in, const Attrs&) {
  const Shape shape = ext::broadcast_all(in, Op);
  if (!AllowBool && in[0].dtype == DType::kBool) fail(Op, "inputs must be numeric, got bool");
  return {{shape, DType::kBool}};
}

template <const char* Op>
std::vector<TensorMeta> infer_logic(std::span<const TensorMeta> in, const Attrs&) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].dtype != DType::kBool) {
      fail(Op, "input " + std::to_string(i) + " must be bool, got " + std::string(dtype_name(in[i].dtype)));
    }
  }
  return {{in.size() == 1 ? in[0].shape : ext::broadcast_all(in, Op), DType::kBool}};
}

// Generic: float/double on floating inputs, int64 on integers and bool; 1 or 0 in the same type.
constexpr auto equal_fn = [](auto a, auto b) { return decltype(a)(a == b); };
constexpr auto less_fn = [](auto a, auto b) { return decltype(a)(a < b); };
constexpr auto greater_fn = [](auto a, auto b) { return decltype(a)(a > b); };
constexpr auto less_equal_fn = [](auto a, auto b) { return decltype(a)(a <= b); };
constexpr auto greater_equal_fn = [](auto a, auto b) { return decltype(a)(a >= b); };
constexpr auto and_fn = [](auto a, auto b) { return decltype(a)(a != 0 && b != 0); };
constexpr auto or_fn = [](auto a, auto b) { return decltype(a)(a != 0 || b != 0); };
constexpr auto xor_fn = [](auto a, auto b) { return decltype(a)((a != 0) != (b != 0)); };

template <class T, class F>
void binary_predicate(KernelContext& c) {
  ext::numeric_binary_kernel<T>(c, F{});
}

template <class T>
void not_kernel(KernelContext& c) {
  ext::numeric_unary_kernel<T>(c, [](auto x) { return decltype(x)(x == 0); });
}

// Comparisons and logic do no arithmetic that could round, so a precision mode never lowers their
// inputs (as CANN's "follow the input dtype" ops): an f32 comparison stays exact under force_fp16.
constexpr OpSchema logic_schema(const char* type, int inputs, InferFn infer) {
  return ext::elementwise_schema(type, inputs, infer, ext::cost_flops<1>, OpCategory::kDataMovement);
}

}  // namespace

NPUSCOPE_REGISTER_OP(logic_schema(kEqual, 2, infer_compare<kEqual, true>));
NPUSCOPE_REGISTER_OP(logic_schema(kLess, 2, infer_compare<kLess, false>));
NPUSCOPE_REGISTER_OP(logic_schema(kGreater, 2, infer_compare<kGreater, false>));
NPUSCOPE_REGISTER_OP(logic_schema(kLessOrEqual, 2, infer_compare<kLessOrEqual, false>));
NPUSCOPE_REGISTER_OP(logic_schema(kGreaterOrEqual, 2, infer_compare<kGreaterOrEqual, false>));
NPUSCOPE_REGISTER_OP(logic_schema(kNot, 1, infer_logic<kNot>));
NPUSCOPE_REGISTER_OP(logic_schema(kAnd, 2, infer_logic<kAnd>));
NPUSCOPE_REGISTER_OP(logic_schema(kOr, 2, infer_logic<kOr>));
NPUSCOPE_REGISTER_OP(logic_schema(kXor, 2, infer_logic<kXor>));

NPUSCOPE_REGISTER_FLOAT_KERNELS(kEqual, binary_predicate, decltype(equal_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLess, binary_predicate, decltype(less_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGreater, binary_predicate, decltype(greater_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kLessOrEqual, binary_predicate, decltype(less_equal_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kGreaterOrEqual, binary_predicate, decltype(greater_equal_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kNot, not_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kAnd, binary_predicate, decltype(and_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOr, binary_predicate, decltype(or_fn));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kXor, binary_predicate, decltype(xor_fn));

}  // namespace npuscope::emulator::kernels
