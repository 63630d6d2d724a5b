// See Note [Blocked element-wise maps] in elementwise_map.h.
#include "elementwise_map.h"

namespace npuscope::emulator::kernels {

TensorView block_view(const TensorView& v, std::int64_t i0, std::int64_t m, Shape& shape) {
  shape.assign(1, m);
  return {v.data + i0 * static_cast<std::int64_t>(dtype_size(v.dtype)), v.dtype, &shape, m};
}

RunBroadcast run_broadcast(const Shape& input, const Shape& output) {
  const std::size_t rank = output.size(), offset = rank - input.size();
  std::int64_t first = -1, last = -1, inner = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t in = d < offset ? 1 : input[d - offset];
    if (output[d] == 1) continue;  // neutral: both are 1
    if (in == output[d]) {
      if (last >= 0 && last != static_cast<std::int64_t>(d) - 1) {
        // A broadcast dim between two covered ones: not one run (neutral dims in between are fine).
        for (std::int64_t e = last + 1; e < static_cast<std::int64_t>(d); ++e) {
          if (output[static_cast<std::size_t>(e)] != 1) return {};
        }
      }
      if (first < 0) first = static_cast<std::int64_t>(d);
      last = static_cast<std::int64_t>(d);
    }
  }
  for (std::size_t d = static_cast<std::size_t>(last + 1); d < rank; ++d) inner *= output[d];
  return {true, std::max<std::int64_t>(inner, 1), shape_numel(input)};
}

bool golden_runs_in_f32(const KernelContext& ctx) {
  if (ctx.backend != Backend::kCpu || ctx.outputs.empty() || ctx.outputs[0].dtype != DType::kF32) return false;
  for (const TensorView& in : ctx.inputs) {
    if (in.dtype != DType::kF32) return false;
  }
  return true;
}

}  // namespace npuscope::emulator::kernels
