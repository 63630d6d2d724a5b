// Native 2-D upsampling, forward and backward: upsample_nearest2d and upsample_bilinear2d (what
// F.interpolate and nn.Upsample reach: Resize) and their backward ops (ResizeGrad, Resize's adjoint:
// CANN's ResizeNearestNeighborV2Grad / ResizeBilinearV2Grad). PyTorch's coordinate maps in ONNX's
// terms: nearest is "asymmetric" with floor rounding, bilinear "pytorch_half_pixel" (a source index
// below 0 clamps to 0, as ONNX's clamped taps give) or "align_corners"; a given scale factor is the
// map's scale, as PyTorch uses 1 / scale, else output / input.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

emulator::Attrs resize_attrs(bool bilinear, bool align_corners, at::IntArrayRef out_shape,
                             c10::optional<double> scales_h, c10::optional<double> scales_w, at::IntArrayRef in_shape) {
  emulator::Attrs attrs{{"mode", std::string(bilinear ? "linear" : "nearest")},
                        {"coordinate_transformation_mode", std::string(!bilinear       ? "asymmetric"
                                                                       : align_corners ? "align_corners"
                                                                                       : "pytorch_half_pixel")},
                        {"nearest_mode", std::string("floor")},
                        {"sizes", ints(out_shape)}};
  const bool use_scales = !(bilinear && align_corners) && (scales_h.has_value() || scales_w.has_value());
  if (use_scales) {
    auto ratio = [&](std::size_t d) { return static_cast<double>(out_shape[d]) / static_cast<double>(in_shape[d]); };
    attrs.set("scales", std::vector<double>{1.0, 1.0, scales_h.value_or(ratio(2)), scales_w.value_or(ratio(3))});
  }
  return attrs;
}

bool native_upsample(const at::Tensor& t, at::IntArrayRef out_size) {
  return is_float(t.scalar_type()) && t.dim() == 4 && out_size.size() == 2 && t.size(2) > 0 && t.size(3) > 0;
}

void upsample(const char* aten, bool bilinear, bool align_corners, const at::Tensor& self, at::IntArrayRef out_size,
              c10::optional<double> scales_h, c10::optional<double> scales_w, const at::Tensor& out) {
  check_same_device(aten, out, {self});
  const std::vector<std::int64_t> shape{self.size(0), self.size(1), out_size[0], out_size[1]};
  resize_out(out, shape);
  if (out.numel() == 0) return;
  OutputSlot slot(out, aten);
  run_op("Resize", aten, {operand(self, out.scalar_type(), aten)},
         resize_attrs(bilinear, align_corners, shape, scales_h, scales_w, self.sizes()), {slot.tensor()});
  slot.finish();
}

void upsample_backward(const char* aten, bool bilinear, bool align_corners, const at::Tensor& grad_output,
                       at::IntArrayRef input_size, c10::optional<double> scales_h, c10::optional<double> scales_w,
                       const at::Tensor& grad_input) {
  check_same_device(aten, grad_input, {grad_output});
  resize_out(grad_input, input_size);
  if (grad_input.numel() == 0) return;
  emulator::Attrs attrs =
      resize_attrs(bilinear, align_corners, grad_output.sizes(), scales_h, scales_w, grad_input.sizes());
  attrs.set("input_size", ints(input_size));
  OutputSlot slot(grad_input, aten);
  run_op("ResizeGrad", aten, {operand(grad_output, grad_input.scalar_type(), aten)}, attrs, {slot.tensor()});
  slot.finish();
}

at::Tensor& upsample_nearest2d_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                   c10::optional<double> scales_h, c10::optional<double> scales_w, at::Tensor& out) {
  const at::IntArrayRef size = c10::asIntArrayRefSlow(output_size);
  if (!native_upsample(self, size))
    return NPUSCOPE_FALLBACK(upsample_nearest2d_out, self, size, scales_h, scales_w, out);
  upsample("aten::upsample_nearest2d", false, false, self, size, scales_h, scales_w, out);
  return out;
}

at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                            c10::SymIntArrayRef input_size, c10::optional<double> scales_h,
                                            c10::optional<double> scales_w, at::Tensor& grad_input) {
  const at::IntArrayRef in = c10::asIntArrayRefSlow(input_size);
  if (!is_float(grad_output.scalar_type()) || in.size() != 4 || grad_output.dim() != 4)
    return NPUSCOPE_FALLBACK(upsample_nearest2d_backward_grad_input, grad_output, c10::asIntArrayRefSlow(output_size),
                             in, scales_h, scales_w, grad_input);
  upsample_backward("aten::upsample_nearest2d_backward", false, false, grad_output, in, scales_h, scales_w, grad_input);
  return grad_input;
}

at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                                    c10::optional<double> scales_h, c10::optional<double> scales_w, at::Tensor& out) {
  const at::IntArrayRef size = c10::asIntArrayRefSlow(output_size);
  if (!native_upsample(self, size))
    return NPUSCOPE_FALLBACK(upsample_bilinear2d_out, self, size, align_corners, scales_h, scales_w, out);
  upsample("aten::upsample_bilinear2d", true, align_corners, self, size, scales_h, scales_w, out);
  return out;
}

at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                             c10::SymIntArrayRef input_size, bool align_corners,
                                             c10::optional<double> scales_h, c10::optional<double> scales_w,
                                             at::Tensor& grad_input) {
  const at::IntArrayRef in = c10::asIntArrayRefSlow(input_size);
  if (!is_float(grad_output.scalar_type()) || in.size() != 4 || grad_output.dim() != 4)
    return NPUSCOPE_FALLBACK(upsample_bilinear2d_backward_grad_input, grad_output, c10::asIntArrayRefSlow(output_size),
                             in, align_corners, scales_h, scales_w, grad_input);
  upsample_backward("aten::upsample_bilinear2d_backward", true, align_corners, grad_output, in, scales_h, scales_w,
                    grad_input);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest2d.out", TORCH_FN(upsample_nearest2d_out));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(upsample_nearest2d_backward_out));
  m.impl("upsample_bilinear2d.out", TORCH_FN(upsample_bilinear2d_out));
  m.impl("upsample_bilinear2d_backward.grad_input", TORCH_FN(upsample_bilinear2d_backward_out));
}

}  // namespace npuscope::pytorch
