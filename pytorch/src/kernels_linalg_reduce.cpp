// Native matrix products, reductions, softmax and losses: mm, addmm, bmm, baddbmm (Gemm /
// BatchMatMul, a transposed operand as the transpose flag rather than a copy), sum, mean
// (ReduceSum / ReduceMean), any, all (ReduceAny / ReduceAll), norm with p = 1 or 2 (ReduceL1 / ReduceL2), _softmax,
// _log_softmax and their backward ops, nll_loss and nll_loss2d forward and backward (what cross_entropy
// reaches).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// ---- matrix products ----------------------------------------------------------------------------

void gemm(const char* aten, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, double alpha, double beta,
          const at::Tensor& out) {
  const at::ScalarType type = out.scalar_type();
  const MatrixOperand ma = matrix_operand(a, type, aten), mb = matrix_operand(b, type, aten);
  OutputSlot slot(out, aten);
  run_op("Gemm", aten, {ma.tensor, mb.tensor, c.defined() ? operand(c, type, aten) : at::Tensor()},
         {{"alpha", alpha},
          {"beta", c.defined() ? beta : 0.0},
          {"transA", std::int64_t{ma.transposed}},
          {"transB", std::int64_t{mb.transposed}}},
         {slot.tensor()});
  slot.finish();
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "aten::mm: expects 2-D matrices, got ", self.sizes(), " and ",
              mat2.sizes());
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(mm_out, self, mat2, out);
  resize_out(out, {self.size(0), mat2.size(1)});
  if (out.numel() == 0) return out;
  gemm("aten::mm", self, mat2, at::Tensor(), 1.0, 0.0, out);
  return out;
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "aten::addmm: expects 2-D matrices, got ", mat1.sizes(), " and ",
              mat2.sizes());
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(addmm_out, self, mat1, mat2, beta, alpha, out);
  resize_out(out, {mat1.size(0), mat2.size(1)});
  if (out.numel() == 0) return out;
  const double b = beta.toDouble();
  gemm("aten::addmm", mat1, mat2, b == 0.0 ? at::Tensor() : self, alpha.toDouble(), b, out);
  return out;
}

void batch_matmul(const char* aten, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  const at::ScalarType type = out.scalar_type();
  const MatrixOperand ma = matrix_operand(a, type, aten), mb = matrix_operand(b, type, aten);
  OutputSlot slot(out, aten);
  run_op("BatchMatMul", aten, {ma.tensor, mb.tensor},
         {{"adj_x", std::int64_t{ma.transposed}}, {"adj_y", std::int64_t{mb.transposed}}}, {slot.tensor()});
  slot.finish();
}

void check_bmm(const char* aten, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3, aten, ": expects 3-D tensors, got ", a.sizes(), " and ", b.sizes());
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), aten, ": ", a.sizes(), " and ", b.sizes(),
              " cannot be multiplied batch by batch");
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_bmm("aten::bmm", self, mat2);
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(bmm_out, self, mat2, out);
  resize_out(out, {self.size(0), self.size(1), mat2.size(2)});
  if (out.numel() == 0) return out;
  batch_matmul("aten::bmm", self, mat2, out);
  return out;
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::Tensor& out) {
  constexpr const char* kAten = "aten::baddbmm";
  check_bmm(kAten, b1, b2);
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(baddbmm_out, self, b1, b2, beta, alpha, out);
  resize_out(out, {b1.size(0), b1.size(1), b2.size(2)});
  if (out.numel() == 0) return out;
  const at::Tensor product = at::empty(out.sizes(), out.options());
  batch_matmul(kAten, b1, b2, product);
  const double a = alpha.toDouble(), b = beta.toDouble();
  OutputSlot slot(out, kAten);
  if (b == 0.0) {
    run_op("Muls", kAten, {product}, {{"value", a}}, {slot.tensor()});
  } else {
    const at::Tensor base = at::empty(out.sizes(), out.options());
    run_op("Muls", kAten, {operand(self.expand(out.sizes()), out.scalar_type(), kAten)}, {{"value", b}}, {base});
    run_op("Axpy", kAten, {base, product}, {{"alpha", a}}, {slot.tensor()});
  }
  slot.finish();
  return out;
}

// ---- reductions ---------------------------------------------------------------------------------

std::vector<std::int64_t> reduce_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  std::vector<std::int64_t> axes;
  if (dim.has_value()) {
    for (auto d : *dim) axes.push_back(c10::maybe_wrap_dim(d, self.dim()));
  }
  if (axes.empty()) {
    for (std::int64_t d = 0; d < self.dim(); ++d) axes.push_back(d);
  }
  return axes;
}

std::vector<std::int64_t> reduced_shape(const at::Tensor& self, const std::vector<std::int64_t>& axes, bool keepdim) {
  std::vector<std::int64_t> shape;
  for (std::int64_t d = 0; d < self.dim(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      shape.push_back(self.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

void reduce(const char* op, const char* aten, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
            const at::Tensor& out) {
  const auto axes = reduce_dims(self, dim);
  resize_out(out, reduced_shape(self, axes, keepdim));
  OutputSlot slot(out, aten);
  if (self.dim() == 0) {
    copy_into(slot.tensor(), operand(self, out.scalar_type(), aten), aten);
  } else {
    run_op(op, aten, {operand(self, out.scalar_type(), aten)}, {{"axes", axes}, {"keepdims", std::int64_t{keepdim}}},
           {slot.tensor()});
  }
  slot.finish();
}

bool reducible(const at::Tensor& self, const at::Tensor& out) {
  return self.numel() > 0 &&
         (is_float(out.scalar_type()) || out.scalar_type() == at::kLong || out.scalar_type() == at::kInt);
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    c10::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!reducible(self, out)) return NPUSCOPE_FALLBACK(sum_IntList_out, self, dim, keepdim, dtype, out);
  reduce("ReduceSum", "aten::sum", self, dim, keepdim, out);
  return out;
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     c10::optional<at::ScalarType> dtype, at::Tensor& out) {
  if (!reducible(self, out) || !is_float(out.scalar_type()))
    return NPUSCOPE_FALLBACK(mean_out, self, dim, keepdim, dtype, out);
  reduce("ReduceMean", "aten::mean", self, dim, keepdim, out);
  return out;
}

// torch.any / torch.all (`if mask.any():`, detection's degenerate-box check): ReduceAny / ReduceAll on
// the input's own dtype, into a bool. uint8 inputs (whose result is uint8) go to the CPU fallback.
bool truth_reducible(const at::Tensor& self, const at::Tensor& out) {
  return out.scalar_type() == at::kBool && self.numel() > 0 && to_emulator_dtype(self.scalar_type()).has_value();
}

void truth(const char* op, const char* aten, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
           const at::Tensor& out) {
  check_same_device(aten, out, {self});
  const at::Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  const auto axes = reduce_dims(x, dim);
  resize_out(out, self.dim() == 0 ? std::vector<std::int64_t>{} : reduced_shape(x, axes, keepdim));
  OutputSlot slot(out, aten);
  run_op(op, aten, {contiguous(x, aten)}, {{"axes", axes}, {"keepdims", std::int64_t{keepdim && self.dim() > 0}}},
         {slot.tensor()});
  slot.finish();
}

#define NPUSCOPE_TRUTH(name, op)                                                                        \
  at::Tensor& name##_dim_out(const at::Tensor& self, std::int64_t dim, bool keepdim, at::Tensor& out) { \
    if (!truth_reducible(self, out)) return NPUSCOPE_FALLBACK(name##_out, self, dim, keepdim, out);     \
    truth(op, "aten::" #name, self, at::IntArrayRef{dim}, keepdim, out);                                \
    return out;                                                                                         \
  }                                                                                                     \
  at::Tensor& name##_all_out(const at::Tensor& self, at::Tensor& out) {                                 \
    if (!truth_reducible(self, out)) return NPUSCOPE_FALLBACK(name##_all_out, self, out);               \
    truth(op, "aten::" #name, self, c10::nullopt, false, out);                                          \
    return out;                                                                                         \
  }
NPUSCOPE_TRUTH(any, "ReduceAny")
NPUSCOPE_TRUTH(all, "ReduceAll")
#undef NPUSCOPE_TRUTH

// torch.norm / Tensor.norm with p = 1 or 2 (clip_grad_norm_, F.normalize): ReduceL1 / ReduceL2, which
// accumulate in f32 on the NPU. Other orders go to the CPU fallback.
const char* norm_op(const c10::optional<at::Scalar>& p) {
  const double order = p.has_value() ? p->toDouble() : 2.0;
  return order == 2.0 ? "ReduceL2" : order == 1.0 ? "ReduceL1" : nullptr;
}

at::Tensor& norm_out(const at::Tensor& self, const c10::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  const char* op = norm_op(p);
  if (op == nullptr || !reducible(self, out) || !is_float(out.scalar_type()))
    return NPUSCOPE_FALLBACK(norm_out, self, p, dim, keepdim, out);
  reduce(op, "aten::norm", self, dim, keepdim, out);
  return out;
}

at::Tensor& norm_dtype_out(const at::Tensor& self, const c10::optional<at::Scalar>& p, at::IntArrayRef dim,
                           bool keepdim, at::ScalarType dtype, at::Tensor& out) {
  const char* op = norm_op(p);
  if (op == nullptr || !reducible(self, out) || !is_float(out.scalar_type()))
    return NPUSCOPE_FALLBACK(norm_dtype_out, self, p, dim, keepdim, dtype, out);
  reduce(op, "aten::norm", self, dim, keepdim, out);
  return out;
}

// ---- softmax ------------------------------------------------------------------------------------

void softmax(const char* op, const char* aten, const at::Tensor& self, std::int64_t dim, const at::Tensor& out) {
  resize_out(out, self.sizes());
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten);
  const std::int64_t axis = self.dim() == 0 ? 0 : c10::maybe_wrap_dim(dim, self.dim());
  run_op(op, aten, {operand(self.dim() == 0 ? self.view({1}) : self, out.scalar_type(), aten)}, {{"axis", axis}},
         {self.dim() == 0 ? slot.tensor().view({1}) : slot.tensor()});
  slot.finish();
}

at::Tensor& softmax_out(const at::Tensor& self, std::int64_t dim, bool half_to_float, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(_softmax_out, self, dim, half_to_float, out);
  softmax("Softmax", "aten::_softmax", self, dim, out);
  return out;
}

at::Tensor& log_softmax_out(const at::Tensor& self, std::int64_t dim, bool half_to_float, at::Tensor& out) {
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(_log_softmax_out, self, dim, half_to_float, out);
  softmax("LogSoftmax", "aten::_log_softmax", self, dim, out);
  return out;
}

void softmax_backward(const char* op, const char* aten, const at::Tensor& grad, const at::Tensor& output,
                      std::int64_t dim, const at::Tensor& out) {
  resize_out(out, grad.sizes());
  if (out.numel() == 0) return;
  const at::ScalarType type = out.scalar_type();
  OutputSlot slot(out, aten);
  const std::int64_t axis = grad.dim() == 0 ? 0 : c10::maybe_wrap_dim(dim, grad.dim());
  auto flat = [](const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; };
  run_op(op, aten, {flat(operand(grad, type, aten)), flat(operand(output, type, aten))}, {{"axis", axis}},
         {flat(slot.tensor())});
  slot.finish();
}

at::Tensor& softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, std::int64_t dim,
                                 at::ScalarType input_dtype, at::Tensor& out) {
  if (!is_float(out.scalar_type()))
    return NPUSCOPE_FALLBACK(_softmax_backward_data_out, grad, output, dim, input_dtype, out);
  softmax_backward("SoftmaxGrad", "aten::_softmax_backward_data", grad, output, dim, out);
  return out;
}

at::Tensor& log_softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, std::int64_t dim,
                                     at::ScalarType input_dtype, at::Tensor& out) {
  if (!is_float(out.scalar_type()))
    return NPUSCOPE_FALLBACK(_log_softmax_backward_data_out, grad, output, dim, input_dtype, out);
  softmax_backward("LogSoftmaxGrad", "aten::_log_softmax_backward_data", grad, output, dim, out);
  return out;
}

// ---- nll_loss -----------------------------------------------------------------------------------

bool nll_native(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(target.device() == self.device(), "aten::nll_loss: the input is on ", self.device(),
              " and the target on ", target.device(), "; move the target to the device too (target.to(", self.device(),
              "))");
  return is_float(self.scalar_type()) && self.dim() >= 1 && self.dim() <= 2 && target.scalar_type() == at::kLong;
}

std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                          const c10::optional<at::Tensor>& weight,
                                                          std::int64_t reduction, std::int64_t ignore_index,
                                                          at::Tensor& output, at::Tensor& total_weight) {
  if (!nll_native(self, target))
    return NPUSCOPE_FALLBACK(nll_loss_forward_output, self, target, weight, reduction, ignore_index, output,
                             total_weight);
  constexpr const char* kAten = "aten::nll_loss_forward";
  const at::Tensor w =
      weight.has_value() && weight->defined() ? operand(*weight, self.scalar_type(), kAten) : at::Tensor();
  if (reduction == at::Reduction::None && self.dim() == 2)
    resize_out(output, {self.size(0)});
  else
    resize_out(output, {});
  resize_out(total_weight, {});
  OutputSlot out(output, kAten), tw(total_weight, kAten);
  run_op("NLLLoss", kAten, {operand(self, self.scalar_type(), kAten), contiguous(target, kAten), w},
         {{"reduction", reduction}, {"ignore_index", ignore_index}}, {out.tensor(), tw.tensor()});
  out.finish();
  tw.finish();
  return {output, total_weight};
}

at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                  const c10::optional<at::Tensor>& weight, std::int64_t reduction,
                                  std::int64_t ignore_index, const at::Tensor& total_weight, at::Tensor& grad_input) {
  if (!nll_native(self, target))
    return NPUSCOPE_FALLBACK(nll_loss_backward_grad_input, grad_output, self, target, weight, reduction, ignore_index,
                             total_weight, grad_input);
  constexpr const char* kAten = "aten::nll_loss_backward";
  const at::ScalarType type = self.scalar_type();
  const at::Tensor w = weight.has_value() && weight->defined() ? operand(*weight, type, kAten) : at::Tensor();
  resize_out(grad_input, self.sizes());
  OutputSlot out(grad_input, kAten);
  run_op("NLLLossGrad", kAten,
         {operand(grad_output, type, kAten), operand(self, type, kAten), contiguous(target, kAten), w,
          operand(total_weight, type, kAten)},
         {{"reduction", reduction}, {"ignore_index", ignore_index}}, {out.tensor()});
  out.finish();
  return grad_input;
}

// ---- nll_loss2d: segmentation's cross entropy over [N, C, H, W] ------------------------------------
// As torch_npu runs it: the classes moved last ([N * H * W, C], one Transpose) and NLLLoss /
// NLLLossGrad on the rows; reduction none gives the loss of each pixel, [N, H, W].

bool nll2d_native(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(target.device() == self.device(), "aten::nll_loss2d: the input is on ", self.device(),
              " and the target on ", target.device(), "; move the target to the device too (target.to(", self.device(),
              "))");
  return is_float(self.scalar_type()) && target.scalar_type() == at::kLong && self.dim() == 4 && target.dim() == 3 &&
         target.size(0) == self.size(0) && target.size(1) == self.size(2) && target.size(2) == self.size(3);
}

// [N, C, H, W] -> [N * H * W, C], contiguous.
at::Tensor classes_last(const at::Tensor& t) { return t.permute({0, 2, 3, 1}).reshape({-1, t.size(1)}); }

std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_out(const at::Tensor& self, const at::Tensor& target,
                                                            const c10::optional<at::Tensor>& weight,
                                                            std::int64_t reduction, std::int64_t ignore_index,
                                                            at::Tensor& output, at::Tensor& total_weight) {
  if (!nll2d_native(self, target))
    return NPUSCOPE_FALLBACK(nll_loss2d_forward_output, self, target, weight, reduction, ignore_index, output,
                             total_weight);
  if (reduction == at::Reduction::None) {
    resize_out(output, target.sizes());
    at::Tensor rows = output.view({-1});
    nll_loss_forward_out(classes_last(self), target.reshape({-1}), weight, reduction, ignore_index, rows, total_weight);
  } else {
    nll_loss_forward_out(classes_last(self), target.reshape({-1}), weight, reduction, ignore_index, output,
                         total_weight);
  }
  return {output, total_weight};
}
std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                      const c10::optional<at::Tensor>& weight, std::int64_t reduction,
                                                      std::int64_t ignore_index) {
  at::Tensor output = at::empty({0}, self.options()), total_weight = at::empty({0}, self.options());
  nll_loss2d_forward_out(self, target, weight, reduction, ignore_index, output, total_weight);
  return {output, total_weight};
}

at::Tensor& nll_loss2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                    const c10::optional<at::Tensor>& weight, std::int64_t reduction,
                                    std::int64_t ignore_index, const at::Tensor& total_weight, at::Tensor& grad_input) {
  if (!nll2d_native(self, target) || (reduction == at::Reduction::None && !grad_output.sizes().equals(target.sizes())))
    return NPUSCOPE_FALLBACK(nll_loss2d_backward_grad_input, grad_output, self, target, weight, reduction, ignore_index,
                             total_weight, grad_input);
  const std::int64_t n = self.size(0), c = self.size(1), h = self.size(2), w = self.size(3);
  at::Tensor rows = at::empty({n * h * w, c}, self.options());
  nll_loss_backward_out(reduction == at::Reduction::None ? grad_output.reshape({-1}) : grad_output, classes_last(self),
                        target.reshape({-1}), weight, reduction, ignore_index, total_weight, rows);
  resize_out(grad_input, self.sizes());
  grad_input.copy_(rows.view({n, h, w, c}).permute({0, 3, 1, 2}));
  return grad_input;
}
at::Tensor nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                               const c10::optional<at::Tensor>& weight, std::int64_t reduction,
                               std::int64_t ignore_index, const at::Tensor& total_weight) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return nll_loss2d_backward_out(grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input);
}

// ---- mse_loss, smooth_l1_loss (detection's box regression: CANN's SmoothL1LossV2) ----------------

// out = the element-wise loss `op` of self and target (broadcast), reduced as aten's Reduction
// `reduction` says; `attrs`: the op's others (smooth L1's beta).
void pointwise_loss(const char* op, const char* aten, const at::Tensor& self, const at::Tensor& target,
                    std::int64_t reduction, emulator::Attrs attrs, const at::Tensor& out) {
  const auto shape = at::infer_size(self.sizes(), target.sizes());
  const at::ScalarType type = out.scalar_type();
  resize_out(out, reduction == at::Reduction::None ? at::IntArrayRef(shape) : at::IntArrayRef{});
  attrs.set("reduction", reduction);
  OutputSlot slot(out, aten);
  run_op(op, aten, {operand(self.expand(shape), type, aten), operand(target.expand(shape), type, aten)}, attrs,
         {slot.tensor()});
  slot.finish();
}

// grad_input = the gradient `op` of that loss (self and target of one shape).
void pointwise_loss_grad(const char* op, const char* aten, const at::Tensor& grad_output, const at::Tensor& self,
                         const at::Tensor& target, std::int64_t reduction, emulator::Attrs attrs,
                         const at::Tensor& grad_input) {
  const at::ScalarType type = grad_input.scalar_type();
  resize_out(grad_input, self.sizes());
  const at::Tensor g = reduction == at::Reduction::None ? grad_output.expand(self.sizes()) : grad_output;
  attrs.set("reduction", reduction);
  OutputSlot slot(grad_input, aten);
  run_op(op, aten, {operand(g, type, aten), operand(self, type, aten), operand(target, type, aten)}, attrs,
         {slot.tensor()});
  slot.finish();
}

at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, std::int64_t reduction, at::Tensor& out) {
  constexpr const char* kAten = "aten::mse_loss";
  if (!is_float(out.scalar_type())) return NPUSCOPE_FALLBACK(mse_loss_out, self, target, reduction, out);
  TORCH_CHECK(target.device() == self.device(), kAten, ": the input is on ", self.device(), " and the target on ",
              target.device(), "; move the target to the device too");
  pointwise_loss("MseLoss", kAten, self, target, reduction, {}, out);
  return out;
}

at::Tensor& mse_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                  std::int64_t reduction, at::Tensor& grad_input) {
  if (!is_float(grad_input.scalar_type()) || !self.sizes().equals(target.sizes()))
    return NPUSCOPE_FALLBACK(mse_loss_backward_grad_input, grad_output, self, target, reduction, grad_input);
  pointwise_loss_grad("MseLossGrad", "aten::mse_loss_backward", grad_output, self, target, reduction, {}, grad_input);
  return grad_input;
}

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                             std::int64_t reduction) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  return mse_loss_backward_out(grad_output, self, target, reduction, out);
}

at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, std::int64_t reduction, double beta,
                               at::Tensor& out) {
  constexpr const char* kAten = "aten::smooth_l1_loss";
  if (!is_float(out.scalar_type()) || beta < 0)
    return NPUSCOPE_FALLBACK(smooth_l1_loss_out, self, target, reduction, beta, out);
  check_same_device(kAten, out, {self, target});
  pointwise_loss("SmoothL1LossV2", kAten, self, target, reduction, {{"beta", beta}}, out);
  return out;
}

at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                        std::int64_t reduction, double beta, at::Tensor& grad_input) {
  constexpr const char* kAten = "aten::smooth_l1_loss_backward";
  if (!is_float(grad_input.scalar_type()) || !self.sizes().equals(target.sizes()) || beta < 0)
    return NPUSCOPE_FALLBACK(smooth_l1_loss_backward_grad_input, grad_output, self, target, reduction, beta,
                             grad_input);
  check_same_device(kAten, grad_input, {grad_output, self, target});
  pointwise_loss_grad("SmoothL1LossGradV2", kAten, grad_output, self, target, reduction, {{"beta", beta}}, grad_input);
  return grad_input;
}

at::Tensor smooth_l1_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                   std::int64_t reduction, double beta) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  return smooth_l1_loss_backward_out(grad_output, self, target, reduction, beta, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("smooth_l1_loss.out", TORCH_FN(smooth_l1_loss_out));
  m.impl("smooth_l1_loss_backward", TORCH_FN(smooth_l1_loss_backward));
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(smooth_l1_loss_backward_out));
  m.impl("mse_loss.out", TORCH_FN(mse_loss_out));
  m.impl("mse_loss_backward", TORCH_FN(mse_loss_backward));
  m.impl("mse_loss_backward.grad_input", TORCH_FN(mse_loss_backward_out));
  m.impl("mm.out", TORCH_FN(mm_out));
  m.impl("addmm.out", TORCH_FN(addmm_out));
  m.impl("bmm.out", TORCH_FN(bmm_out));
  m.impl("baddbmm.out", TORCH_FN(baddbmm_out));
  m.impl("sum.IntList_out", TORCH_FN(sum_out));
  m.impl("mean.out", TORCH_FN(mean_out));
  m.impl("any.out", TORCH_FN(any_dim_out));
  m.impl("any.all_out", TORCH_FN(any_all_out));
  m.impl("all.out", TORCH_FN(all_dim_out));
  m.impl("all.all_out", TORCH_FN(all_all_out));
  m.impl("norm.out", TORCH_FN(norm_out));
  m.impl("norm.dtype_out", TORCH_FN(norm_dtype_out));
  m.impl("_softmax.out", TORCH_FN(softmax_out));
  m.impl("_log_softmax.out", TORCH_FN(log_softmax_out));
  m.impl("_softmax_backward_data.out", TORCH_FN(softmax_backward_out));
  m.impl("_log_softmax_backward_data.out", TORCH_FN(log_softmax_backward_out));
  m.impl("nll_loss_forward.output", TORCH_FN(nll_loss_forward_out));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(nll_loss_backward_out));
  m.impl("nll_loss2d_forward", TORCH_FN(nll_loss2d_forward));
  m.impl("nll_loss2d_forward.output", TORCH_FN(nll_loss2d_forward_out));
  m.impl("nll_loss2d_backward", TORCH_FN(nll_loss2d_backward));
  m.impl("nll_loss2d_backward.grad_input", TORCH_FN(nll_loss2d_backward_out));
}

}  // namespace npuscope::pytorch
