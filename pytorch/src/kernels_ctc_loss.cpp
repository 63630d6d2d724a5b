// Native CTC loss: _ctc_loss and _ctc_loss_backward (F.ctc_loss and its backward; the reduction and
// zero_infinity's zeroing of the loss are ctc_loss's own element-wise ops around them), both with
// host lengths (IntArrayRef) and with tensor lengths (.Tensor, read back to the host first, as aten's
// CPU kernel reads them): CTCLossV2, CTCLossV2Grad (Note [CTC loss] in
// emulator/src/kernels/ctc_loss_ops.cpp). As aclnnCtcLoss does, the host lengths become two small
// device tensors (an H2D copy each) and the longest target length an attribute. float32 log_probs
// with int32/int64 targets run natively; other dtypes (float64; float16, which 1.13's CPU kernel
// rejects) and ranks go to the fallback (Note [Native or fallback]).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

bool native_ctc(const at::Tensor& log_probs, const at::Tensor& targets) {
  return log_probs.scalar_type() == at::kFloat && log_probs.dim() == 3 && log_probs.size(0) > 0 &&
         index_dtype(targets.scalar_type()) && (targets.dim() == 1 || targets.dim() == 2);
}

// aten's argument checks of ctc_loss_cpu (with its messages), and negative lengths, which it leaves
// undefined. Returns the longest target length.
std::int64_t check_ctc_args(const char* aten, const at::Tensor& log_probs, const at::Tensor& targets,
                            at::IntArrayRef input_lengths, at::IntArrayRef target_lengths, std::int64_t blank) {
  const std::int64_t t = log_probs.size(0), n = log_probs.size(1), c = log_probs.size(2);
  TORCH_CHECK(0 <= blank && blank < c, aten, ": blank must be in label range (blank ", blank, ", ", c, " classes)");
  TORCH_CHECK(static_cast<std::int64_t>(input_lengths.size()) == n, aten,
              ": input_lengths must be of size batch_size (", n, "), got ", input_lengths.size());
  TORCH_CHECK(static_cast<std::int64_t>(target_lengths.size()) == n, aten,
              ": target_lengths must be of size batch_size (", n, "), got ", target_lengths.size());
  std::int64_t most = 0, sum = 0;
  for (std::int64_t b = 0; b < n; ++b) {
    TORCH_CHECK(0 <= input_lengths[b] && input_lengths[b] <= t, aten, ": Expected input_lengths to have value at most ",
                t, " (and at least 0), but got value ", input_lengths[b]);
    TORCH_CHECK(target_lengths[b] >= 0, aten, ": target_lengths[", b, "] = ", target_lengths[b], " is negative");
    most = std::max(most, target_lengths[b]);
    sum += target_lengths[b];
  }
  if (targets.dim() == 1) {
    TORCH_CHECK(targets.size(0) == sum, aten, ": concatenated targets must hold sum(target_lengths) = ", sum,
                " labels, got ", targets.size(0));
  } else {
    TORCH_CHECK(targets.size(0) == n && targets.size(1) >= most, aten, ": targets must be [", n, ", >= ", most,
                "] (batch_size, the longest target length), got ", targets.sizes());
  }
  return most;
}

// Host lengths as a device int64 tensor on `like`'s device (an H2D copy).
at::Tensor device_lengths(at::IntArrayRef lengths, const at::Tensor& like) {
  return at::tensor(lengths, at::TensorOptions().dtype(at::kLong)).to(like.device());
}

// Tensor lengths (any device) read back to the host as int64, as aten's CPU kernel reads them.
at::Tensor host_lengths(const at::Tensor& lengths, const char* what) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false), what, " must be integral");
  return lengths.to(at::kCPU, at::kLong).contiguous();
}
at::IntArrayRef as_array(const at::Tensor& host) {
  return {host.data_ptr<std::int64_t>(), static_cast<std::size_t>(host.numel())};
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_on_device(const at::Tensor& log_probs, const at::Tensor& targets,
                                                      at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                                      std::int64_t blank, bool zero_infinity) {
  constexpr const char* kAten = "aten::_ctc_loss";
  if (!native_ctc(log_probs, targets))
    return NPUSCOPE_FALLBACK(_ctc_loss, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
  check_same_device(kAten, log_probs, {targets});
  const std::int64_t most = check_ctc_args(kAten, log_probs, targets, input_lengths, target_lengths, blank);
  const std::int64_t t = log_probs.size(0), n = log_probs.size(1);
  at::Tensor nll = at::empty({n}, log_probs.options());
  at::Tensor log_alpha = at::empty({n, t, 2 * most + 1}, log_probs.options());
  if (n == 0) return {nll, log_alpha};
  // zero_infinity stays 0: aten's _ctc_loss returns the infinite losses, which its backward recognises
  // (ctc_loss zeroes them afterwards).
  run_op("CTCLossV2", kAten,
         {contiguous(log_probs, kAten), contiguous(targets, kAten), device_lengths(input_lengths, log_probs),
          device_lengths(target_lengths, log_probs)},
         {{"blank", blank}, {"max_target_length", most}}, {nll, log_alpha});
  return {nll, log_alpha};
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor_on_device(const at::Tensor& log_probs, const at::Tensor& targets,
                                                             const at::Tensor& input_lengths,
                                                             const at::Tensor& target_lengths, std::int64_t blank,
                                                             bool zero_infinity) {
  const at::Tensor il = host_lengths(input_lengths, "input_lengths"),
                   tl = host_lengths(target_lengths, "target_lengths");
  return ctc_loss_on_device(log_probs, targets, as_array(il), as_array(tl), blank, zero_infinity);
}

at::Tensor ctc_loss_backward_on_device(const at::Tensor& grad, const at::Tensor& log_probs, const at::Tensor& targets,
                                       at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                       const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha,
                                       std::int64_t blank, bool zero_infinity) {
  constexpr const char* kAten = "aten::_ctc_loss_backward";
  const bool native = native_ctc(log_probs, targets) && grad.dim() == 1 && neg_log_likelihood.dim() == 1 &&
                      log_alpha.dim() == 3 && log_alpha.size(2) % 2 == 1 && is_float(grad.scalar_type()) &&
                      is_float(neg_log_likelihood.scalar_type()) && is_float(log_alpha.scalar_type());
  if (!native)
    return NPUSCOPE_FALLBACK(_ctc_loss_backward, grad, log_probs, targets, input_lengths, target_lengths,
                             neg_log_likelihood, log_alpha, blank, zero_infinity);
  check_same_device(kAten, log_probs, {grad, targets, neg_log_likelihood, log_alpha});
  const std::int64_t most = check_ctc_args(kAten, log_probs, targets, input_lengths, target_lengths, blank);
  TORCH_CHECK(log_alpha.size(2) >= 2 * most + 1, kAten, ": log_alpha ", log_alpha.sizes(),
              " is too short for the longest target length ", most);
  at::Tensor out = at::empty(log_probs.sizes(), log_probs.options());
  if (out.numel() == 0) return out;
  const at::ScalarType type = out.scalar_type();
  run_op("CTCLossV2Grad", kAten,
         {operand(grad, type, kAten), contiguous(log_probs, kAten), contiguous(targets, kAten),
          device_lengths(input_lengths, log_probs), device_lengths(target_lengths, log_probs),
          operand(neg_log_likelihood, type, kAten), operand(log_alpha, type, kAten)},
         {{"blank", blank}, {"zero_infinity", std::int64_t{zero_infinity}}}, {out});
  return out;
}

at::Tensor ctc_loss_backward_tensor_on_device(const at::Tensor& grad, const at::Tensor& log_probs,
                                              const at::Tensor& targets, const at::Tensor& input_lengths,
                                              const at::Tensor& target_lengths, const at::Tensor& neg_log_likelihood,
                                              const at::Tensor& log_alpha, std::int64_t blank, bool zero_infinity) {
  const at::Tensor il = host_lengths(input_lengths, "input_lengths"),
                   tl = host_lengths(target_lengths, "target_lengths");
  return ctc_loss_backward_on_device(grad, log_probs, targets, as_array(il), as_array(tl), neg_log_likelihood,
                                     log_alpha, blank, zero_infinity);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_ctc_loss", TORCH_FN(ctc_loss_on_device));
  m.impl("_ctc_loss.Tensor", TORCH_FN(ctc_loss_tensor_on_device));
  m.impl("_ctc_loss_backward", TORCH_FN(ctc_loss_backward_on_device));
  m.impl("_ctc_loss_backward.Tensor", TORCH_FN(ctc_loss_backward_tensor_on_device));
}

}  // namespace npuscope::pytorch
