// See kernel_support.h.
#include "kernel_support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/DistributionsHelper.h>

#include <mutex>

namespace npuscope::pytorch {

void check_same_device(const char* aten_name, const at::Tensor& out, std::initializer_list<at::Tensor> inputs) {
  for (const auto& t : inputs) {
    if (!t.defined() || is_host_scalar(t)) continue;
    TORCH_CHECK(t.device() == out.device(), aten_name, ": expected all tensors to be on the same device, but found ",
                t.device(), " and ", out.device(), "; move them to one device first (e.g. .to(", out.device(), "))");
  }
}

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

std::int64_t generator_seed(c10::optional<at::Generator> generator) {
  auto gen = at::get_generator_or_default<at::CPUGeneratorImpl>(generator, at::detail::getDefaultCPUGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return static_cast<std::int64_t>(gen->random64());
}

void unary_op(const char* op, const char* aten_name, const at::Tensor& self, const at::Tensor& out,
              const emulator::Attrs& attrs) {
  check_same_device(aten_name, out, {self});
  resize_out(out, self.sizes());
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten_name);
  run_op(op, aten_name, {operand(self, out.scalar_type(), aten_name)}, attrs, {slot.tensor()});
  slot.finish();
}

void backward_op(const char* op, const char* aten_name, const at::Tensor& grad, const at::Tensor& saved,
                 const at::Tensor& grad_input, const emulator::Attrs& attrs) {
  check_same_device(aten_name, grad_input, {grad, saved});
  resize_out(grad_input, grad.sizes());
  if (grad_input.numel() == 0) return;
  const at::ScalarType type = grad_input.scalar_type();
  OutputSlot slot(grad_input, aten_name);
  run_op(op, aten_name, {operand(grad, type, aten_name), operand(saved, type, aten_name)}, attrs, {slot.tensor()});
  slot.finish();
}

}  // namespace npuscope::pytorch
