// Data movement that picks or reorders slices along an axis, byte-exact for every dtype (see
// movement_util.h):
//   Compress         input, condition (1-D, any dtype: non-zero keeps) -> the slices along 'axis'
//                    whose condition holds (no 'axis': of the input flattened). A condition shorter
//                    than the axis drops the slices it does not reach; one longer is read only as
//                    far as the axis goes. The output size depends on the values, so it comes as
//                    the attribute 'count' (Note [Data-dependent output sizes] in nms_ops.cpp; the
//                    ONNX adapter counts on the host).
//   ReverseSequence  input of rank >= 2, sequence_lens [batch] (i32 / i64): for each batch entry b,
//                    the first sequence_lens[b] elements along 'time_axis' (0) reversed, the rest
//                    kept; 'batch_axis' (1) is the other of dims 0 and 1. A length outside
//                    [0, max_time] is a kernel fault (Note [Kernel faults]); that entry is copied.
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kCompress[] = "Compress", kReverseSequence[] = "ReverseSequence";

// ---- Compress -----------------------------------------------------------------------------------

std::vector<TensorMeta> infer_compress(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[1].shape.size() != 1) fail(kCompress, "condition must be 1-D, got " + shape_str(in[1].shape));
  if (!attrs.has("count")) {
    fail(kCompress,
         "needs the 'count' attribute (the number of slices kept, counted on the host first: the output shape "
         "depends on the values)");
  }
  const std::int64_t count = attrs.get_int("count", 0);
  if (!attrs.has("axis")) {
    if (count < 0 || count > in[0].numel()) fail(kCompress, "count " + std::to_string(count) + " is out of range");
    return {{{count}, in[0].dtype}};
  }
  const Shape& x = in[0].shape;
  const auto axis = static_cast<std::size_t>(
      normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), kCompress));
  if (count < 0 || count > x[axis]) {
    fail(kCompress, "count " + std::to_string(count) + " is outside [0, " + std::to_string(x[axis]) + "]");
  }
  Shape out = x;
  out[axis] = count;
  return {{out, in[0].dtype}};
}

void compress_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &cond = ctx.inputs[1], &y = ctx.outputs[0];
  const bool flat = !ctx.attrs.has("axis");
  const AxisLoop l = flat ? AxisLoop{1, x.numel, 1} : axis_loop(*x.shape, ctx.attrs.get_int("axis", 0));
  std::vector<double> c(static_cast<std::size_t>(cond.numel));
  load_f64(cond, c.data());
  std::vector<std::int64_t> kept;  // the kept positions along the axis, at most `count` of them
  const std::int64_t count = ctx.attrs.get_int("count", 0);  // checked by infer
  for (std::int64_t i = 0; i < l.dim && i < cond.numel && static_cast<std::int64_t>(kept.size()) < count; ++i) {
    if (c[static_cast<std::size_t>(i)] != 0) kept.push_back(i);
  }
  kept.resize(static_cast<std::size_t>(count), -1);  // fewer than counted: zeros
  std::vector<std::int64_t> index(static_cast<std::size_t>(y.numel));
  for (std::int64_t o = 0, k = 0; o < l.outer; ++o)
    for (std::int64_t d = 0; d < count; ++d)
      for (std::int64_t j = 0; j < l.inner; ++j, ++k) {
        const std::int64_t at = kept[static_cast<std::size_t>(d)];
        index[static_cast<std::size_t>(k)] = at < 0 ? -1 : (o * l.dim + at) * l.inner + j;
      }
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

// ---- ReverseSequence ----------------------------------------------------------------------------

std::vector<TensorMeta> infer_reverse_sequence(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.size() < 2) fail(kReverseSequence, "input must have rank >= 2, got " + shape_str(x));
  const std::int64_t t = attrs.get_int("time_axis", 0), b = attrs.get_int("batch_axis", 1);
  if (!((t == 0 && b == 1) || (t == 1 && b == 0))) {
    fail(kReverseSequence, "time_axis and batch_axis must be 0 and 1 in some order, got " + std::to_string(t) +
                               " and " + std::to_string(b));
  }
  require_index_dtype(in, 1, kReverseSequence, "sequence_lens");
  if (in[1].shape != Shape{x[static_cast<std::size_t>(b)]}) {
    fail(kReverseSequence, "sequence_lens must be [batch] = [" + std::to_string(x[static_cast<std::size_t>(b)]) +
                               "], got " + shape_str(in[1].shape));
  }
  return {{x, in[0].dtype}};
}

void reverse_sequence_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &lens_v = ctx.inputs[1], &y = ctx.outputs[0];
  const Shape& s = *x.shape;
  const bool time_first = ctx.attrs.get_int("time_axis", 0) == 0;
  const std::int64_t times = time_first ? s[0] : s[1], batch = time_first ? s[1] : s[0];
  const std::int64_t inner = x.numel / std::max<std::int64_t>(s[0] * s[1], 1);
  std::vector<std::int64_t> lens(static_cast<std::size_t>(batch));
  load_i64(lens_v, lens.data());
  std::vector<std::int64_t> index(static_cast<std::size_t>(y.numel));
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t len = lens[static_cast<std::size_t>(b)];
    if (len < 0 || len > times) {
      set_fault(ctx, std::string(kReverseSequence) + ": sequence_lens[" + std::to_string(b) +
                         "] = " + std::to_string(len) + " is outside [0, " + std::to_string(times) + "] (max_time)");
      len = 0;
    }
    for (std::int64_t t = 0; t < times; ++t) {
      const std::int64_t from = t < len ? len - 1 - t : t;
      const std::int64_t dst = time_first ? t * batch + b : b * times + t;
      const std::int64_t src = time_first ? from * batch + b : b * times + from;
      for (std::int64_t j = 0; j < inner; ++j) index[static_cast<std::size_t>(dst * inner + j)] = src * inner + j;
    }
  }
  copy_indexed(x.data, y.data, dtype_size(x.dtype), index);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kCompress,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_compress,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReverseSequence,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_reverse_sequence,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kCompress, compress_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kReverseSequence, reverse_sequence_kernel);

}  // namespace npuscope::emulator::kernels
