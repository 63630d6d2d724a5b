// ReduceSum, ReduceMean, ReduceMax over a set of axes (ONNX: 'axes', empty = all; 'keepdims';
// 'noop_with_empty_axes').
//
// NPU: floating values accumulate in f32, as the vector unit does it: a reduction over the last dim
// runs over 64 lanes (one 256-byte vector register of f32) folded by a halving tree at the end; a
// reduction over outer dims adds whole rows element-wise, in order. The result is rounded to the
// storage dtype by store(). CPU golden: accumulated in f64, in order. Integer dtypes accumulate exactly in
// int64 on both backends (an integer adder does not round); the result wraps to the storage type.
// An empty reduction gives 0 (sum), NaN (mean; 0 for integers) and -inf / the dtype's minimum (max).
#include <algorithm>
#include <limits>
#include <type_traits>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

// Which dims are reduced; returns what is wrong with 'axes', or "" when fine.
std::string reduced_dims(const Shape& x, const Attrs& attrs, std::vector<bool>& reduced) {
  const auto rank = static_cast<std::int64_t>(x.size());
  const auto axes = attrs.get_ints("axes");
  const bool all = axes.empty() && attrs.get_int("noop_with_empty_axes", 0) == 0;
  reduced.assign(x.size(), all);
  for (auto axis : axes) {
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return "axis " + std::to_string(axis) + " is out of range for input " + shape_str(x);
    if (reduced[static_cast<std::size_t>(a)]) return "axis " + std::to_string(axis) + " is listed twice";
    reduced[static_cast<std::size_t>(a)] = true;
  }
  return {};
}

template <const char* kOp>
std::vector<TensorMeta> infer_reduce(std::span<const TensorMeta> in, const Attrs& attrs) {
  std::vector<bool> reduced;
  const std::string error = reduced_dims(in[0].shape, attrs, reduced);
  if (!error.empty()) fail(kOp, error);
  const bool keep = attrs.get_int("keepdims", 1) != 0;
  Shape out;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(in[0].shape[d]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  return {{out, in[0].dtype}};
}

// Row-major offsets of every position over the first `ndims` dims where `mask` is `want`.
std::vector<std::int64_t> offsets_over(const Shape& x, const std::vector<bool>& mask, bool want, std::size_t ndims) {
  const auto strides = strides_of(x);
  std::vector<std::int64_t> sizes, steps;
  for (std::size_t d = 0; d < ndims; ++d) {
    if (mask[d] == want) {
      sizes.push_back(x[d]);
      steps.push_back(strides[d]);
    }
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(shape_numel(sizes)));
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::int64_t off = 0;
  for (auto& o : out) {
    o = off;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      off += steps[d];
      if (++index[d] < sizes[d]) break;
      off -= steps[d] * sizes[d];
      index[d] = 0;
    }
  }
  return out;
}

// The trailing kept dims form rows of `inner` contiguous outputs (1 when the last dim is reduced).
// For each row, `base` is the input offset of its first value and `offsets` are the offsets of the
// reduced values (rows of input) from there; `contiguous` when those are 0, 1, 2, ...
struct ReducePlan {
  std::vector<std::int64_t> base, offsets;
  std::int64_t inner = 1;
  bool contiguous = false;
};

ReducePlan plan_reduce(const TensorView& x, const Attrs& attrs) {
  const Shape& shape = *x.shape;
  std::vector<bool> reduced;
  reduced_dims(shape, attrs, reduced);  // infer vetted the axes
  ReducePlan p;
  std::size_t prefix = shape.size();
  while (prefix > 0 && !reduced[prefix - 1]) p.inner *= shape[--prefix];
  p.base = offsets_over(shape, reduced, false, prefix);
  p.offsets = offsets_over(shape, reduced, true, prefix);
  p.contiguous = p.inner == 1;
  for (std::size_t i = 0; i < p.offsets.size() && p.contiguous; ++i) {
    p.contiguous = p.offsets[i] == static_cast<std::int64_t>(i);
  }
  return p;
}

// f32 sum over 64 lanes folded by a halving tree (see the note at the top); f64: in order.
template <class T>
T sum_values(const T* v, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    T s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += v[i];
    return s;
  } else {
    constexpr std::int64_t kLanes = 64;
    T lanes[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += v[i + l];
    }
    for (std::int64_t l = 0; i < n; ++i, ++l) lanes[l] += v[i];
    for (std::int64_t w = kLanes / 2; w > 0; w /= 2) {
      for (std::int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
    }
    return lanes[0];
  }
}

enum class Reduce { kSum, kMean, kMax };

// The max of an empty set: -inf, or the lowest integer.
template <class V>
constexpr V max_identity() {
  if constexpr (std::numeric_limits<V>::has_infinity) return -std::numeric_limits<V>::infinity();
  return std::numeric_limits<V>::lowest();
}

// NaN propagates, as in numpy and ONNX: once `m` is NaN no comparison replaces it.
template <class V>
V max_of(V m, V v) {
  return v > m || v != v ? v : m;
}

template <class V>
V mean_of(V sum, std::int64_t n) {
  if constexpr (std::is_integral_v<V>) {
    return n == 0 ? 0 : sum / n;
  } else {
    return sum / static_cast<V>(n);
  }
}

// Last dim reduced: each output reduces a run of values (gathered first when strided).
template <class V>
void reduce_runs(const std::vector<V>& x, const ReducePlan& p, Reduce op, std::vector<V>& out) {
  const auto n = static_cast<std::int64_t>(p.offsets.size());
  std::vector<V> gathered(p.contiguous ? 0 : p.offsets.size());
  for (std::size_t o = 0; o < p.base.size(); ++o) {
    const V* v = n == 0 ? nullptr : x.data() + p.base[o];
    if (!p.contiguous) {
      for (std::size_t i = 0; i < gathered.size(); ++i) gathered[i] = v[p.offsets[i]];
      v = gathered.data();
    }
    if (op == Reduce::kMax) {
      V m = max_identity<V>();
      for (std::int64_t i = 0; i < n; ++i) m = max_of(m, v[i]);
      out[o] = m;
    } else {
      const V sum = sum_values(v, n);
      out[o] = op == Reduce::kMean ? mean_of(sum, n) : sum;
    }
  }
}

// Last dim kept: whole rows of `inner` outputs accumulate input rows element-wise, in order (the
// vector unit adding rows).
template <class V>
void reduce_rows(const std::vector<V>& x, const ReducePlan& p, Reduce op, std::vector<V>& out) {
  const auto n = static_cast<std::int64_t>(p.offsets.size());
  const std::int64_t inner = p.inner;
  for (std::size_t o = 0; o < p.base.size(); ++o) {
    V* acc = out.data() + static_cast<std::int64_t>(o) * inner;
    std::fill(acc, acc + inner, op == Reduce::kMax ? max_identity<V>() : V(0));
    for (std::int64_t r = 0; r < n; ++r) {
      const V* row = x.data() + p.base[o] + p.offsets[static_cast<std::size_t>(r)];
      if (op == Reduce::kMax) {
        for (std::int64_t j = 0; j < inner; ++j) acc[j] = max_of(acc[j], row[j]);
      } else {
        for (std::int64_t j = 0; j < inner; ++j) acc[j] += row[j];
      }
    }
    if (op == Reduce::kMean) {
      for (std::int64_t j = 0; j < inner; ++j) acc[j] = mean_of(acc[j], n);
    }
  }
}

// Reduces `x` (already in the accumulation type V) into one value per output.
template <class V>
std::vector<V> reduce_values(const std::vector<V>& x, const ReducePlan& p, Reduce op) {
  std::vector<V> out(p.base.size() * static_cast<std::size_t>(p.inner));
  if (p.inner == 1) {
    reduce_runs(x, p, op, out);
  } else {
    reduce_rows(x, p, op, out);
  }
  return out;
}

// Integer results wrap to the storage type (bool: non-zero); an empty max gives the type's minimum.
template <class I>
void store_ints_as(const std::vector<std::int64_t>& v, void* dst, bool empty_max) {
  auto* d = static_cast<I*>(dst);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<I, bool>) {
      d[i] = v[i] != 0;
    } else {
      d[i] = empty_max ? std::numeric_limits<I>::lowest() : static_cast<I>(v[i]);
    }
  }
}

void store_ints(const TensorView& y, const std::vector<std::int64_t>& v, bool empty_max) {
  switch (y.dtype) {
    case DType::kI8: store_ints_as<std::int8_t>(v, y.data, empty_max); break;
    case DType::kU8: store_ints_as<std::uint8_t>(v, y.data, empty_max); break;
    case DType::kI32: store_ints_as<std::int32_t>(v, y.data, empty_max); break;
    case DType::kBool: store_ints_as<bool>(v, y.data, empty_max); break;
    default: store_ints_as<std::int64_t>(v, y.data, empty_max); break;
  }
}

// T: the floating accumulation type (float on the NPU, double on the CPU).
template <class T, Reduce kOp>
void reduce_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const ReducePlan plan = plan_reduce(x, ctx.attrs);
  if (is_floating(x.dtype)) {
    std::vector<T> r = reduce_values(load<T>(x, ctx), plan, kOp);
    store<T>(y, r.data(), ctx);
    return;
  }
  std::vector<std::int64_t> v(static_cast<std::size_t>(x.numel));
  load_i64(x, v.data());
  store_ints(y, reduce_values(v, plan, kOp), kOp == Reduce::kMax && plan.offsets.empty());
}

KernelCost cost_reduce(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(in[0].numel());  // one add / compare per input element
  return c;
}

constexpr char kReduceSum[] = "ReduceSum";
constexpr char kReduceMean[] = "ReduceMean";
constexpr char kReduceMax[] = "ReduceMax";

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceSum, .category = OpCategory::kPrecisionSensitive, .min_inputs = 1,
                              .max_inputs = 1, .infer = infer_reduce<kReduceSum>, .cost = cost_reduce});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceMean, .category = OpCategory::kPrecisionSensitive, .min_inputs = 1,
                              .max_inputs = 1, .infer = infer_reduce<kReduceMean>, .cost = cost_reduce});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceMax, .category = OpCategory::kVector, .min_inputs = 1,
                              .max_inputs = 1, .infer = infer_reduce<kReduceMax>, .cost = cost_reduce});

NPUSCOPE_REGISTER_KERNEL(kReduceSum, Backend::kNpu, (reduce_kernel<float, Reduce::kSum>));
NPUSCOPE_REGISTER_KERNEL(kReduceSum, Backend::kCpu, (reduce_kernel<double, Reduce::kSum>));
NPUSCOPE_REGISTER_KERNEL(kReduceMean, Backend::kNpu, (reduce_kernel<float, Reduce::kMean>));
NPUSCOPE_REGISTER_KERNEL(kReduceMean, Backend::kCpu, (reduce_kernel<double, Reduce::kMean>));
NPUSCOPE_REGISTER_KERNEL(kReduceMax, Backend::kNpu, (reduce_kernel<float, Reduce::kMax>));
NPUSCOPE_REGISTER_KERNEL(kReduceMax, Backend::kCpu, (reduce_kernel<double, Reduce::kMax>));

}  // namespace npuscope::emulator::kernels
