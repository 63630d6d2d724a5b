// Native comparisons, selection and the reductions users call on results: eq, ne, lt, le, gt, ge
// (tensor or scalar operands: Equal, Less, ...; ne is Equal then Not), where, logical_not / and /
// or, bitwise and / or / xor of bool and integer tensors, maximum, minimum, clamp, max / min / argmax / argmin, topk
// and sort (TopK: stable, ties by index), cumsum, pow with a scalar exponent. What an accuracy line of a training loop
// uses, ((logits.argmax(1) == y).float().mean()), runs on the device instead of the fallback.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

bool numeric(at::ScalarType t) {
  return is_float(t) || t == at::kLong || t == at::kInt || t == at::kChar || t == at::kByte;
}

// A scalar operand as a one-element device tensor of `type` (a host-to-device copy).
at::Tensor scalar_tensor(const at::Scalar& s, at::ScalarType type, const at::Tensor& like) {
  return at::scalar_tensor(s, at::TensorOptions().dtype(type)).to(like.device());
}

// ---- comparisons --------------------------------------------------------------------------------

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

void compare(Cmp cmp, const char* aten, const at::Tensor& self, const at::Tensor& other_in, const at::Tensor& out) {
  const at::Tensor other = on_device(other_in, self.device());
  check_same_device(aten, self, {other});
  resize_out(out, at::infer_size(self.sizes(), other.sizes()));
  if (out.numel() == 0) return;
  const at::ScalarType type = at::result_type(self, other_in);
  const at::Tensor a = operand(self, type, aten), b = operand(other, type, aten);
  OutputSlot slot(out, aten);
  const at::Tensor& dst = slot.tensor();
  switch (cmp) {
    case Cmp::kEq: run_op("Equal", aten, {a, b}, {}, {dst}); break;
    case Cmp::kLt: run_op("Less", aten, {a, b}, {}, {dst}); break;
    case Cmp::kLe: run_op("LessOrEqual", aten, {a, b}, {}, {dst}); break;
    case Cmp::kGt: run_op("Greater", aten, {a, b}, {}, {dst}); break;
    case Cmp::kGe: run_op("GreaterOrEqual", aten, {a, b}, {}, {dst}); break;
    case Cmp::kNe: {
      const at::Tensor equal = at::empty(dst.sizes(), dst.options());
      run_op("Equal", aten, {a, b}, {}, {equal});
      run_op("Not", aten, {equal}, {}, {dst});
      break;
    }
  }
  slot.finish();
}

bool comparable(const at::Tensor& self, const at::Tensor& other, const at::Tensor& out) {
  const at::ScalarType type = at::result_type(self, other);
  return out.scalar_type() == at::kBool && (numeric(type) || type == at::kBool);
}

#define NPUSCOPE_COMPARE(name, kind)                                                                    \
  at::Tensor& name##_tensor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {     \
    if (!comparable(self, other, out)) return NPUSCOPE_FALLBACK(name##_Tensor_out, self, other, out);   \
    compare(kind, "aten::" #name, self, other, out);                                                    \
    return out;                                                                                         \
  }                                                                                                     \
  at::Tensor& name##_scalar_out(const at::Tensor& self, const at::Scalar& other, at::Tensor& out) {     \
    const at::Tensor wrapped = at::scalar_tensor(other, at::TensorOptions().dtype(other.type()));       \
    if (!comparable(self, wrapped, out)) return NPUSCOPE_FALLBACK(name##_Scalar_out, self, other, out); \
    compare(kind, "aten::" #name, self, wrapped, out);                                                  \
    return out;                                                                                         \
  }
NPUSCOPE_COMPARE(eq, Cmp::kEq)
NPUSCOPE_COMPARE(ne, Cmp::kNe)
NPUSCOPE_COMPARE(lt, Cmp::kLt)
NPUSCOPE_COMPARE(le, Cmp::kLe)
NPUSCOPE_COMPARE(gt, Cmp::kGt)
NPUSCOPE_COMPARE(ge, Cmp::kGe)
#undef NPUSCOPE_COMPARE

// ---- where, logical ops, maximum / minimum, clamp -----------------------------------------------

at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  constexpr const char* kAten = "aten::where";
  const at::ScalarType type = out.scalar_type();
  if (!to_emulator_dtype(type) || condition.scalar_type() != at::kBool)
    return NPUSCOPE_FALLBACK(where_self_out, condition, self, other, out);
  resize_out(out, at::infer_size(condition.sizes(), at::infer_size(self.sizes(), other.sizes())));
  if (out.numel() == 0) return out;
  const at::Device device = out.device();
  OutputSlot slot(out, kAten);
  run_op("Where", kAten,
         {contiguous(on_device(condition, device), kAten), operand(on_device(self, device), type, kAten),
          operand(on_device(other, device), type, kAten)},
         {}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType type = at::result_type(self, other);
  at::Tensor out = at::empty({0}, (self.device().type() == kNpu ? self : other).options().dtype(type));
  return where_out(condition, self, other, out);
}

at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& out) {
  constexpr const char* kAten = "aten::logical_not";
  if (out.scalar_type() != at::kBool) return NPUSCOPE_FALLBACK(logical_not_out, self, out);
  resize_out(out, self.sizes());
  if (out.numel() == 0) return out;
  OutputSlot slot(out, kAten);
  run_op("Not", kAten, {operand(self, at::kBool, kAten)}, {}, {slot.tensor()});
  slot.finish();
  return out;
}

void logical(const char* op, const char* aten, const at::Tensor& self, const at::Tensor& other, const at::Tensor& out) {
  resize_out(out, at::infer_size(self.sizes(), other.sizes()));
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten);
  run_op(op, aten, {operand(self, at::kBool, aten), operand(other, at::kBool, aten)}, {}, {slot.tensor()});
  slot.finish();
}

at::Tensor& logical_and_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (out.scalar_type() != at::kBool || is_host_scalar(other))
    return NPUSCOPE_FALLBACK(logical_and_out, self, other, out);
  logical("And", "aten::logical_and", self, other, out);
  return out;
}

at::Tensor& logical_or_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (out.scalar_type() != at::kBool || is_host_scalar(other))
    return NPUSCOPE_FALLBACK(logical_or_out, self, other, out);
  logical("Or", "aten::logical_or", self, other, out);
  return out;
}

// The bitwise ops of bool and integer tensors (masks: `a & b`; uint8 masks: `pos | neg`; flags:
// `x & 4`): BitwiseAnd / Or / Xor in out's dtype, a host scalar operand uploaded first.
bool bitwise_dtype(at::ScalarType t) {
  return t == at::kBool || t == at::kByte || t == at::kChar || t == at::kInt || t == at::kLong;
}

void bitwise(const char* op, const char* aten, const at::Tensor& self, const at::Tensor& other, const at::Tensor& out) {
  resize_out(out, at::infer_size(self.sizes(), other.sizes()));
  if (out.numel() == 0) return;
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, aten);
  run_op(op, aten,
         {operand(on_device(self, out.device()), type, aten), operand(on_device(other, out.device()), type, aten)}, {},
         {slot.tensor()});
  slot.finish();
}

#define NPUSCOPE_BITWISE(name, op)                                                           \
  at::Tensor& name##_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) { \
    if (!bitwise_dtype(out.scalar_type()) || is_host_scalar(self))                           \
      return NPUSCOPE_FALLBACK(name##_Tensor_out, self, other, out);                         \
    check_same_device("aten::" #name, out, {self, other});                                   \
    bitwise(op, "aten::" #name, self, other, out);                                           \
    return out;                                                                              \
  }
NPUSCOPE_BITWISE(bitwise_and, "BitwiseAnd")
NPUSCOPE_BITWISE(bitwise_or, "BitwiseOr")
NPUSCOPE_BITWISE(bitwise_xor, "BitwiseXor")
#undef NPUSCOPE_BITWISE

at::Tensor& bitwise_not_out(const at::Tensor& self, at::Tensor& out) {
  if (out.scalar_type() != at::kBool || self.scalar_type() != at::kBool)
    return NPUSCOPE_FALLBACK(bitwise_not_out, self, out);
  return logical_not_out(self, out);
}

void binary_select(const char* op, const char* aten, const at::Tensor& self, const at::Tensor& other,
                   const at::Tensor& out) {
  resize_out(out, at::infer_size(self.sizes(), other.sizes()));
  if (out.numel() == 0) return;
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, aten);
  run_op(op, aten, {operand(self, type, aten), operand(other, type, aten)}, {}, {slot.tensor()});
  slot.finish();
}

at::Tensor& maximum_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (!numeric(out.scalar_type()) || is_host_scalar(other)) return NPUSCOPE_FALLBACK(maximum_out, self, other, out);
  binary_select("Max", "aten::maximum", self, other, out);
  return out;
}

at::Tensor& minimum_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (!numeric(out.scalar_type()) || is_host_scalar(other)) return NPUSCOPE_FALLBACK(minimum_out, self, other, out);
  binary_select("Min", "aten::minimum", self, other, out);
  return out;
}

at::Tensor& clamp_out(const at::Tensor& self, const c10::optional<at::Scalar>& min,
                      const c10::optional<at::Scalar>& max, at::Tensor& out) {
  constexpr const char* kAten = "aten::clamp";
  if (!numeric(out.scalar_type())) return NPUSCOPE_FALLBACK(clamp_out, self, min, max, out);
  resize_out(out, self.sizes());
  if (out.numel() == 0) return out;
  emulator::Attrs attrs;
  const bool integral = !is_float(out.scalar_type());
  if (min.has_value()) attrs.set("min", integral ? emulator::AttrValue(min->toLong()) : min->toDouble());
  if (max.has_value()) attrs.set("max", integral ? emulator::AttrValue(max->toLong()) : max->toDouble());
  OutputSlot slot(out, kAten);
  run_op("Clip", kAten, {operand(self, out.scalar_type(), kAten)}, attrs, {slot.tensor()});
  slot.finish();
  return out;
}

// ---- max / min / argmax / argmin ----------------------------------------------------------------

at::Tensor reduce_all(const char* op, const char* aten, const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, aten, "(): Expected reduction dim to be specified for input.numel() == 0.");
  at::Tensor out = at::empty({}, self.options());
  run_op(op, aten, {contiguous(self, aten).reshape({self.numel()})},
         {{"axes", std::vector<std::int64_t>{0}}, {"keepdims", std::int64_t{0}}}, {out});
  return out;
}

at::Tensor max_all(const at::Tensor& self) {
  if (!numeric(self.scalar_type())) return NPUSCOPE_FALLBACK(max, self);
  return reduce_all("ReduceMax", "aten::max", self);
}

at::Tensor min_all(const at::Tensor& self) {
  if (!numeric(self.scalar_type())) return NPUSCOPE_FALLBACK(min, self);
  return reduce_all("ReduceMin", "aten::min", self);
}

void arg_reduce(const char* op, const char* aten, const at::Tensor& self, c10::optional<std::int64_t> dim, bool keepdim,
                const at::Tensor& out) {
  const at::Tensor input = dim.has_value() ? contiguous(self, aten) : contiguous(self, aten).reshape({self.numel()});
  const std::int64_t axis = dim.has_value() ? c10::maybe_wrap_dim(*dim, std::max<std::int64_t>(self.dim(), 1)) : 0;
  std::vector<std::int64_t> shape;
  if (dim.has_value()) {
    for (std::int64_t d = 0; d < self.dim(); ++d) {
      if (d != axis)
        shape.push_back(self.size(d));
      else if (keepdim)
        shape.push_back(1);
    }
  } else if (keepdim) {
    shape.assign(static_cast<std::size_t>(self.dim()), 1);
  }
  resize_out(out, shape);
  OutputSlot slot(out, aten);
  const at::Tensor dst = dim.has_value() ? slot.tensor() : slot.tensor().view(at::IntArrayRef{});
  run_op(op, aten, {input}, {{"axis", axis}, {"keepdims", std::int64_t{dim.has_value() && keepdim}}}, {dst});
  slot.finish();
}

at::Tensor& argmax_out(const at::Tensor& self, c10::optional<std::int64_t> dim, bool keepdim, at::Tensor& out) {
  if (!numeric(self.scalar_type()) || self.numel() == 0 || self.dim() == 0)
    return NPUSCOPE_FALLBACK(argmax_out, self, dim, keepdim, out);
  arg_reduce("ArgMax", "aten::argmax", self, dim, keepdim, out);
  return out;
}

at::Tensor& argmin_out(const at::Tensor& self, c10::optional<std::int64_t> dim, bool keepdim, at::Tensor& out) {
  if (!numeric(self.scalar_type()) || self.numel() == 0 || self.dim() == 0)
    return NPUSCOPE_FALLBACK(argmin_out, self, dim, keepdim, out);
  arg_reduce("ArgMin", "aten::argmin", self, dim, keepdim, out);
  return out;
}

std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, std::int64_t dim, bool keepdim,
                                                 at::Tensor& values, at::Tensor& indices) {
  constexpr const char* kAten = "aten::max";
  if (!numeric(self.scalar_type()) || self.numel() == 0 || self.dim() == 0)
    return NPUSCOPE_FALLBACK(max_dim_max, self, dim, keepdim, values, indices);
  const std::int64_t axis = c10::maybe_wrap_dim(dim, self.dim());
  arg_reduce("ArgMax", kAten, self, axis, keepdim, indices);
  resize_out(values, indices.sizes());
  OutputSlot slot(values, kAten);
  run_op("ReduceMax", kAten, {operand(self, values.scalar_type(), kAten)},
         {{"axes", std::vector<std::int64_t>{axis}}, {"keepdims", std::int64_t{keepdim}}}, {slot.tensor()});
  slot.finish();
  return {values, indices};
}

// ---- topk, sort ---------------------------------------------------------------------------------

// values, indices = the k largest (or smallest) along dim, sorted: TopK, whose ties keep the lower
// index first (what sort(stable=True) promises; torch's unstable orders are unspecified anyway).
void top_k(const char* aten, const at::Tensor& self, std::int64_t k, std::int64_t dim, bool largest,
           const at::Tensor& values, const at::Tensor& indices) {
  check_same_device(aten, values, {self});
  const std::int64_t axis = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(k >= 0 && k <= self.size(axis), aten, ": k (", k, ") is out of range for dimension ", axis, " of size ",
              self.size(axis));
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[static_cast<std::size_t>(axis)] = k;
  resize_out(values, shape);
  resize_out(indices, shape);
  if (values.numel() == 0) return;
  OutputSlot v(values, aten), i(indices, aten);
  run_op("TopK", aten, {operand(self, values.scalar_type(), aten)},
         {{"k", k}, {"axis", axis}, {"largest", std::int64_t{largest}}, {"sorted", std::int64_t{1}}},
         {v.tensor(), i.tensor()});
  v.finish();
  i.finish();
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, std::int64_t k, std::int64_t dim, bool largest,
                                              bool sorted, at::Tensor& values, at::Tensor& indices) {
  if (!numeric(self.scalar_type()) || self.dim() == 0 || indices.scalar_type() != at::kLong)
    return NPUSCOPE_FALLBACK(topk_values, self, k, dim, largest, sorted, values, indices);
  top_k("aten::topk", self, k, dim, largest, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self, c10::optional<bool> stable, std::int64_t dim,
                                              bool descending, at::Tensor& values, at::Tensor& indices) {
  if (!numeric(self.scalar_type()) || self.dim() == 0 || indices.scalar_type() != at::kLong)
    return NPUSCOPE_FALLBACK(sort_values_stable, self, stable, dim, descending, values, indices);
  top_k("aten::sort", self, self.size(c10::maybe_wrap_dim(dim, self.dim())), dim, descending, values, indices);
  return {values, indices};
}

// ---- cumsum, pow --------------------------------------------------------------------------------

at::Tensor& cumsum_out(const at::Tensor& self, std::int64_t dim, c10::optional<at::ScalarType> dtype, at::Tensor& out) {
  constexpr const char* kAten = "aten::cumsum";
  if (!numeric(out.scalar_type()) || self.dim() == 0) return NPUSCOPE_FALLBACK(cumsum_out, self, dim, dtype, out);
  resize_out(out, self.sizes());
  if (out.numel() == 0) return out;
  OutputSlot slot(out, kAten);
  run_op("CumSum", kAten, {operand(self, out.scalar_type(), kAten)}, {{"axis", c10::maybe_wrap_dim(dim, self.dim())}},
         {slot.tensor()});
  slot.finish();
  return out;
}

// x ** 2 and x ** 0.5 are what models write (RMSNorm, variance): Mul and Sqrt; other exponents a Pow
// with the exponent uploaded as a one-element tensor.
at::Tensor& pow_scalar_out(const at::Tensor& self, const at::Scalar& exponent, at::Tensor& out) {
  constexpr const char* kAten = "aten::pow";
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(pow_Tensor_Scalar_out, self, exponent, out);
  resize_out(out, self.sizes());
  if (out.numel() == 0) return out;
  const at::ScalarType type = out.scalar_type();
  const at::Tensor x = operand(self, type, kAten);
  const double e = exponent.toDouble();
  OutputSlot slot(out, kAten);
  if (e == 2.0)
    run_op("Mul", kAten, {x, x}, {}, {slot.tensor()});
  else if (e == 0.5)
    run_op("Sqrt", kAten, {x}, {}, {slot.tensor()});
  else if (e == -0.5)
    run_op("Rsqrt", kAten, {x}, {}, {slot.tensor()});
  else if (e == 1.0)
    copy_into(slot.tensor(), x, kAten);
  else
    run_op("Pow", kAten, {x, scalar_tensor(exponent, type, x)}, {}, {slot.tensor()});
  slot.finish();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("eq.Tensor_out", TORCH_FN(eq_tensor_out));
  m.impl("eq.Scalar_out", TORCH_FN(eq_scalar_out));
  m.impl("ne.Tensor_out", TORCH_FN(ne_tensor_out));
  m.impl("ne.Scalar_out", TORCH_FN(ne_scalar_out));
  m.impl("lt.Tensor_out", TORCH_FN(lt_tensor_out));
  m.impl("lt.Scalar_out", TORCH_FN(lt_scalar_out));
  m.impl("le.Tensor_out", TORCH_FN(le_tensor_out));
  m.impl("le.Scalar_out", TORCH_FN(le_scalar_out));
  m.impl("gt.Tensor_out", TORCH_FN(gt_tensor_out));
  m.impl("gt.Scalar_out", TORCH_FN(gt_scalar_out));
  m.impl("ge.Tensor_out", TORCH_FN(ge_tensor_out));
  m.impl("ge.Scalar_out", TORCH_FN(ge_scalar_out));
  m.impl("where.self", TORCH_FN(where));
  m.impl("where.self_out", TORCH_FN(where_out));
  m.impl("logical_not.out", TORCH_FN(logical_not_out));
  m.impl("logical_and.out", TORCH_FN(logical_and_out));
  m.impl("logical_or.out", TORCH_FN(logical_or_out));
  m.impl("bitwise_and.Tensor_out", TORCH_FN(bitwise_and_out));
  m.impl("bitwise_or.Tensor_out", TORCH_FN(bitwise_or_out));
  m.impl("bitwise_xor.Tensor_out", TORCH_FN(bitwise_xor_out));
  m.impl("bitwise_not.out", TORCH_FN(bitwise_not_out));
  m.impl("maximum.out", TORCH_FN(maximum_out));
  m.impl("minimum.out", TORCH_FN(minimum_out));
  m.impl("clamp.out", TORCH_FN(clamp_out));
  m.impl("max", TORCH_FN(max_all));
  m.impl("min", TORCH_FN(min_all));
  m.impl("max.dim_max", TORCH_FN(max_dim_out));
  m.impl("argmax.out", TORCH_FN(argmax_out));
  m.impl("argmin.out", TORCH_FN(argmin_out));
  m.impl("topk.values", TORCH_FN(topk_out));
  m.impl("sort.values_stable", TORCH_FN(sort_out));
  m.impl("cumsum.out", TORCH_FN(cumsum_out));
  m.impl("pow.Tensor_Scalar_out", TORCH_FN(pow_scalar_out));
}

}  // namespace npuscope::pytorch
