// RotaryEmbedding: x [..., S, D] rotated pairwise by the angles in cos, sin [S, D/2] (broadcast over
// the leading dims of x). Each pair (x1, x2) becomes (x1 cos - x2 sin, x2 cos + x1 sin). Pairs are
// (x[i], x[i + D/2]) (rotate-half, GPT-NeoX / Llama) or, with interleaved = 1, (x[2i], x[2i + 1])
// (GPT-J). NPU: computed in f32 and rounded to the storage dtype; CPU golden: computed in f64.
#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// cos / sin: [S, D/2], optionally with leading 1s ([1, 1, S, D/2]).
void check_table(const TensorMeta& t, const char* name, std::int64_t s, std::int64_t half, const Shape& x) {
  const Shape& shape = t.shape;
  bool ok = shape.size() >= 2 && shape[shape.size() - 2] == s && shape.back() == half;
  for (std::size_t d = 0; ok && d + 2 < shape.size(); ++d) ok = shape[d] == 1;
  if (!ok) {
    fail("RotaryEmbedding", std::string(name) + " has shape " + shape_str(shape) + ", expected [" + std::to_string(s) +
                                ", " + std::to_string(half) + "] for x " + shape_str(x));
  }
}

std::vector<TensorMeta> infer_rotary(std::span<const TensorMeta> in, const Attrs&) {
  for (int i = 0; i < 3; ++i) require_floating(in, i, "RotaryEmbedding");
  const Shape& x = in[0].shape;
  if (x.size() < 2) fail("RotaryEmbedding", "x must be [..., S, D], got " + shape_str(x));
  const std::int64_t d = x.back(), s = x[x.size() - 2];
  if (d % 2 != 0) fail("RotaryEmbedding", "the last dim of x " + shape_str(x) + " must be even");
  check_table(in[1], "cos", s, d / 2, x);
  check_table(in[2], "sin", s, d / 2, x);
  return {{x, in[0].dtype}};
}

template <class T>
void rotary_kernel(KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const std::vector<T> x = load<T>(xv, ctx), c = load<T>(ctx.inputs[1], ctx), s = load<T>(ctx.inputs[2], ctx);
  const Shape& shape = *xv.shape;
  const std::int64_t d = shape.back(), seq = shape[shape.size() - 2], half = d / 2;
  const bool interleaved = ctx.attrs.get_int("interleaved", 0) != 0;
  std::vector<T> y(x.size());
  const std::int64_t rows = d == 0 ? 0 : xv.numel / d;
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x.data() + r * d;
    const T* cr = c.data() + (r % seq) * half;
    const T* sr = s.data() + (r % seq) * half;
    T* yr = y.data() + r * d;
    for (std::int64_t i = 0; i < half; ++i) {
      const std::int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
      yr[a] = xr[a] * cr[i] - xr[b] * sr[i];
      yr[b] = xr[b] * cr[i] + xr[a] * sr[i];
    }
  }
  store<T>(ctx.outputs[0], y.data(), ctx);
}

KernelCost cost_rotary(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 3);  // two multiplies and an add per output element
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "RotaryEmbedding",
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_rotary,
                              .cost = cost_rotary});

NPUSCOPE_REGISTER_FLOAT_KERNELS("RotaryEmbedding", rotary_kernel);

}  // namespace npuscope::emulator::kernels
