// torchvision's deformable convolution on the device: deform_conv2d (DCN v1, and v2 with use_mask)
// and its backward _deform_conv2d_backward. torchvision's autograd kernel of deform_conv2d
// (registered for every autograd key) stays in front of ours and calls _deform_conv2d_backward,
// which lands here too.
//
// Note [deform_conv2d on the device]
// As torch_npu's npu_deformable_conv2d runs it on Ascend: the samples first, then a convolution.
//  - forward: DeformableOffsets(input, offset, mask) samples each kernel tap of each output pixel
//    into columns [N, C, H_out * kh, W_out * kw] (Note [DeformableOffsets layout] in
//    emulator/src/kernels/deformable_offsets_ops.cpp), then Conv2d(columns, weight, bias) with
//    stride = kernel = (kh, kw), no padding and the call's groups is torchvision's
//    weight · columns + bias (the bias is Conv2d's third input, as CANN's Conv2D takes it).
//  - backward: the columns again (torchvision's autograd saves only the inputs), then the
//    convolution's gradients as aten::convolution_backward runs them (kernels_nn.cpp):
//    Conv2DBackpropInput for the columns' gradient, Conv2DBackpropFilter for the weight's, a
//    ReduceSum of grad over (N, H, W) for the bias', and DeformableOffsetsGrad turns the columns'
//    gradient into the input's, the offsets' and the mask's (Note [DeformableOffsetsGrad formulas]).
//    Without use_mask the mask's gradient is zeros of the mask's shape ([N, 0] from torchvision's
//    Python wrapper), as torchvision's CPU kernel returns.
// The values are torchvision 0.14's CPU kernel's (deform_conv2d_kernel.cpp: bilinear samples with
// zeros off the map, offsets as (y, x) pairs per tap and offset group), summed in another order.
// float64, mismatched dtypes or devices, shapes torchvision would reject and empty batches run on
// the CPU fallback (Note [Native or fallback] in kernel_support.h) through TORCHVISION_FALLBACK
// (torchvision_op.h), counted and reported as any fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "torchvision_op.h"

namespace npuscope::pytorch {
namespace {

constexpr char kDeformConv[] = "torchvision::deform_conv2d";
constexpr char kDeformConvBackward[] = "torchvision::_deform_conv2d_backward";
using I64 = std::int64_t;
using DeformConvOp =
    TorchvisionOp<kDeformConv, at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                          const at::Tensor&, I64, I64, I64, I64, I64, I64, I64, I64, bool)>;
using DeformConvBackwardOp =
    TorchvisionOp<kDeformConvBackward,
                  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
                      const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      const at::Tensor&, I64, I64, I64, I64, I64, I64, I64, I64, bool)>;

// One call's tensors and geometry, in torchvision's argument order.
struct DeformConv {
  const at::Tensor &input, &weight, &offset, &mask, &bias;
  I64 stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups;
  bool use_mask;
  I64 kh() const { return weight.size(2); }
  I64 kw() const { return weight.size(3); }
  I64 out_h() const { return (input.size(2) + 2 * pad_h - dil_h * (kh() - 1) - 1) / stride_h + 1; }
  I64 out_w() const { return (input.size(3) + 2 * pad_w - dil_w * (kw() - 1) - 1) / stride_w + 1; }
};

bool same_kind(const at::Tensor& t, const at::Tensor& like) {
  return t.defined() && t.scalar_type() == like.scalar_type() && t.device() == like.device();
}

// Whether the emulator's ops run the call as torchvision's CPU kernel does (else: the fallback).
bool native(const DeformConv& c) {
  const at::Tensor& x = c.input;
  if (!is_float(x.scalar_type()) || x.dim() != 4 || c.weight.dim() != 4 || c.offset.dim() != 4) return false;
  if (!same_kind(c.weight, x) || !same_kind(c.offset, x) || !same_kind(c.bias, x)) return false;
  if (c.use_mask && (!same_kind(c.mask, x) || c.mask.dim() != 4)) return false;
  if (c.stride_h < 1 || c.stride_w < 1 || c.dil_h < 1 || c.dil_w < 1 || c.pad_h < 0 || c.pad_w < 0) return false;
  if (c.groups < 1 || c.offset_groups < 1 || x.numel() == 0 || c.weight.numel() == 0) return false;
  const I64 n = x.size(0), ch = x.size(1), cout = c.weight.size(0);
  if (ch % c.groups != 0 || c.weight.size(1) * c.groups != ch || cout % c.groups != 0 || ch % c.offset_groups != 0) {
    return false;
  }
  if (c.bias.dim() != 1 || c.bias.size(0) != cout || c.out_h() < 1 || c.out_w() < 1) return false;
  const I64 taps = c.offset_groups * c.kh() * c.kw();
  if (c.offset.sizes() != at::IntArrayRef{n, 2 * taps, c.out_h(), c.out_w()}) return false;
  return !c.use_mask || c.mask.sizes() == at::IntArrayRef{n, taps, c.out_h(), c.out_w()};
}

emulator::Attrs offsets_attrs(const DeformConv& c) {
  return {{"ksize", std::vector<I64>{c.kh(), c.kw()}},
          {"strides", std::vector<I64>{c.stride_h, c.stride_w}},
          {"pads", std::vector<I64>{c.pad_h, c.pad_w, c.pad_h, c.pad_w}},
          {"dilations", std::vector<I64>{c.dil_h, c.dil_w}},
          {"deformable_groups", c.offset_groups}};
}

// The Conv2d over the columns: stride = kernel, no padding.
emulator::Attrs columns_conv_attrs(const DeformConv& c) {
  return {{"strides", std::vector<I64>{c.kh(), c.kw()}},
          {"pads", std::vector<I64>{0, 0, 0, 0}},
          {"dilations", std::vector<I64>{1, 1}},
          {"group", c.groups}};
}

// DeformableOffsets' inputs: input, offset and, with use_mask, mask.
std::vector<at::Tensor> sampling_inputs(const DeformConv& c, const char* aten) {
  const at::ScalarType type = c.input.scalar_type();
  std::vector<at::Tensor> in{operand(c.input, type, aten), operand(c.offset, type, aten)};
  if (c.use_mask) in.push_back(operand(c.mask, type, aten));
  return in;
}

// The sampled columns [N, C, H_out * kh, W_out * kw].
at::Tensor columns(const DeformConv& c, const std::vector<at::Tensor>& sampling_in, const char* aten) {
  at::Tensor cols =
      at::empty({c.input.size(0), c.input.size(1), c.out_h() * c.kh(), c.out_w() * c.kw()}, c.input.options());
  run_op("DeformableOffsets", aten, sampling_in, offsets_attrs(c), {cols});
  return cols;
}

at::Tensor deform_conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
                         const at::Tensor& mask, const at::Tensor& bias, I64 stride_h, I64 stride_w, I64 pad_h,
                         I64 pad_w, I64 dil_h, I64 dil_w, I64 groups, I64 offset_groups, bool use_mask) {
  const DeformConv c{input, weight, offset, mask,  bias,   stride_h,      stride_w,
                     pad_h, pad_w,  dil_h,  dil_w, groups, offset_groups, use_mask};
  if (!native(c)) {
    return TORCHVISION_FALLBACK(DeformConvOp, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                                dil_h, dil_w, groups, offset_groups, use_mask);
  }
  const at::ScalarType type = input.scalar_type();
  const at::Tensor cols = columns(c, sampling_inputs(c, kDeformConv), kDeformConv);
  at::Tensor out = at::empty({input.size(0), weight.size(0), c.out_h(), c.out_w()}, input.options());
  run_op("Conv2d", kDeformConv, {cols, operand(weight, type, kDeformConv), operand(bias, type, kDeformConv)},
         columns_conv_attrs(c), {out});
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
    const at::Tensor& mask, const at::Tensor& bias, I64 stride_h, I64 stride_w, I64 pad_h, I64 pad_w, I64 dil_h,
    I64 dil_w, I64 groups, I64 offset_groups, bool use_mask) {
  constexpr const char* kAten = kDeformConvBackward;
  const DeformConv c{input, weight, offset, mask,  bias,   stride_h,      stride_w,
                     pad_h, pad_w,  dil_h,  dil_w, groups, offset_groups, use_mask};
  if (!native(c) || !same_kind(grad, input) ||
      grad.sizes() != at::IntArrayRef{input.size(0), weight.size(0), c.out_h(), c.out_w()}) {
    return TORCHVISION_FALLBACK(DeformConvBackwardOp, grad, input, weight, offset, mask, bias, stride_h, stride_w,
                                pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask);
  }
  const at::ScalarType type = input.scalar_type();
  const at::Tensor dy = operand(grad, type, kAten), w = operand(weight, type, kAten);
  std::vector<at::Tensor> sampling_in = sampling_inputs(c, kAten);
  const at::Tensor cols = columns(c, sampling_in, kAten);
  const emulator::Attrs conv = columns_conv_attrs(c);

  at::Tensor grad_cols = at::empty(cols.sizes(), cols.options());
  emulator::Attrs input_attrs = conv;
  input_attrs.set("input_size", ints(cols.sizes()));
  run_op("Conv2DBackpropInput", kAten, {dy, w}, input_attrs, {grad_cols});
  at::Tensor grad_weight = at::empty(weight.sizes(), weight.options());
  emulator::Attrs filter_attrs = conv;
  filter_attrs.set("filter_size", ints(weight.sizes()));
  run_op("Conv2DBackpropFilter", kAten, {cols, dy}, filter_attrs, {grad_weight});
  at::Tensor grad_bias = at::empty({weight.size(0)}, bias.options());
  run_op("ReduceSum", kAten, {dy}, {{"axes", std::vector<I64>{0, 2, 3}}, {"keepdims", I64{0}}}, {grad_bias});

  at::Tensor grad_input = at::empty(input.sizes(), input.options());
  at::Tensor grad_offset = at::empty(offset.sizes(), offset.options());
  at::Tensor grad_mask = use_mask ? at::empty(mask.sizes(), mask.options()) : at::zeros_like(mask);
  std::vector<at::Tensor> outputs{grad_input, grad_offset};
  if (use_mask) outputs.push_back(grad_mask);
  sampling_in.insert(sampling_in.begin(), grad_cols);
  run_op("DeformableOffsetsGrad", kAten, sampling_in, offsets_attrs(c), outputs);
  return {grad_input, grad_weight, grad_offset, grad_mask, grad_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(torchvision, PrivateUse1, m) {
  m.impl("deform_conv2d", TORCH_FN(deform_conv2d));
  m.impl("_deform_conv2d_backward", TORCH_FN(deform_conv2d_backward));
}

}  // namespace npuscope::pytorch
