// See kernel_support.h.
#include "kernel_support.h"

namespace npuscope::pytorch {

at::Tensor operand(const at::Tensor& t, at::ScalarType type, const char* aten_name) {
  at::Tensor c = contiguous(t, aten_name);
  if (!c.defined() || c.scalar_type() == type) return c;
  at::Tensor cast = at::empty(c.sizes(), c.options().dtype(type));
  run_op("Cast", aten_name, {c}, {{"to", dtype_attr(type)}}, {cast});
  return cast;
}

std::int64_t dtype_attr(at::ScalarType type) {
  return static_cast<std::int64_t>(checked_emulator_dtype(type, "privateuseone"));
}

MatrixOperand matrix_operand(const at::Tensor& t, at::ScalarType type, const char* aten_name) {
  const bool transposed_layout =
      t.dim() >= 2 && !t.is_contiguous() && t.scalar_type() == type && t.transpose(-2, -1).is_contiguous();
  if (transposed_layout) return {t.transpose(-2, -1), true};
  return {operand(t, type, aten_name), false};
}

std::vector<std::int64_t> ints(at::IntArrayRef a) { return {a.begin(), a.end()}; }

}  // namespace npuscope::pytorch
