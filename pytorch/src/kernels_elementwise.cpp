// Native element-wise kernels: add, sub, mul, div (tensor or wrapped-scalar operands, alpha),
// remainder, div with a rounding mode and floor_divide (FloorMod / FloorDiv / TruncateDiv), addcmul,
// addcdiv, lerp, masked_fill_, unary math and activations with their backward ops, bernoulli_
// (dropout's mask) and randperm. Each is one emulator op per call (Add/Adds/Axpy/Mul/Muls/Div, Sqrt,
// GeluV2, GeluGrad, ...), in the output's dtype: operands are cast to it first, as PyTorch computes
// in the promoted dtype. Structured ops arrive as their .out overloads (PyTorch's functional and
// in-place variants call them), so in-place ops write into their input (Note [In-place kernels]).
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// Float and integer outputs the emulator's arithmetic ops take (bool goes to the fallback). float64
// has no NPU kernel: the dispatcher runs the op's CPU kernel as an AI CPU task, as Ascend runs its
// double arithmetic. Autograd meets it in label smoothing's backward, which multiplies the 0-d loss
// gradient by a saved 0-d float64 CPU scalar (1.13 unpacks it as a plain tensor, which promotes).
bool arithmetic_dtype(at::ScalarType t) {
  return is_float(t) || t == at::kDouble || t == at::kInt || t == at::kLong || t == at::kChar || t == at::kByte;
}
bool float_dtype(at::ScalarType t) { return is_float(t); }

// ---- add, sub, mul, div, and the rounding divisions ---------------------------------------------

// The rounding divisions (remainder, div with a rounding mode, floor_divide) are CANN's FloorMod /
// FloorDiv / TruncateDiv, as torch_npu runs them, on floating outputs; integers go to the CPU
// fallback, which raises on a zero divisor as PyTorch does. They have no one-operand form.
enum class Binary { kAdd, kSub, kMul, kDiv, kFloorMod, kFloorDiv, kTruncateDiv };

bool has_scalar_form(Binary kind) {
  return kind == Binary::kAdd || kind == Binary::kSub || kind == Binary::kMul || kind == Binary::kDiv;
}

void binary(Binary kind, const char* aten, const at::Tensor& self, const at::Tensor& other, double alpha,
            const at::Tensor& out) {
  check_same_device(aten, out, {self, other});
  resize_out(out, at::infer_size(self.sizes(), other.sizes()));
  if (out.numel() == 0) return;
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, aten);
  if (has_scalar_form(kind) && is_host_scalar(other) && !is_host_scalar(self) && self.sizes().equals(out.sizes())) {
    const double v = other.item<double>();
    const at::Tensor a = operand(self, type, aten);
    switch (kind) {
      case Binary::kAdd: run_op("Adds", aten, {a}, {{"value", v * alpha}}, {slot.tensor()}); break;
      case Binary::kSub: run_op("Adds", aten, {a}, {{"value", -v * alpha}}, {slot.tensor()}); break;
      case Binary::kMul: run_op("Muls", aten, {a}, {{"value", v}}, {slot.tensor()}); break;
      case Binary::kDiv: run_op("Muls", aten, {a}, {{"value", 1.0 / v}}, {slot.tensor()}); break;
      default: break;  // no scalar form
    }
  } else {
    const at::Tensor a = operand(on_device(self, out.device()), type, aten);
    const at::Tensor b = operand(on_device(other, out.device()), type, aten);
    switch (kind) {
      case Binary::kAdd:
        if (alpha == 1.0)
          run_op("Add", aten, {a, b}, {}, {slot.tensor()});
        else
          run_op("Axpy", aten, {a, b}, {{"alpha", alpha}}, {slot.tensor()});
        break;
      case Binary::kSub:
        if (alpha == 1.0)
          run_op("Sub", aten, {a, b}, {}, {slot.tensor()});
        else
          run_op("Axpy", aten, {a, b}, {{"alpha", -alpha}}, {slot.tensor()});
        break;
      case Binary::kMul: run_op("Mul", aten, {a, b}, {}, {slot.tensor()}); break;
      case Binary::kDiv: run_op("Div", aten, {a, b}, {}, {slot.tensor()}); break;
      case Binary::kFloorMod: run_op("FloorMod", aten, {a, b}, {}, {slot.tensor()}); break;
      case Binary::kFloorDiv: run_op("FloorDiv", aten, {a, b}, {}, {slot.tensor()}); break;
      case Binary::kTruncateDiv: run_op("TruncateDiv", aten, {a, b}, {}, {slot.tensor()}); break;
    }
  }
  slot.finish();
}

// The two operands must broadcast to the output without growing the Adds/Muls operand.
at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  if (!arithmetic_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(add_out, self, other, alpha, out);
  binary(Binary::kAdd, "aten::add", self, other, alpha.toDouble(), out);
  return out;
}
at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  if (!arithmetic_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(sub_out, self, other, alpha, out);
  binary(Binary::kSub, "aten::sub", self, other, alpha.toDouble(), out);
  return out;
}
at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  // Masks multiplied (label smoothing's valid-and-not-ignored): the product of bools is their AND.
  if (out.scalar_type() == at::kBool && self.scalar_type() == at::kBool && other.scalar_type() == at::kBool)
    return at::logical_and_out(out, self, other);
  if (!arithmetic_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(mul_out, self, other, out);
  binary(Binary::kMul, "aten::mul", self, other, 1.0, out);
  return out;
}
at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(div_out, self, other, out);
  binary(Binary::kDiv, "aten::div", self, other, 1.0, out);
  return out;
}

at::Tensor& remainder_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(remainder_Tensor_out, self, other, out);
  binary(Binary::kFloorMod, "aten::remainder", self, other, 1.0, out);
  return out;
}

at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other, c10::optional<c10::string_view> mode,
                         at::Tensor& out) {
  if (!mode.has_value()) return div_out(self, other, out);
  TORCH_CHECK(*mode == "floor" || *mode == "trunc",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(div_out_mode, self, other, mode, out);
  binary(*mode == "floor" ? Binary::kFloorDiv : Binary::kTruncateDiv, "aten::div", self, other, 1.0, out);
  return out;
}

at::Tensor& floor_divide_into(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(floor_divide_out, self, other, out);
  binary(Binary::kFloorDiv, "aten::floor_divide", self, other, 1.0, out);
  return out;
}
at::Tensor floor_divide_new(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::result_type(self, other)));
  return floor_divide_into(self, other, out);
}
at::Tensor& floor_divide_inplace(at::Tensor& self, const at::Tensor& other) {
  return floor_divide_into(self, other, self);
}

// ---- fused: addcmul, addcdiv, lerp, masked_fill_ ------------------------------------------------

at::Tensor& addcmul_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value,
                        at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(addcmul_out, self, t1, t2, value, out);
  constexpr const char* kAten = "aten::addcmul";
  check_same_device(kAten, out, {self, t1, t2});
  resize_out(out, at::infer_size(self.sizes(), at::infer_size(t1.sizes(), t2.sizes())));
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, kAten);
  run_op("Addcmul", kAten, {operand(self, type, kAten), operand(t1, type, kAten), operand(t2, type, kAten)},
         {{"value", value.toDouble()}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor& addcdiv_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value,
                        at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(addcdiv_out, self, t1, t2, value, out);
  constexpr const char* kAten = "aten::addcdiv";
  check_same_device(kAten, out, {self, t1, t2});
  resize_out(out, at::infer_size(self.sizes(), at::infer_size(t1.sizes(), t2.sizes())));
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, kAten);
  run_op("Addcdiv", kAten, {operand(self, type, kAten), operand(t1, type, kAten), operand(t2, type, kAten)},
         {{"value", value.toDouble()}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(lerp_Scalar_out, self, end, weight, out);
  constexpr const char* kAten = "aten::lerp";
  check_same_device(kAten, out, {self, end});
  resize_out(out, at::infer_size(self.sizes(), end.sizes()));
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, kAten);
  run_op("Lerp", kAten, {operand(self, type, kAten), operand(end, type, kAten)}, {{"weight", weight.toDouble()}},
         {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor& masked_fill_scalar(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  constexpr const char* kAten = "aten::masked_fill_";
  TORCH_CHECK(mask.scalar_type() == at::kBool, kAten, ": expected the mask to be bool, got ", mask.scalar_type());
  if (self.numel() == 0) return self;
  check_same_device(kAten, self, {mask});
  OutputSlot slot(self, kAten);
  const at::Tensor m = contiguous(on_device(mask, self.device()), kAten);
  run_op("MaskedFill", kAten, {slot.tensor().is_same(self) ? self : contiguous(self, kAten), m},
         {{"value", value.toDouble()}}, {slot.tensor()});
  slot.finish();
  return self;
}

at::Tensor& masked_fill_tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return masked_fill_scalar(self, mask, value.item());
}

// ---- unary --------------------------------------------------------------------------------------

#define NPUSCOPE_FLOAT_UNARY(name, op, aten)                                              \
  at::Tensor& name##_out(const at::Tensor& self, at::Tensor& out) {                       \
    if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(name##_out, self, out); \
    unary_op(op, aten, self, out);                                                        \
    return out;                                                                           \
  }
NPUSCOPE_FLOAT_UNARY(sqrt, "Sqrt", "aten::sqrt")
NPUSCOPE_FLOAT_UNARY(rsqrt, "Rsqrt", "aten::rsqrt")
NPUSCOPE_FLOAT_UNARY(exp, "Exp", "aten::exp")
NPUSCOPE_FLOAT_UNARY(log, "Log", "aten::log")
NPUSCOPE_FLOAT_UNARY(tanh, "Tanh", "aten::tanh")
NPUSCOPE_FLOAT_UNARY(sigmoid, "Sigmoid", "aten::sigmoid")
NPUSCOPE_FLOAT_UNARY(silu, "Silu", "aten::silu")
NPUSCOPE_FLOAT_UNARY(reciprocal, "Reciprocal", "aten::reciprocal")
NPUSCOPE_FLOAT_UNARY(sgn, "Sign", "aten::sgn")  // real tensors: sgn is sign (abs's backward)
NPUSCOPE_FLOAT_UNARY(sign, "Sign", "aten::sign")
NPUSCOPE_FLOAT_UNARY(round, "Round", "aten::round")  // half to even, as PyTorch's
NPUSCOPE_FLOAT_UNARY(floor, "Floor", "aten::floor")
NPUSCOPE_FLOAT_UNARY(ceil, "Ceil", "aten::ceil")
#undef NPUSCOPE_FLOAT_UNARY

// torch.log2 / torch.log10: CANN's Log with its base attribute, as torch_npu runs them.
#define NPUSCOPE_LOG_OF_BASE(name, base)                                                  \
  at::Tensor& name##_out(const at::Tensor& self, at::Tensor& out) {                       \
    if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(name##_out, self, out); \
    unary_op("Log", "aten::" #name, self, out, {{"base", base}});                         \
    return out;                                                                           \
  }
NPUSCOPE_LOG_OF_BASE(log2, 2.0)
NPUSCOPE_LOG_OF_BASE(log10, 10.0)
#undef NPUSCOPE_LOG_OF_BASE

at::Tensor& neg_out(const at::Tensor& self, at::Tensor& out) {
  if (!arithmetic_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(neg_out, self, out);
  unary_op("Neg", "aten::neg", self, out);
  return out;
}

at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  if (!arithmetic_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(abs_out, self, out);
  unary_op("Abs", "aten::abs", self, out);
  return out;
}

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(gelu_out, self, approximate, out);
  unary_op("GeluV2", "aten::gelu", self, out, {{"approximate", std::string(approximate)}});
  return out;
}

at::Tensor relu(const at::Tensor& self) {
  if (!arithmetic_dtype(self.scalar_type())) return NPUSCOPE_FALLBACK(relu, self);
  at::Tensor out = at::empty(self.sizes(), self.options());
  unary_op("Relu", "aten::relu", self, out);
  return out;
}

at::Tensor& relu_(at::Tensor& self) {
  if (!arithmetic_dtype(self.scalar_type())) return NPUSCOPE_FALLBACK(relu_, self);
  unary_op("Relu", "aten::relu_", self, self);
  return self;
}

at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& threshold,
                                   at::Tensor& out) {
  if (!arithmetic_dtype(out.scalar_type()))
    return NPUSCOPE_FALLBACK(threshold_backward_grad_input, grad, self, threshold, out);
  backward_op("ThresholdGrad", "aten::threshold_backward", grad, self, out, {{"threshold", threshold.toDouble()}});
  return out;
}

at::Tensor& gelu_backward_out(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate,
                              at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(gelu_backward_grad_input, grad, self, approximate, out);
  backward_op("GeluGrad", "aten::gelu_backward", grad, self, out, {{"approximate", std::string(approximate)}});
  return out;
}

at::Tensor& silu_backward_out(const at::Tensor& grad, const at::Tensor& self, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(silu_backward_grad_input, grad, self, out);
  backward_op("SiluGrad", "aten::silu_backward", grad, self, out);
  return out;
}

at::Tensor& sigmoid_backward_out(const at::Tensor& grad, const at::Tensor& output, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(sigmoid_backward_grad_input, grad, output, out);
  backward_op("SigmoidGrad", "aten::sigmoid_backward", grad, output, out);
  return out;
}

at::Tensor& tanh_backward_out(const at::Tensor& grad, const at::Tensor& output, at::Tensor& out) {
  if (!float_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(tanh_backward_grad_input, grad, output, out);
  backward_op("TanhGrad", "aten::tanh_backward", grad, output, out);
  return out;
}

// ---- random draws: bernoulli_ (dropout's mask), randperm ----------------------------------------

// The device draws the values (a Bernoulli task) from a seed of PyTorch's generator (generator_seed).
at::Tensor& bernoulli_float(at::Tensor& self, double p, c10::optional<at::Generator> generator) {
  constexpr const char* kAten = "aten::bernoulli_";
  TORCH_CHECK(p >= 0 && p <= 1, kAten, ": expects 0 <= p <= 1, but got p=", p);
  if (!arithmetic_dtype(self.scalar_type()) && self.scalar_type() != at::kBool)
    return NPUSCOPE_FALLBACK(bernoulli__float, self, p, generator);
  if (self.numel() == 0) return self;
  const std::int64_t seed = generator_seed(generator);
  OutputSlot slot(self, kAten);
  run_op("Bernoulli", kAten, {slot.tensor()}, {{"p", p}, {"seed", seed}}, {slot.tensor()});
  slot.finish();
  return self;
}

// torch.randperm (detection's samplers): a Randperm task (AI CPU, as torch_npu's) seeded the same way.
at::Tensor& randperm_out(std::int64_t n, c10::optional<at::Generator> generator, at::Tensor& out) {
  constexpr const char* kAten = "aten::randperm";
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  if (out.scalar_type() != at::kLong && out.scalar_type() != at::kInt)
    return NPUSCOPE_FALLBACK(randperm_generator_out, n, generator, out);
  resize_out(out, {n});
  if (n == 0) return out;
  const std::int64_t seed = generator_seed(generator);
  OutputSlot slot(out, kAten);
  run_op("Randperm", kAten, {slot.tensor()}, {{"n", n}, {"seed", seed}}, {slot.tensor()});
  slot.finish();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.out", TORCH_FN(add_out));
  m.impl("sub.out", TORCH_FN(sub_out));
  m.impl("mul.out", TORCH_FN(mul_out));
  m.impl("div.out", TORCH_FN(div_out));
  m.impl("div.out_mode", TORCH_FN(div_mode_out));
  m.impl("remainder.Tensor_out", TORCH_FN(remainder_out));
  m.impl("floor_divide", TORCH_FN(floor_divide_new));
  m.impl("floor_divide.out", TORCH_FN(floor_divide_into));
  m.impl("floor_divide_.Tensor", TORCH_FN(floor_divide_inplace));
  m.impl("addcmul.out", TORCH_FN(addcmul_out));
  m.impl("addcdiv.out", TORCH_FN(addcdiv_out));
  m.impl("lerp.Scalar_out", TORCH_FN(lerp_scalar_out));
  m.impl("masked_fill_.Scalar", TORCH_FN(masked_fill_scalar));
  m.impl("masked_fill_.Tensor", TORCH_FN(masked_fill_tensor));
  m.impl("sqrt.out", TORCH_FN(sqrt_out));
  m.impl("round.out", TORCH_FN(round_out));
  m.impl("floor.out", TORCH_FN(floor_out));
  m.impl("ceil.out", TORCH_FN(ceil_out));
  m.impl("rsqrt.out", TORCH_FN(rsqrt_out));
  m.impl("exp.out", TORCH_FN(exp_out));
  m.impl("log.out", TORCH_FN(log_out));
  m.impl("log2.out", TORCH_FN(log2_out));
  m.impl("log10.out", TORCH_FN(log10_out));
  m.impl("tanh.out", TORCH_FN(tanh_out));
  m.impl("sigmoid.out", TORCH_FN(sigmoid_out));
  m.impl("silu.out", TORCH_FN(silu_out));
  m.impl("reciprocal.out", TORCH_FN(reciprocal_out));
  m.impl("sgn.out", TORCH_FN(sgn_out));
  m.impl("sign.out", TORCH_FN(sign_out));
  m.impl("neg.out", TORCH_FN(neg_out));
  m.impl("abs.out", TORCH_FN(abs_out));
  m.impl("gelu.out", TORCH_FN(gelu_out));
  m.impl("relu", TORCH_FN(relu));
  m.impl("relu_", TORCH_FN(relu_));
  m.impl("threshold_backward.grad_input", TORCH_FN(threshold_backward_out));
  m.impl("gelu_backward.grad_input", TORCH_FN(gelu_backward_out));
  m.impl("silu_backward.grad_input", TORCH_FN(silu_backward_out));
  m.impl("sigmoid_backward.grad_input", TORCH_FN(sigmoid_backward_out));
  m.impl("tanh_backward.grad_input", TORCH_FN(tanh_backward_out));
  m.impl("bernoulli_.float", TORCH_FN(bernoulli_float));
  m.impl("randperm.generator_out", TORCH_FN(randperm_out));
}

}  // namespace npuscope::pytorch
