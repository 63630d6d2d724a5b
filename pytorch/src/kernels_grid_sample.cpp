// Native grid sampling: grid_sampler_2d (F.grid_sample's forward: GridSample, Note [GridSample taps])
// and its backward grid_sampler_2d_backward (GridSampler2DGrad, as torch_npu launches it: Note
// [GridSampler2DGrad as PyTorch]), both for bilinear, nearest and bicubic with every padding mode.
// GridSample runs with bicubic_padding = taps: PyTorch's bicubic pads each tap where ONNX pads the
// sampled position first.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

const char* const kModes[] = {"bilinear", "nearest", "bicubic"};
const char* const kPadding[] = {"zeros", "border", "reflection"};

// Whether the emulator ops take these operands (float dtypes, 4-D, one dtype, a known padding).
bool native_operands(const at::Tensor& input, const at::Tensor& grid, std::int64_t padding) {
  return padding >= 0 && padding < 3 && is_float(input.scalar_type()) && input.dim() == 4 && grid.dim() == 4 &&
         grid.size(3) == 2 && grid.scalar_type() == input.scalar_type();
}

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid, std::int64_t interpolation,
                           std::int64_t padding, bool align_corners) {
  constexpr const char* kAten = "aten::grid_sampler_2d";
  const bool known = interpolation >= 0 && interpolation < 3;
  if (!known || !native_operands(input, grid, padding))
    return NPUSCOPE_FALLBACK(grid_sampler_2d, input, grid, interpolation, padding, align_corners);
  check_same_device(kAten, input, {grid});
  at::Tensor out = at::empty({input.size(0), input.size(1), grid.size(1), grid.size(2)}, input.options());
  if (out.numel() == 0) return out;
  const at::ScalarType type = input.scalar_type();
  run_op("GridSample", kAten, {operand(input, type, kAten), operand(grid, type, kAten)},
         {{"mode", std::string(kModes[interpolation])},
          {"padding_mode", std::string(kPadding[padding])},
          {"align_corners", std::int64_t{align_corners}},
          {"bicubic_padding", std::string("taps")}},
         {out});
  return out;
}

// As 1.13's CPU kernel: grad_input is undefined unless output_mask[0] asks for it; grad_grid is
// always returned (autograd drops it when the grid needs no gradient). GridSampler2DGrad writes
// both in one pass over the taps, so the mask saves only the task when nothing is asked.
std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                            const at::Tensor& grid, std::int64_t interpolation,
                                                            std::int64_t padding, bool align_corners,
                                                            std::array<bool, 2> output_mask) {
  constexpr const char* kAten = "aten::grid_sampler_2d_backward";
  if (interpolation < 0 || interpolation > 2 || !native_operands(input, grid, padding) || grad_output.dim() != 4 ||
      !is_float(grad_output.scalar_type()))
    return NPUSCOPE_FALLBACK(grid_sampler_2d_backward, grad_output, input, grid, interpolation, padding, align_corners,
                             output_mask);
  check_same_device(kAten, input, {grid, grad_output});
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef({input.size(0), input.size(1), grid.size(1), grid.size(2)}), kAten,
              ": grad_output ", grad_output.sizes(), " does not match the output of input ", input.sizes(),
              " sampled at grid ", grid.sizes());
  const at::ScalarType type = input.scalar_type();
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dgrid = at::empty(grid.sizes(), grid.options());
  if (grad_output.numel() == 0 || (!output_mask[0] && !output_mask[1])) {
    dx.zero_();
    dgrid.zero_();
  } else {
    run_op("GridSampler2DGrad", kAten,
           {operand(grad_output, type, kAten), operand(input, type, kAten), operand(grid, type, kAten)},
           {{"interpolation_mode", std::string(kModes[interpolation])},
            {"padding_mode", std::string(kPadding[padding])},
            {"align_corners", std::int64_t{align_corners}}},
           {dx, dgrid});
  }
  return {output_mask[0] ? dx : at::Tensor(), dgrid};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", TORCH_FN(grid_sampler_2d));
  m.impl("grid_sampler_2d_backward", TORCH_FN(grid_sampler_2d_backward));
}

}  // namespace npuscope::pytorch
