// Native grid sampling: grid_sampler_2d (F.grid_sample's forward: GridSample, Note [GridSample taps]).
// Its backward stays on the CPU fallback. Bicubic with border or reflection padding goes to the
// fallback too: there PyTorch pads each tap where ONNX pads the position first.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid, std::int64_t interpolation,
                           std::int64_t padding, bool align_corners) {
  constexpr const char* kAten = "aten::grid_sampler_2d";
  static const char* const kModes[] = {"bilinear", "nearest", "bicubic"};
  static const char* const kPadding[] = {"zeros", "border", "reflection"};
  const bool known = interpolation >= 0 && interpolation < 3 && padding >= 0 && padding < 3;
  if (!known || (interpolation == 2 && padding != 0) || !is_float(input.scalar_type()) || input.dim() != 4 ||
      grid.dim() != 4 || grid.size(3) != 2 || grid.scalar_type() != input.scalar_type())
    return NPUSCOPE_FALLBACK(grid_sampler_2d, input, grid, interpolation, padding, align_corners);
  check_same_device(kAten, input, {grid});
  at::Tensor out = at::empty({input.size(0), input.size(1), grid.size(1), grid.size(2)}, input.options());
  if (out.numel() == 0) return out;
  const at::ScalarType type = input.scalar_type();
  run_op("GridSample", kAten, {operand(input, type, kAten), operand(grid, type, kAten)},
         {{"mode", std::string(kModes[interpolation])},
          {"padding_mode", std::string(kPadding[padding])},
          {"align_corners", std::int64_t{align_corners}}},
         {out});
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("grid_sampler_2d", TORCH_FN(grid_sampler_2d)); }

}  // namespace npuscope::pytorch
