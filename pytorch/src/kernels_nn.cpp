// Native convolution, normalisation and pooling kernels, forward and backward: convolution_overrideable
// (what torch.nn's convolutions reach on a backend that is not CPU/CUDA; 1-D, 2-D and 3-D) with its
// backward, native_batch_norm (training: BatchNormTraining, updating the running statistics in
// place; eval: BatchNorm) and its backward, native_layer_norm (LayerNormV3) and native_group_norm
// (GroupNormV2) with their backward ops, and max_pool2d_with_indices (MaxPoolWithArgmax) with its
// backward.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

const at::Tensor& value_or_undefined(const c10::optional<at::Tensor>& t) {
  static const at::Tensor undefined;
  return t.has_value() ? *t : undefined;
}

// ---- convolution --------------------------------------------------------------------------------

// 2-D and 3-D convolutions and transposed convolutions run natively (PyTorch's _convolution hands a
// 1-D one over as 2-D of height 1): Conv2d / Conv3d, ConvTranspose, and their gradients.
void check_conv(const char* aten, const at::Tensor& input, const at::Tensor& weight) {
  TORCH_CHECK((input.dim() == 4 || input.dim() == 5) && weight.dim() == input.dim(), aten,
              ": the emulated NPU runs 1-D, 2-D and 3-D convolutions (NCL, NCHW or NCDHW input); got input ",
              input.sizes(), " and weight ", weight.sizes());
  TORCH_CHECK(is_float(input.scalar_type()), aten, ": the emulated NPU convolves float32, float16 and bfloat16, not ",
              input.scalar_type());
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), aten, ": input (", input.scalar_type(), ") and weight (",
              weight.scalar_type(), ") must have the same dtype");
  TORCH_CHECK(input.device() == weight.device(), aten, ": input is on ", input.device(), " and weight on ",
              weight.device(), "; move them to one device first");
}

// pads: the begins then the ends, {top, left, bottom, right} or {front, top, left, back, bottom, right}.
emulator::Attrs conv_attrs(at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                           std::int64_t groups) {
  std::vector<std::int64_t> pads = ints(padding);
  pads.insert(pads.end(), padding.begin(), padding.end());
  return {{"strides", ints(stride)}, {"pads", std::move(pads)}, {"dilations", ints(dilation)}, {"group", groups}};
}

// The emulator ops of a convolution of `spatial` (2 or 3) dims: forward, input gradient, filter gradient.
struct ConvOps {
  const char* forward;
  const char* input_grad;
  const char* filter_grad;
};
ConvOps conv_ops(std::int64_t spatial) {
  if (spatial == 3) return {"Conv3d", "Conv3DBackpropInput", "Conv3DBackpropFilter"};
  return {"Conv2d", "Conv2DBackpropInput", "Conv2DBackpropFilter"};
}

// A transposed convolution (ConvTranspose: weight [Cin, Cout/groups, k...]) is the adjoint of
// the convolution with the same weight: its input's gradient is that convolution of dy, and its
// weight's gradient that convolution's filter gradient with the roles of input and dy swapped.
at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, std::int64_t groups) {
  constexpr const char* kAten = "aten::convolution";
  check_conv(kAten, input, weight);
  const at::ScalarType type = input.scalar_type();
  const std::int64_t spatial = input.dim() - 2;
  std::vector<std::int64_t> shape{input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (std::int64_t d = 0; d < spatial; ++d) {
    const std::int64_t in = input.size(d + 2), k = weight.size(d + 2);
    const std::int64_t out = transposed
                                 ? (in - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k - 1) + output_padding[d] + 1
                                 : (in + 2 * padding[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
    TORCH_CHECK(out > 0, kAten, ": the kernel ", weight.sizes(), " does not fit the input ", input.sizes(),
                " with padding ", padding);
    shape.push_back(out);
  }
  at::Tensor out = at::empty(shape, input.options());
  if (out.numel() == 0) return out;
  emulator::Attrs attrs = conv_attrs(stride, padding, dilation, groups);
  if (transposed) attrs.set("output_padding", ints(output_padding));
  run_op(transposed ? "ConvTranspose" : conv_ops(spatial).forward, kAten,
         {operand(input, type, kAten), operand(weight, type, kAten),
          bias.has_value() && bias->defined() ? operand(*bias, type, kAten) : at::Tensor()},
         attrs, {out});
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(const at::Tensor& grad_output,
                                                                    const at::Tensor& input, const at::Tensor& weight,
                                                                    at::IntArrayRef stride, at::IntArrayRef padding,
                                                                    at::IntArrayRef dilation, bool transposed,
                                                                    at::IntArrayRef output_padding, std::int64_t groups,
                                                                    std::array<bool, 3> output_mask) {
  constexpr const char* kAten = "aten::convolution_backward";
  check_conv(kAten, input, weight);
  (void)output_padding;  // the shapes of input and weight say it all
  const at::ScalarType type = input.scalar_type();
  const ConvOps ops = conv_ops(input.dim() - 2);
  const at::Tensor dy = operand(grad_output, type, kAten);
  const at::Tensor x = operand(input, type, kAten), w = operand(weight, type, kAten);
  const emulator::Attrs attrs = conv_attrs(stride, padding, dilation, groups);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = at::empty(input.sizes(), input.options());
    if (transposed) {
      run_op(ops.forward, kAten, {dy, w, at::Tensor()}, attrs, {grad_input});
    } else {
      emulator::Attrs a = attrs;
      a.set("input_size", ints(input.sizes()));
      run_op(ops.input_grad, kAten, {dy, w}, a, {grad_input});
    }
  }
  if (output_mask[1]) {
    grad_weight = at::empty(weight.sizes(), weight.options());
    emulator::Attrs a = attrs;
    a.set("filter_size", ints(weight.sizes()));
    run_op(ops.filter_grad, kAten, transposed ? std::vector<at::Tensor>{dy, x} : std::vector<at::Tensor>{x, dy}, a,
           {grad_weight});
  }
  if (output_mask[2]) {
    grad_bias = at::empty({grad_output.size(1)}, grad_output.options());
    std::vector<std::int64_t> axes{0};
    for (std::int64_t d = 2; d < grad_output.dim(); ++d) axes.push_back(d);
    run_op("ReduceSum", kAten, {dy}, {{"axes", axes}, {"keepdims", std::int64_t{0}}}, {grad_bias});
  }
  return {grad_input, grad_weight, grad_bias};
}

// ---- batch norm ---------------------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(const at::Tensor& input,
                                                                 const c10::optional<at::Tensor>& weight_opt,
                                                                 const c10::optional<at::Tensor>& bias_opt,
                                                                 const c10::optional<at::Tensor>& running_mean_opt,
                                                                 const c10::optional<at::Tensor>& running_var_opt,
                                                                 bool training, double momentum, double eps) {
  constexpr const char* kAten = "aten::native_batch_norm";
  TORCH_CHECK(input.dim() >= 2, kAten, ": expects an input of 2 or more dims [N, C, ...], got ", input.sizes());
  if (!is_float(input.scalar_type()))
    return NPUSCOPE_FALLBACK(native_batch_norm, input, weight_opt, bias_opt, running_mean_opt, running_var_opt,
                             training, momentum, eps);
  const at::ScalarType type = input.scalar_type();
  const std::int64_t c = input.size(1);
  const at::Tensor& weight = value_or_undefined(weight_opt);
  const at::Tensor& bias = value_or_undefined(bias_opt);
  const at::Tensor& running_mean = value_or_undefined(running_mean_opt);
  const at::Tensor& running_var = value_or_undefined(running_var_opt);
  at::Tensor out = at::empty(input.sizes(), input.options());
  const at::ScalarType stat_type = weight.defined() ? weight.scalar_type() : type;
  if (training) {
    at::Tensor save_mean = at::empty({c}, input.options().dtype(stat_type));
    at::Tensor save_invstd = at::empty({c}, input.options().dtype(stat_type));
    // The running statistics are updated in place: their memory is both input and output.
    const bool has_running =
        running_mean.defined() && running_var.defined() && running_mean.is_contiguous() && running_var.is_contiguous();
    const at::Tensor rm_out = has_running ? running_mean : at::empty({c}, input.options().dtype(stat_type));
    const at::Tensor rv_out = has_running ? running_var : at::empty({c}, input.options().dtype(stat_type));
    run_op("BatchNormTraining", kAten,
           {operand(input, type, kAten), contiguous(weight, kAten), contiguous(bias, kAten),
            has_running ? running_mean : at::Tensor(), has_running ? running_var : at::Tensor()},
           {{"momentum", momentum}, {"epsilon", eps}}, {out, save_mean, save_invstd, rm_out, rv_out});
    TORCH_CHECK(has_running || !running_mean.defined(), kAten,
                ": non-contiguous running statistics are not supported on the emulated NPU");
    return {out, save_mean, save_invstd};
  }
  TORCH_CHECK(running_mean.defined() && running_var.defined(), kAten,
              ": running_mean and running_var are required in eval mode");
  at::Tensor w = weight.defined() ? contiguous(weight, kAten) : at::ones({c}, input.options().dtype(stat_type));
  at::Tensor b = bias.defined() ? contiguous(bias, kAten) : at::zeros({c}, input.options().dtype(stat_type));
  run_op("BatchNorm", kAten,
         {operand(input, type, kAten), w, b, contiguous(running_mean, kAten), contiguous(running_var, kAten)},
         {{"epsilon", eps}}, {out});
  return {out, at::empty({0}, input.options()), at::empty({0}, input.options())};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight_opt,
    const c10::optional<at::Tensor>& running_mean_opt, const c10::optional<at::Tensor>& running_var_opt,
    const c10::optional<at::Tensor>& save_mean_opt, const c10::optional<at::Tensor>& save_invstd_opt, bool train,
    double eps, std::array<bool, 3> output_mask) {
  constexpr const char* kAten = "aten::native_batch_norm_backward";
  if (!is_float(input.scalar_type()))
    return NPUSCOPE_FALLBACK(native_batch_norm_backward, grad_out, input, weight_opt, running_mean_opt, running_var_opt,
                             save_mean_opt, save_invstd_opt, train, eps, output_mask);
  const at::ScalarType type = input.scalar_type();
  const std::int64_t c = input.size(1);
  const at::Tensor& weight = value_or_undefined(weight_opt);
  const at::Tensor& mean = value_or_undefined(train ? save_mean_opt : running_mean_opt);
  const at::Tensor& invstd_or_var = value_or_undefined(train ? save_invstd_opt : running_var_opt);
  TORCH_CHECK(mean.defined() && invstd_or_var.defined(), kAten, ": the saved statistics are missing");
  const at::ScalarType stat_type = weight.defined() ? weight.scalar_type() : mean.scalar_type();
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dw = at::empty({c}, input.options().dtype(stat_type));
  at::Tensor db = at::empty({c}, input.options().dtype(stat_type));
  run_op("BatchNormTrainingGrad", kAten,
         {operand(grad_out, type, kAten), operand(input, type, kAten), contiguous(weight, kAten),
          contiguous(mean, kAten), contiguous(invstd_or_var, kAten)},
         {{"training", std::int64_t{train}}, {"epsilon", eps}}, {dx, dw, db});
  return {output_mask[0] ? dx : at::Tensor(), output_mask[1] ? dw : at::Tensor(), output_mask[2] ? db : at::Tensor()};
}

// ---- layer norm ---------------------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(const at::Tensor& input,
                                                                 c10::SymIntArrayRef normalized_shape,
                                                                 const c10::optional<at::Tensor>& weight_opt,
                                                                 const c10::optional<at::Tensor>& bias_opt,
                                                                 double eps) {
  constexpr const char* kAten = "aten::native_layer_norm";
  const auto shape = c10::asIntArrayRefSlow(normalized_shape);
  const std::int64_t axis = input.dim() - static_cast<std::int64_t>(shape.size());
  TORCH_CHECK(axis >= 0 && input.sizes().slice(static_cast<std::size_t>(axis)).equals(shape), kAten,
              ": normalized_shape ", shape, " does not match the trailing dims of the input ", input.sizes());
  if (!is_float(input.scalar_type()))
    return NPUSCOPE_FALLBACK(native_layer_norm, input, c10::asIntArrayRefSlow(normalized_shape), weight_opt, bias_opt,
                             eps);
  const at::ScalarType type = input.scalar_type();
  std::vector<std::int64_t> stat_shape(input.sizes().begin(), input.sizes().end());
  for (std::size_t d = static_cast<std::size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
  at::Tensor out = at::empty(input.sizes(), input.options());
  // In x's dtype, as LayerNormV3 and 1.13's CPU kernel keep them.
  at::Tensor mean = at::empty(stat_shape, input.options());
  at::Tensor rstd = at::empty(stat_shape, input.options());
  run_op("LayerNormV3", kAten,
         {operand(input, type, kAten), contiguous(value_or_undefined(weight_opt), kAten),
          contiguous(value_or_undefined(bias_opt), kAten)},
         {{"axis", axis}, {"epsilon", eps}}, {out, mean, rstd});
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const c10::optional<at::Tensor>& weight_opt, const c10::optional<at::Tensor>& bias_opt,
    std::array<bool, 3> output_mask) {
  constexpr const char* kAten = "aten::native_layer_norm_backward";
  if (!is_float(input.scalar_type()))
    return NPUSCOPE_FALLBACK(native_layer_norm_backward, grad_out, input, c10::asIntArrayRefSlow(normalized_shape),
                             mean, rstd, weight_opt, bias_opt, output_mask);
  const auto shape = c10::asIntArrayRefSlow(normalized_shape);
  const std::int64_t axis = input.dim() - static_cast<std::int64_t>(shape.size());
  const at::ScalarType type = input.scalar_type();
  const at::Tensor& weight = value_or_undefined(weight_opt);
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dw = at::empty(shape, input.options().dtype(weight.defined() ? weight.scalar_type() : type));
  at::Tensor db = at::empty(shape, input.options().dtype(weight.defined() ? weight.scalar_type() : type));
  run_op("LayerNormGrad", kAten,
         {operand(grad_out, type, kAten), operand(input, type, kAten), contiguous(mean, kAten), contiguous(rstd, kAten),
          contiguous(weight, kAten)},
         {{"axis", axis}}, {dx, dw, db});
  return {output_mask[0] ? dx : at::Tensor(), output_mask[1] && weight.defined() ? dw : at::Tensor(),
          output_mask[2] && bias_opt.has_value() && bias_opt->defined() ? db : at::Tensor()};
}

// ---- group norm ---------------------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(const at::Tensor& input,
                                                                 const c10::optional<at::Tensor>& weight_opt,
                                                                 const c10::optional<at::Tensor>& bias_opt,
                                                                 c10::SymInt n, c10::SymInt c, c10::SymInt hw,
                                                                 std::int64_t group, double eps) {
  constexpr const char* kAten = "aten::native_group_norm";
  if (!is_float(input.scalar_type()) || input.dim() < 2 || input.numel() == 0)
    return NPUSCOPE_FALLBACK(native_group_norm, input, weight_opt, bias_opt, n.expect_int(), c.expect_int(),
                             hw.expect_int(), group, eps);
  const at::ScalarType type = input.scalar_type();
  at::Tensor out = at::empty(input.sizes(), input.options());
  at::Tensor mean = at::empty({input.size(0), group}, input.options());
  at::Tensor rstd = at::empty({input.size(0), group}, input.options());
  run_op("GroupNormV2", kAten,
         {operand(input, type, kAten), contiguous(value_or_undefined(weight_opt), kAten),
          contiguous(value_or_undefined(bias_opt), kAten)},
         {{"num_groups", group}, {"epsilon", eps}}, {out, mean, rstd});
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const c10::optional<at::Tensor>& weight_opt, c10::SymInt n, c10::SymInt c, c10::SymInt hw, std::int64_t group,
    std::array<bool, 3> output_mask) {
  constexpr const char* kAten = "aten::native_group_norm_backward";
  if (!is_float(input.scalar_type()) || input.dim() < 2 || input.numel() == 0)
    return NPUSCOPE_FALLBACK(native_group_norm_backward, grad_out, input, mean, rstd, weight_opt, n.expect_int(),
                             c.expect_int(), hw.expect_int(), group, output_mask);
  const at::ScalarType type = input.scalar_type();
  const at::Tensor& weight = value_or_undefined(weight_opt);
  const at::ScalarType param_type = weight.defined() ? weight.scalar_type() : type;
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dw = at::empty({input.size(1)}, input.options().dtype(param_type));
  at::Tensor db = at::empty({input.size(1)}, input.options().dtype(param_type));
  run_op("GroupNormGrad", kAten,
         {operand(grad_out, type, kAten), operand(input, type, kAten), contiguous(mean, kAten), contiguous(rstd, kAten),
          contiguous(weight, kAten)},
         {{"num_groups", group}}, {dx, dw, db});
  return {output_mask[0] ? dx : at::Tensor(), output_mask[1] ? dw : at::Tensor(), output_mask[2] ? db : at::Tensor()};
}

// ---- max pooling --------------------------------------------------------------------------------

struct PoolArgs {
  std::vector<std::int64_t> kernel, stride, padding, dilation;
};

PoolArgs pool_args(at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation) {
  auto two = [](at::IntArrayRef a, std::int64_t fallback) {
    if (a.empty()) return std::vector<std::int64_t>{fallback, fallback};
    return a.size() == 1 ? std::vector<std::int64_t>{a[0], a[0]} : std::vector<std::int64_t>{a[0], a[1]};
  };
  PoolArgs p{two(kernel, 1), two(stride, 0), two(padding, 0), two(dilation, 1)};
  if (stride.empty()) p.stride = p.kernel;
  return p;
}

emulator::Attrs pool_attrs(const PoolArgs& p, bool ceil_mode) {
  return {{"kernel", p.kernel},
          {"strides", p.stride},
          {"pads", p.padding},
          {"dilations", p.dilation},
          {"ceil_mode", std::int64_t{ceil_mode}}};
}

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                                 at::IntArrayRef stride, at::IntArrayRef padding,
                                                                 at::IntArrayRef dilation, bool ceil_mode,
                                                                 at::Tensor& out, at::Tensor& indices) {
  constexpr const char* kAten = "aten::max_pool2d_with_indices";
  if (!is_float(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4))
    return NPUSCOPE_FALLBACK(max_pool2d_with_indices_out, self, kernel_size, stride, padding, dilation, ceil_mode, out,
                             indices);
  const PoolArgs p = pool_args(kernel_size, stride, padding, dilation);
  const std::int64_t h = self.size(-2), w = self.size(-1);
  const std::int64_t oh = at::native::pooling_output_shape<std::int64_t>(h, p.kernel[0], p.padding[0], p.stride[0],
                                                                         p.dilation[0], ceil_mode);
  const std::int64_t ow = at::native::pooling_output_shape<std::int64_t>(w, p.kernel[1], p.padding[1], p.stride[1],
                                                                         p.dilation[1], ceil_mode);
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(oh);
  shape.push_back(ow);
  resize_out(out, shape);
  resize_out(indices, shape);
  OutputSlot y(out, kAten), idx(indices, kAten);
  run_op("MaxPoolWithArgmax", kAten, {operand(self, out.scalar_type(), kAten)}, pool_attrs(p, ceil_mode),
         {y.tensor(), idx.tensor()});
  y.finish();
  idx.finish();
  return {out, indices};
}

at::Tensor& max_pool2d_with_indices_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                 at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  constexpr const char* kAten = "aten::max_pool2d_with_indices_backward";
  if (!is_float(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4))
    return NPUSCOPE_FALLBACK(max_pool2d_with_indices_backward_grad_input, grad_output, self, kernel_size, stride,
                             padding, dilation, ceil_mode, indices, grad_input);
  resize_out(grad_input, self.sizes());
  OutputSlot dx(grad_input, kAten);
  // The window only times the kernel: each gradient's scatter scans its window's taps (cost_grad).
  const PoolArgs p = pool_args(kernel_size, stride, padding, dilation);
  run_op("MaxPoolGradWithArgmax", kAten,
         {operand(grad_output, grad_input.scalar_type(), kAten), contiguous(indices, kAten)},
         {{"input_size", ints(self.sizes())}, {"kernel", p.kernel}}, {dx.tensor()});
  dx.finish();
  return grad_input;
}

// ---- adaptive average pooling -------------------------------------------------------------------

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, c10::SymIntArrayRef output_size_sym) {
  constexpr const char* kAten = "aten::_adaptive_avg_pool2d";
  const auto output_size = c10::asIntArrayRefSlow(output_size_sym);
  if (!is_float(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4) || output_size.size() != 2)
    return NPUSCOPE_FALLBACK(_adaptive_avg_pool2d, self, output_size);
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(output_size[0]);
  shape.push_back(output_size[1]);
  at::Tensor out = at::empty(shape, self.options());
  if (out.numel() == 0) return out;
  run_op("AdaptiveAvgPool2d", kAten, {operand(self, self.scalar_type(), kAten)}, {{"output_size", ints(output_size)}},
         {out});
  return out;
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  constexpr const char* kAten = "aten::_adaptive_avg_pool2d_backward";
  if (!is_float(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4))
    return NPUSCOPE_FALLBACK(_adaptive_avg_pool2d_backward, grad_output, self);
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  run_op("AdaptiveAvgPool2dGrad", kAten, {operand(grad_output, self.scalar_type(), kAten)},
         {{"input_size", ints(self.sizes())}}, {out});
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptive_avg_pool2d_backward));
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));
  m.impl("native_group_norm", TORCH_FN(native_group_norm));
  m.impl("native_group_norm_backward", TORCH_FN(native_group_norm_backward));
  m.impl("max_pool2d_with_indices.out", TORCH_FN(max_pool2d_with_indices_out));
  m.impl("max_pool2d_with_indices_backward.grad_input", TORCH_FN(max_pool2d_with_indices_backward_out));
}

}  // namespace npuscope::pytorch
