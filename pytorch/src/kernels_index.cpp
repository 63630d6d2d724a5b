// Native indexing, joining and range kernels: index_select (what nn.Embedding's forward is),
// embedding_dense_backward, cat, roll (Roll: Swin's shifted windows; its backward is a roll too),
// triu / tril (causal masks), arange, linspace.
#include <ATen/ATen.h>
#include <ATen/core/IListRef.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

at::Tensor& index_select_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, at::Tensor& out) {
  constexpr const char* kAten = "aten::index_select";
  TORCH_CHECK(index.dim() <= 1, kAten, ": index should have 0 or 1 dimension, got ", index.dim());
  if (!to_emulator_dtype(self.scalar_type()) || !index_dtype(index.scalar_type()) || self.dim() == 0)
    return NPUSCOPE_FALLBACK(index_select_out, self, dim, index, out);
  TORCH_CHECK(index.device() == self.device(), kAten, ": self is on ", self.device(), " and index on ", index.device(),
              "; move them to one device first");
  const std::int64_t axis = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[static_cast<std::size_t>(axis)] = index.numel();
  resize_out(out, shape);
  if (out.numel() == 0) return out;
  OutputSlot slot(out, kAten);
  run_op("Gather", kAten, {operand(self, out.scalar_type(), kAten), contiguous(index.reshape({index.numel()}), kAten)},
         {{"axis", axis}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor index_select(const at::Tensor& self, std::int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return index_select_out(self, dim, index, out);
}

at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices, c10::SymInt num_weights,
                                    std::int64_t padding_idx, bool scale_grad_by_freq) {
  constexpr const char* kAten = "aten::embedding_dense_backward";
  if (!is_float(grad_output.scalar_type()) || !index_dtype(indices.scalar_type()))
    return NPUSCOPE_FALLBACK(embedding_dense_backward, grad_output, indices, num_weights.expect_int(), padding_idx,
                             scale_grad_by_freq);
  const std::int64_t n = num_weights.expect_int();
  at::Tensor out = at::empty({n, grad_output.size(-1)}, grad_output.options());
  run_op("EmbeddingDenseGrad", kAten, {contiguous(grad_output, kAten), contiguous(indices, kAten)},
         {{"num_weights", n}, {"padding_idx", padding_idx}, {"scale_grad_by_freq", std::int64_t{scale_grad_by_freq}}},
         {out});
  return out;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, std::int64_t dim, at::Tensor& out) {
  constexpr const char* kAten = "aten::cat";
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0) continue;  // legacy: empty 1-D tensors are skipped
    inputs.push_back(t);
  }
  if (inputs.empty() || !to_emulator_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(cat_out, tensors, dim, out);
  const std::int64_t axis = c10::maybe_wrap_dim(dim, inputs[0].dim());
  std::vector<std::int64_t> shape(inputs[0].sizes().begin(), inputs[0].sizes().end());
  std::int64_t total = 0;
  for (const auto& t : inputs) {
    TORCH_CHECK(t.dim() == inputs[0].dim(), kAten, ": tensors must have the same number of dims, got ",
                inputs[0].sizes(), " and ", t.sizes());
    check_same_device(kAten, out, {t});
    total += t.size(axis);
  }
  shape[static_cast<std::size_t>(axis)] = total;
  resize_out(out, shape);
  if (out.numel() == 0) return out;
  std::vector<at::Tensor> operands;
  for (const auto& t : inputs) operands.push_back(operand(t, out.scalar_type(), kAten));
  OutputSlot slot(out, kAten);
  run_op("Concat", kAten, operands, {{"axis", axis}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  constexpr const char* kAten = "aten::roll";
  if (!to_emulator_dtype(self.scalar_type()) || self.dim() == 0) return NPUSCOPE_FALLBACK(roll, self, shifts, dims);
  TORCH_CHECK(!shifts.empty(), kAten, ": shifts must be given");
  TORCH_CHECK(dims.empty() ? shifts.size() == 1 : shifts.size() == dims.size(), kAten, ": shifts ", shifts,
              " and dims ", dims, " must have the same length (or one shift and no dims)");
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  run_op("Roll", kAten, {operand(self, self.scalar_type(), kAten)}, {{"shifts", ints(shifts)}, {"dims", ints(dims)}},
         {out});
  return out;
}

void trilu(const char* aten, bool upper, const at::Tensor& self, std::int64_t diagonal, const at::Tensor& out) {
  resize_out(out, self.sizes());
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten);
  run_op("Trilu", aten, {operand(self, out.scalar_type(), aten)}, {{"upper", std::int64_t{upper}}, {"k", diagonal}},
         {slot.tensor()});
  slot.finish();
}

at::Tensor& triu_out(const at::Tensor& self, std::int64_t diagonal, at::Tensor& out) {
  if (self.dim() < 2 || !to_emulator_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(triu_out, self, diagonal, out);
  trilu("aten::triu", true, self, diagonal, out);
  return out;
}

at::Tensor& tril_out(const at::Tensor& self, std::int64_t diagonal, at::Tensor& out) {
  if (self.dim() < 2 || !to_emulator_dtype(out.scalar_type())) return NPUSCOPE_FALLBACK(tril_out, self, diagonal, out);
  trilu("aten::tril", false, self, diagonal, out);
  return out;
}

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  constexpr const char* kAten = "aten::arange";
  const at::ScalarType type = out.scalar_type();
  if (!(is_float(type) || type == at::kLong || type == at::kInt))
    return NPUSCOPE_FALLBACK(arange_start_out, start, end, step, out);
  const double s = start.toDouble(), e = end.toDouble(), d = step.toDouble();
  TORCH_CHECK(d != 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  TORCH_CHECK((d > 0 && e >= s) || (d < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  const bool integral = type == at::kLong || type == at::kInt;
  const std::int64_t n =
      integral ? static_cast<std::int64_t>(std::ceil(static_cast<double>(end.toLong() - start.toLong()) / d))
               : static_cast<std::int64_t>(std::ceil((e - s) / d));
  resize_out(out, {n});
  if (n == 0) return out;
  const at::Tensor first = at::empty({1}, out.options());  // Range's dtype carrier: its value is not read
  emulator::Attrs attrs;
  if (integral) {
    attrs = {{"start", start.toLong()}, {"limit", end.toLong()}, {"delta", step.toLong()}};
  } else {
    attrs = {{"start", s}, {"limit", e}, {"delta", d}};
  }
  OutputSlot slot(out, kAten);
  run_op("Range", kAten, {first}, attrs, {slot.tensor()});
  slot.finish();
  return out;
}

// torch.linspace (affine_grid's base grid): LinSpace, PyTorch's own formula.
at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, std::int64_t steps, at::Tensor& out) {
  constexpr const char* kAten = "aten::linspace";
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  const at::ScalarType type = out.scalar_type();
  const double s = start.toDouble(), e = end.toDouble();
  if (!(is_float(type) || type == at::kLong || type == at::kInt) || !std::isfinite(s) || !std::isfinite(e))
    return NPUSCOPE_FALLBACK(linspace_out, start, end, steps, out);
  resize_out(out, {steps});
  if (steps == 0) return out;
  const at::Tensor dtype_carrier = at::empty({1}, out.options());  // LinSpace reads only its dtype
  OutputSlot slot(out, kAten);
  run_op("LinSpace", kAten, {dtype_carrier}, {{"start", s}, {"stop", e}, {"num", steps}}, {slot.tensor()});
  slot.finish();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linspace.out", TORCH_FN(linspace_out));
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("index_select.out", TORCH_FN(index_select_out));
  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward));
  m.impl("cat.out", TORCH_FN(cat_out));
  m.impl("roll", TORCH_FN(roll));
  m.impl("triu.out", TORCH_FN(triu_out));
  m.impl("tril.out", TORCH_FN(tril_out));
  m.impl("arange.start_out", TORCH_FN(arange_out));
}

}  // namespace npuscope::pytorch
