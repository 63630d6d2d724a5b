// Adaptive average pooling (NCHW or CHW), mirroring PyTorch 1.13's CPU aten _adaptive_avg_pool2d and
// _adaptive_avg_pool2d_backward: output cell (i, j) averages input rows [floor(i·H/OH),
// ceil((i+1)·H/OH)) and the columns likewise, so windows may overlap and differ in size.
//   AdaptiveAvgPool2d      (x; output_size [OH, OW]) -> y [..., OH, OW]
//   AdaptiveAvgPool2dGrad  (dy [..., OH, OW]; input_size [..., H, W]) -> dx: each cell's gradient
//                          shared equally by the inputs of its window
// NPU: f32 sums, rounded once to the output dtype; CPU golden: f64.
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kPool[] = "AdaptiveAvgPool2d", kPoolGrad[] = "AdaptiveAvgPool2dGrad";

std::int64_t window_start(std::int64_t i, std::int64_t out, std::int64_t in) { return (i * in) / out; }
std::int64_t window_end(std::int64_t i, std::int64_t out, std::int64_t in) { return ((i + 1) * in + out - 1) / out; }

void check_rank(const Shape& s, const char* op, const char* what) {
  if (s.size() != 3 && s.size() != 4) fail(op, std::string(what) + " must be CHW or NCHW, got " + shape_str(s));
}

std::vector<TensorMeta> infer_pool(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kPool);
  check_rank(in[0].shape, kPool, "x");
  const auto size = dim_ints(attrs, "output_size", 2, 1, 1, kPool);
  Shape out = in[0].shape;
  out[out.size() - 2] = size[0];
  out[out.size() - 1] = size[1];
  return {{out, in[0].dtype}};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kPoolGrad);
  check_rank(in[0].shape, kPoolGrad, "dy");
  const Shape size = attrs.get_ints("input_size");
  if (size.size() != in[0].shape.size() || !std::equal(size.begin(), size.end() - 2, in[0].shape.begin()) ||
      size[size.size() - 2] < 1 || size[size.size() - 1] < 1) {
    fail(kPoolGrad, "input_size " + shape_str(size) + " does not fit dy " + shape_str(in[0].shape));
  }
  return {{size, in[0].dtype}};
}

KernelCost cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

struct Planes {
  std::int64_t planes, h, w, oh, ow;
};
Planes planes_of(const Shape& big, const Shape& small) {
  const std::size_t r = big.size();
  return {shape_numel(big) / (big[r - 2] * big[r - 1]), big[r - 2], big[r - 1], small[r - 2], small[r - 1]};
}

template <class T>
void pool_kernel(KernelContext& ctx) {
  const std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  const Planes p = planes_of(*ctx.inputs[0].shape, *ctx.outputs[0].shape);
  std::vector<T> y(static_cast<std::size_t>(p.planes * p.oh * p.ow));
  for (std::int64_t c = 0; c < p.planes; ++c) {
    const T* plane = x.data() + c * p.h * p.w;
    for (std::int64_t i = 0; i < p.oh; ++i) {
      const std::int64_t h0 = window_start(i, p.oh, p.h), h1 = window_end(i, p.oh, p.h);
      for (std::int64_t j = 0; j < p.ow; ++j) {
        const std::int64_t w0 = window_start(j, p.ow, p.w), w1 = window_end(j, p.ow, p.w);
        T sum = 0;
        for (std::int64_t h = h0; h < h1; ++h) {
          for (std::int64_t w = w0; w < w1; ++w) sum += plane[h * p.w + w];
        }
        y[static_cast<std::size_t>((c * p.oh + i) * p.ow + j)] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
      }
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  const Planes p = planes_of(*ctx.outputs[0].shape, *ctx.inputs[0].shape);
  std::vector<T> dx(static_cast<std::size_t>(p.planes * p.h * p.w), T(0));
  for (std::int64_t c = 0; c < p.planes; ++c) {
    T* plane = dx.data() + c * p.h * p.w;
    for (std::int64_t i = 0; i < p.oh; ++i) {
      const std::int64_t h0 = window_start(i, p.oh, p.h), h1 = window_end(i, p.oh, p.h);
      for (std::int64_t j = 0; j < p.ow; ++j) {
        const std::int64_t w0 = window_start(j, p.ow, p.w), w1 = window_end(j, p.ow, p.w);
        const T g = dy[static_cast<std::size_t>((c * p.oh + i) * p.ow + j)] / static_cast<T>((h1 - h0) * (w1 - w0));
        for (std::int64_t h = h0; h < h1; ++h) {
          for (std::int64_t w = w0; w < w1; ++w) plane[h * p.w + w] += g;
        }
      }
    }
  }
  store<T>(ctx.outputs[0], dx.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kPool,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pool,
                              .cost = cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kPoolGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_grad,
                              .cost = cost});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kPool, pool_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kPoolGrad, grad_kernel);

}  // namespace npuscope::emulator::kernels
