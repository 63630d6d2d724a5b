// The gradient of MaxPool3DWithArgmax (max_pool3d_argmax_ops.cpp), as aten's
// max_pool3d_with_indices_backward computes it on the CPU: CANN's MaxPool3DGradWithArgmax
// (aclnnMaxPool3dWithArgmaxBackward)
//   MaxPool3DGradWithArgmax (dy, indices (i32 / i64); input_size [N, C, D, H, W] or [C, D, H, W],
//                            kernel (only for the cost)) -> dx
// Each dy adds into its (n, c) plane of dx at its index, z·H·W + y·W + x (Note [Max pool 3-D
// indices]); windows overlap, so a voxel may gather several. The adds run in dy's order (PyTorch's
// CPU loop), in f32 on the NPU (f64 on the CPU) and dx is rounded to its dtype once. An index
// outside the plane is a kernel fault (Note [Kernel faults]) and adds nothing. CANN's op takes the
// forward's input too; only its shape matters, so this one takes it as input_size, like
// MaxPoolGradWithArgmax.
#include <algorithm>
#include <string>
#include <type_traits>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "MaxPool3DGradWithArgmax";

std::vector<TensorMeta> infer(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  if (is_floating(in[1].dtype) || in[1].dtype == DType::kBool) {
    fail(kOp, "indices must be an integer tensor, got " + std::string(dtype_name(in[1].dtype)));
  }
  const Shape& dy = in[0].shape;
  if (dy != in[1].shape) {
    fail(kOp, "dy " + shape_str(dy) + " and indices " + shape_str(in[1].shape) + " differ in shape");
  }
  if (dy.size() != 4 && dy.size() != 5) fail(kOp, "dy must be NCDHW or CDHW, got " + shape_str(dy));
  const Shape x = size_attr(attrs, "input_size", {4, 5}, kOp);
  if (x.size() != dy.size() || !std::equal(x.begin(), x.end() - 3, dy.begin())) {
    fail(kOp, "input_size " + shape_str(x) + " does not fit dy " + shape_str(dy) + " (same N, C)");
  }
  std::int64_t n = 1;
  for (const std::int64_t v : x) n = checked_mul(n, v, kOp, "the dx size");
  if (static_cast<std::uint64_t>(n) > kMaxTensorBytes) fail(kOp, "input_size " + shape_str(x) + " is too large");
  return {{x, in[0].dtype}};
}

// Each gradient scatters to its argmax's tap; the scalar-bound bookkeeping scans the window when the
// op carries it (the PyTorch device passes it), else one tap.
KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  KernelCost c = vector_cost(in, out, 1);
  const auto k = attrs.get_ints("kernel", {});
  c.argmax_taps = static_cast<double>(in[0].numel()) * static_cast<double>(k.size() == 3 ? k[0] * k[1] * k[2] : 1);
  return c;
}

// dx (zeroed) += dy at each index, plane by plane.
template <class T, class I>
void scatter_planes(KernelContext& ctx, const T* dy, const I* idx, std::int64_t planes, std::int64_t out_plane,
                    std::int64_t in_plane, T* dx) {
  for (std::int64_t p = 0; p < planes; ++p) {
    T* dst = dx + p * in_plane;
    for (std::int64_t o = p * out_plane; o < (p + 1) * out_plane; ++o) {
      const auto at = static_cast<std::int64_t>(idx[o]);
      if (at < 0 || at >= in_plane) [[unlikely]] {
        set_fault(ctx, std::string(kOp) + ": index " + std::to_string(at) + " of output element " + std::to_string(o) +
                           " is outside the input plane [0, " + std::to_string(in_plane) + ")");
        continue;
      }
      dst[at] += dy[o];
    }
  }
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const TensorView& dyv = ctx.inputs[0];
  const Shape& x = *ctx.outputs[0].shape;
  const Shape& ds = *dyv.shape;
  const std::size_t r = x.size();
  const std::int64_t in_plane = x[r - 3] * x[r - 2] * x[r - 1];
  const std::int64_t out_plane = ds[r - 3] * ds[r - 2] * ds[r - 1];
  const std::int64_t planes = out_plane == 0 ? 0 : dyv.numel / out_plane;
  const TensorView& out = ctx.outputs[0];
  if constexpr (std::is_same_v<T, float>) {
    // See Note [Max pooling in place] (max_pool_argmax_ops.cpp): dx is accumulated where it lives.
    if (ctx.backend == Backend::kNpu && ctx.compute_dtype == DType::kF32 && dyv.dtype == DType::kF32 &&
        out.dtype == DType::kF32 && ctx.inputs[1].dtype == DType::kI64 && !views_overlap(dyv, out) &&
        !views_overlap(ctx.inputs[1], out)) {
      float* dx = out.as<float>();
      std::fill_n(dx, out.numel, 0.0f);
      scatter_planes<float>(ctx, dyv.as<const float>(), ctx.inputs[1].as<const std::int64_t>(), planes, out_plane,
                            in_plane, dx);
      finish_in_place(dx, out.numel, ctx);
      return;
    }
  }
  const std::vector<T> dy = load<T>(dyv, ctx);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(ctx.inputs[1].numel));
  load_i64(ctx.inputs[1], idx.data());
  std::vector<T> dx(static_cast<std::size_t>(out.numel), T(0));
  scatter_planes<T>(ctx, dy.data(), idx.data(), planes, out_plane, in_plane, dx.data());
  store<T>(out, dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kOp, .category = OpCategory::kVector, .min_inputs = 2, .max_inputs = 2, .infer = infer, .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, grad_kernel);

}  // namespace npuscope::emulator::kernels
