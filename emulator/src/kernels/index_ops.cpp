// TopK, ArgMax, ArgMin, NonZero, OneHot with ONNX semantics; index outputs are i64. (The gathers
// and scatters are in scatter_gather_ops.cpp.)
//
//   TopK     'k' (ONNX's k input, read by the adapter), 'axis' (-1), 'largest' (1), 'sorted' (1):
//            values and indices, always sorted; ties keep the lower index first; NaN counts as the
//            largest value (as in PyTorch). The values are copied bytes of the input.
//   ArgMax   'axis' (0), 'keepdims' (1), 'select_last_index' (0); NaN wins, as numpy's argmax /
//   ArgMin   argmin return the first NaN.
//   NonZero  the coordinates of the non-zero elements, [rank, n], in row-major order. n depends on
//            the values, so the caller reads them first and passes 'count' (the ONNX adapter
//            does): the dispatcher infers shapes before anything runs.
//   OneHot   inputs indices (any numeric dtype, truncated) and values [off, on]; 'depth', 'axis'
//            (-1). Index -depth <= i < 0 counts from the end; others outside [0, depth) give a
//            row of 'off'. The output takes the values' dtype; its bytes are copied.
//
// Comparisons run on load<T>() values (the NPU sees f32 lowered to f16 when a precision mode says
// so) or exactly on int64 for integer dtypes.
#include <algorithm>
#include <numeric>
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kTopK[] = "TopK";
constexpr char kArgMax[] = "ArgMax";
constexpr char kArgMin[] = "ArgMin";
constexpr char kNonZero[] = "NonZero";
constexpr char kOneHot[] = "OneHot";

template <class V>
bool is_nan(V v) {
  return v != v;
}

// Loads the input as T (floating dtypes) or int64 (integers) and calls f(values).
template <class T, class F>
void with_values(const TensorView& x, const KernelContext& ctx, F f) {
  if (is_floating(x.dtype)) {
    f(load<T>(x, ctx));
  } else {
    std::vector<std::int64_t> v(static_cast<std::size_t>(x.numel));
    load_i64(x, v.data());
    f(v);
  }
}

// ---- TopK ---------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_topk(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.empty()) fail(kTopK, "needs an input of rank >= 1, got a scalar");
  const auto axis =
      static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", -1), static_cast<std::int64_t>(x.size()), kTopK));
  if (!attrs.has("k")) fail(kTopK, "needs the 'k' attribute");
  const std::int64_t k = attrs.get_int("k", 0);
  if (k < 0 || k > x[axis]) {
    fail(kTopK, "k = " + std::to_string(k) + " is outside [0, " + std::to_string(x[axis]) + "] for axis " +
                    std::to_string(axis) + " of input " + shape_str(x));
  }
  attrs.get_int("largest", 1);
  attrs.get_int("sorted", 1);
  Shape out = x;
  out[axis] = k;
  return {{out, in[0].dtype}, {out, DType::kI64}};
}

// For each line along the axis: the positions of its k best elements (stable: ties by index).
template <class V>
void topk_lines(const std::vector<V>& v, const AxisLoop& l, std::int64_t k, bool largest,
                std::vector<std::int64_t>& flat, std::vector<std::int64_t>& pos) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(l.dim));
  auto before = [&](std::int64_t a, std::int64_t b) {
    const V x = v[static_cast<std::size_t>(a)], y = v[static_cast<std::size_t>(b)];
    if (largest) return (is_nan(x) && !is_nan(y)) || x > y;
    return (!is_nan(x) && is_nan(y)) || x < y;
  };
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t j = 0; j < l.inner; ++j) {
      const std::int64_t base = o * l.dim * l.inner + j;
      for (std::int64_t t = 0; t < l.dim; ++t) order[static_cast<std::size_t>(t)] = base + t * l.inner;
      std::stable_sort(order.begin(), order.end(), before);
      for (std::int64_t t = 0; t < k; ++t) {
        const auto out = static_cast<std::size_t>((o * k + t) * l.inner + j);
        flat[out] = order[static_cast<std::size_t>(t)];
        pos[out] = (flat[out] - base) / l.inner;
      }
    }
  }
}

template <class T>
void topk_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &values = ctx.outputs[0], &indices = ctx.outputs[1];
  const AxisLoop l = axis_loop(*x.shape, ctx.attrs.get_int("axis", -1));
  const std::int64_t k = ctx.attrs.get_int("k", 0);
  const bool largest = ctx.attrs.get_int("largest", 1) != 0;
  std::vector<std::int64_t> flat(static_cast<std::size_t>(values.numel)), pos(flat.size());
  with_values<T>(x, ctx, [&](const auto& v) { topk_lines(v, l, k, largest, flat, pos); });
  copy_indexed(x.data, values.data, dtype_size(x.dtype), flat);
  store_i64(indices, pos.data());
}

// ---- ArgMax, ArgMin -----------------------------------------------------------------------------

template <const char* kName>
std::vector<TensorMeta> infer_arg(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.empty()) fail(kName, "needs an input of rank >= 1, got a scalar");
  const auto axis =
      static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), kName));
  if (x[axis] == 0) fail(kName, "axis " + std::to_string(axis) + " of input " + shape_str(x) + " is empty");
  attrs.get_int("select_last_index", 0);
  Shape out = x;
  if (attrs.get_int("keepdims", 1) != 0) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  }
  return {{out, DType::kI64}};
}

template <class V>
void arg_lines(const std::vector<V>& v, const AxisLoop& l, bool max, bool last, std::vector<std::int64_t>& out) {
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t j = 0; j < l.inner; ++j) {
      const std::int64_t base = o * l.dim * l.inner + j;
      std::int64_t best = 0;
      for (std::int64_t t = 1; t < l.dim; ++t) {
        const V c = v[static_cast<std::size_t>(base + t * l.inner)],
                b = v[static_cast<std::size_t>(base + best * l.inner)];
        bool take;
        if (is_nan(b)) {
          take = last && is_nan(c);
        } else if (is_nan(c)) {
          take = true;
        } else {
          take = (max ? c > b : c < b) || (last && c == b);
        }
        if (take) best = t;
      }
      out[static_cast<std::size_t>(o * l.inner + j)] = best;
    }
  }
}

template <class T, bool kMax>
void arg_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const AxisLoop l = axis_loop(*x.shape, ctx.attrs.get_int("axis", 0));
  const bool last = ctx.attrs.get_int("select_last_index", 0) != 0;
  std::vector<std::int64_t> out(static_cast<std::size_t>(y.numel));
  with_values<T>(x, ctx, [&](const auto& v) { arg_lines(v, l, kMax, last, out); });
  store_i64(y, out.data());
}

// ---- NonZero ------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_nonzero(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("count")) {
    fail(kNonZero,
         "needs the 'count' attribute (the number of non-zero elements, read on the host first: the "
         "output shape depends on the values)");
  }
  const std::int64_t n = attrs.get_int("count", 0);
  if (n < 0 || n > in[0].numel()) {
    fail(kNonZero, "count " + std::to_string(n) + " is outside [0, " + std::to_string(in[0].numel()) + "]");
  }
  return {{{static_cast<std::int64_t>(in[0].shape.size()), n}, DType::kI64}};
}

// The first `count` non-zero elements (zeros fill the rest if the values hold fewer).
void nonzero_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const std::int64_t count = (*y.shape)[1];
  std::vector<double> v(static_cast<std::size_t>(x.numel));
  load_f64(x, v.data());  // only 0 and -0 compare equal to 0; NaN is non-zero
  std::vector<std::int64_t> out(static_cast<std::size_t>(y.numel), 0);
  std::int64_t found = 0, flat = 0;
  for_each_index(*x.shape, [&](const std::vector<std::int64_t>& at) {
    if (found < count && v[static_cast<std::size_t>(flat)] != 0) {
      for (std::size_t d = 0; d < at.size(); ++d)
        out[static_cast<std::size_t>(static_cast<std::int64_t>(d) * count + found)] = at[d];
      ++found;
    }
    ++flat;
  });
  store_i64(y, out.data());
}

// ---- OneHot -------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_onehot(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& idx = in[0].shape;
  if (in[1].numel() != 2) fail(kOneHot, "values must hold [off, on], got shape " + shape_str(in[1].shape));
  if (!attrs.has("depth")) fail(kOneHot, "needs the 'depth' attribute");
  const std::int64_t depth = attrs.get_int("depth", 0);
  if (depth <= 0) fail(kOneHot, "depth " + std::to_string(depth) + " must be positive");
  const auto rank = static_cast<std::int64_t>(idx.size()) + 1;
  const auto axis = normalize_axis(attrs.get_int("axis", -1), rank, kOneHot);
  Shape out = idx;
  out.insert(out.begin() + axis, depth);
  return {{out, in[1].dtype}};
}

void onehot_kernel(KernelContext& ctx) {
  const TensorView &idx = ctx.inputs[0], &values = ctx.inputs[1], &y = ctx.outputs[0];
  const std::int64_t depth = ctx.attrs.get_int("depth", 1);
  const AxisLoop l = axis_loop(*y.shape, ctx.attrs.get_int("axis", -1));
  std::vector<std::int64_t> v(static_cast<std::size_t>(idx.numel));
  load_i64(idx, v.data());
  std::vector<std::int64_t> pick(static_cast<std::size_t>(y.numel));  // 0: off, 1: on
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t j = 0; j < l.inner; ++j) {
      std::int64_t hot = v[static_cast<std::size_t>(o * l.inner + j)];
      if (hot < 0) hot += depth;
      for (std::int64_t d = 0; d < depth; ++d) pick[static_cast<std::size_t>((o * depth + d) * l.inner + j)] = d == hot;
    }
  }
  copy_indexed(values.data, y.data, dtype_size(y.dtype), pick);
}

// About one compare per input element.
KernelCost cost_compare(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(in[0].numel());
  return c;
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kTopK,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_topk,
                              .cost = cost_compare});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kArgMax,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_arg<kArgMax>,
                              .cost = cost_compare});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kArgMin,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_arg<kArgMin>,
                              .cost = cost_compare});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kNonZero,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_nonzero,
                              .cost = cost_compare});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kOneHot,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_onehot,
                              .cost = movement_cost});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kTopK, topk_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kArgMax, arg_kernel, true);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kArgMin, arg_kernel, false);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kNonZero, nonzero_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOneHot, onehot_kernel);

}  // namespace npuscope::emulator::kernels
