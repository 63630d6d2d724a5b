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
#include "reduce_util.h"

namespace npuscope::emulator::kernels {
namespace {

template <const char* kOp>
std::vector<TensorMeta> infer_reduce(std::span<const TensorMeta> in, const Attrs& attrs) {
  return {{reduction::reduced_shape(in[0].shape, attrs, kOp), in[0].dtype}};
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
void reduce_runs(const std::vector<V>& x, const reduction::ReducePlan& p, Reduce op, std::vector<V>& out) {
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
      const V sum = reduction::sum_values(v, n);
      out[o] = op == Reduce::kMean ? mean_of(sum, n) : sum;
    }
  }
}

// Last dim kept: whole rows of `inner` outputs accumulate input rows element-wise, in order (the
// vector unit adding rows).
template <class V>
void reduce_rows(const std::vector<V>& x, const reduction::ReducePlan& p, Reduce op, std::vector<V>& out) {
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
std::vector<V> reduce_values(const std::vector<V>& x, const reduction::ReducePlan& p, Reduce op) {
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

// Note [Channel sums in place]
// A bias gradient or a batch-norm statistic sums an NCHW tensor over (0, 2, 3): per channel, N
// planes of H · W values. The generic path copies the tensor, builds an offset per reduced value and
// gathers each channel's values before summing them over 64 lanes. On the NPU in f32 the planes are
// read in place instead: value i of a channel's sequence (images in order, each plane in order) goes
// to lane i mod 64, each lane adding its values in sequence order, then the same halving tree — the
// same sums, bit for bit, as sum_values over the gathered sequence.

// Adds len values to the lanes, the first one into lane `at`.
void add_to_lanes(float* lanes, std::int64_t at, const float* p, std::int64_t len) {
  constexpr std::int64_t kLanes = 64;
  std::int64_t k = 0;
  if (at != 0) {
    k = std::min(kLanes - at, len);
    for (std::int64_t j = 0; j < k; ++j) lanes[at + j] += p[j];
  }
  for (; k + kLanes <= len; k += kLanes) {
    for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += p[k + l];
  }
  for (std::int64_t l = 0; k < len; ++k, ++l) lanes[l] += p[k];
}

// See Note [Channel sums in place]. Returns false (nothing done) unless the NPU sums or averages an
// f32 [N, C, ...] tensor, computing in f32, over every dim but 1.
template <Reduce kOp>
bool reduce_channels_direct(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  if (kOp == Reduce::kMax || ctx.backend != Backend::kNpu || x.dtype != DType::kF32 ||
      ctx.compute_dtype != DType::kF32 || x.shape->size() < 2) {
    return false;
  }
  std::vector<bool> reduced;
  reduction::reduced_dims(*x.shape, ctx.attrs, reduced);
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d] != (d != 1)) return false;
  }
  const Shape& s = *x.shape;
  const std::int64_t n = s[0], c = s[1], hw = n * c == 0 ? 0 : x.numel / (n * c);
  std::vector<float> r(static_cast<std::size_t>(c));
  for (std::int64_t ch = 0; ch < c; ++ch) {
    float lanes[64] = {};
    for (std::int64_t i = 0; i < n; ++i)
      add_to_lanes(lanes, (i * hw) % 64, x.as<const float>() + (i * c + ch) * hw, hw);
    for (std::int64_t w = 32; w > 0; w /= 2) {
      for (std::int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
    }
    r[static_cast<std::size_t>(ch)] = kOp == Reduce::kMean ? mean_of(lanes[0], n * hw) : lanes[0];
  }
  store<float>(y, r.data(), ctx);
  return true;
}

// T: the floating accumulation type (float on the NPU, double on the CPU).
template <class T, Reduce kOp>
void reduce_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  if constexpr (std::is_same_v<T, float>) {
    if (reduce_channels_direct<kOp>(ctx)) return;
  }
  const reduction::ReducePlan plan = reduction::plan_reduce(*x.shape, ctx.attrs);
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
  c.stages = 1;                                  // partial sums, then the combine
  c.precision_upcast = true;
  c.cross_core = true;
  // Reducing a leading axis (the innermost one kept) reads strided columns.
  const Shape& x = in[0].shape;
  c.strided = out[0].numel() > 1 && !x.empty() && !out[0].shape.empty() && out[0].shape.back() == x.back() &&
              out[0].numel() < in[0].numel();
  return c;
}

constexpr char kReduceSum[] = "ReduceSum";
constexpr char kReduceMean[] = "ReduceMean";
constexpr char kReduceMax[] = "ReduceMax";

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceSum,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceSum>,
                              .cost = cost_reduce});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceMean,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceMean>,
                              .cost = cost_reduce});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kReduceMax,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_reduce<kReduceMax>,
                              .cost = cost_reduce});

NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceSum, reduce_kernel, Reduce::kSum);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceMean, reduce_kernel, Reduce::kMean);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceMax, reduce_kernel, Reduce::kMax);

}  // namespace npuscope::emulator::kernels
