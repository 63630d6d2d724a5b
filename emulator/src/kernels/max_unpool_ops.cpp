// MaxUnpool (ONNX opset 11, nn.MaxUnpool2d): X [N, C, d...] and I (i64, X's shape: the flat
// positions in the whole output that MaxPool's Indices give) -> Y of zeros with Y.flat[I[i]] = X[i].
// The default shape of Y is, per spatial dim, (in - 1) * stride - pad_begin - pad_end + kernel
// ('kernel_shape' required, 'strides' 1, 'pads' 0). With 'output_shape' (the ONNX adapter copies the
// optional input there) Y takes that shape and each index is still read as a position in the
// default shape, its coordinates kept (as the ONNX reference and onnxruntime do: a larger
// output_shape pads at the end). An index outside Y is a kernel fault (Note [Kernel faults]); that
// value is dropped.
// Data movement, byte-exact, one kernel for both backends.
#include <cstring>
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "MaxUnpool";

Shape default_shape(const Shape& x, const Attrs& attrs) {
  const std::size_t r = x.size() - 2;
  if (!attrs.has("kernel_shape")) fail(kOp, "needs 'kernel_shape'");
  const auto k = dim_ints(attrs, "kernel_shape", r, 1, 1, kOp), s = dim_ints(attrs, "strides", r, 1, 1, kOp);
  const auto p = dim_ints(attrs, "pads", 2 * r, 0, 0, kOp);
  Shape out{x[0], x[1]};
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t span = checked_mul(x[i + 2] - 1, s[i], kOp, "(in - 1) * stride");
    const std::int64_t d = checked_add(span, k[i] - p[i] - p[i + r], kOp, "the output size");
    if (d < 0) fail(kOp, "pads make spatial dim " + std::to_string(i) + " negative (" + std::to_string(d) + ")");
    out.push_back(d);
  }
  return out;
}

std::vector<TensorMeta> infer_max_unpool(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.size() < 3) fail(kOp, "X must be [N, C, d...] with at least one spatial dim, got " + shape_str(x));
  if (in[1].shape != x || in[1].dtype != DType::kI64) {
    fail(kOp, "I must be i64 with X's shape " + shape_str(x) + ", got " + std::string(dtype_name(in[1].dtype)) + " " +
                  shape_str(in[1].shape));
  }
  const Shape fallback = default_shape(x, attrs);
  if (attrs.has("output_shape")) {
    const Shape out = attrs.get_ints("output_shape");
    if (out.size() != x.size() || out[0] != x[0] || out[1] != x[1]) {
      fail(kOp, "output_shape " + shape_str(out) + " must keep X's rank, N and C (X " + shape_str(x) + ")");
    }
    for (auto d : out)
      if (d < 0) fail(kOp, "output_shape " + shape_str(out) + " has a negative dim");
    return {{out, in[0].dtype}};
  }
  return {{fallback, in[0].dtype}};
}

// Flat positions in `from` -> the same coordinates in `to` (-1 where they fall outside it).
void reposition(std::vector<std::int64_t>& at, const Shape& from, const Shape& to) {
  const auto fs = strides_of(from), ts = strides_of(to);
  const std::int64_t total = shape_numel(from);
  for (auto& a : at) {
    if (a < 0 || a >= total) continue;  // reported as it is
    std::int64_t rest = a, out = 0;
    for (std::size_t d = 0; d < from.size() && out >= 0; ++d) {
      const std::int64_t c = rest / fs[d];
      rest %= fs[d];
      out = c < to[d] ? out + c * ts[d] : -1;
    }
    a = out < 0 ? shape_numel(to) : out;  // outside: a fault
  }
}

void max_unpool_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &idx = ctx.inputs[1], &y = ctx.outputs[0];
  const std::size_t es = dtype_size(x.dtype);
  std::memset(y.data, 0, static_cast<std::size_t>(y.numel) * es);
  std::vector<std::int64_t> at(static_cast<std::size_t>(idx.numel));
  load_i64(idx, at.data());
  const Shape from = default_shape(*x.shape, ctx.attrs);  // checked by infer
  if (from != *y.shape) reposition(at, from, *y.shape);
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (at[i] < 0 || at[i] >= y.numel) {
      if (ctx.fault.empty()) {
        set_fault(ctx, std::string(kOp) + ": I[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
                           " is outside the output's " + std::to_string(y.numel) + " elements");
      }
      continue;
    }
    std::memcpy(y.data + static_cast<std::size_t>(at[i]) * es, x.data + i * es, es);
  }
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_max_unpool,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOp, max_unpool_kernel);

}  // namespace npuscope::emulator::kernels
