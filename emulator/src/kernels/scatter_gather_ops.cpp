// GatherElements, ScatterElements, GatherND, ScatterND with ONNX semantics (indices i32 or i64,
// negative indices count from the end of their dim).
//
// Indices are data: an index outside [-dim, dim) is a kernel fault (Note [Kernel faults]): the
// kernel notes the first one as it maps indices to positions, a gather of it yields zero bytes and a
// scatter of it is skipped, and the op fails with the fault when the kernel is done.
//
// Gathers and scatters with reduction 'none' copy bytes exactly (later duplicates win). Scatter
// reductions 'add', 'mul', 'max', 'min' combine values in order: NPU in f32, CPU golden in f64,
// integers exactly in int64 (wrapping to the storage type); the NPU leaves f64 data to the AI CPU.
#include <algorithm>
#include <cstring>
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kGatherElements[] = "GatherElements";
constexpr char kScatterElements[] = "ScatterElements";
constexpr char kGatherND[] = "GatherND";
constexpr char kScatterND[] = "ScatterND";

std::int64_t wrap_index(std::int64_t i, std::int64_t dim) { return i < 0 ? i + dim : i; }
bool in_range(std::int64_t i, std::int64_t dim) { return i >= 0 && i < dim; }

std::vector<std::int64_t> load_indices(const TensorView& v) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(v.numel));
  load_i64(v, out.data());
  return out;
}

// ---- element-wise along an axis: GatherElements, ScatterElements -------------------------------

// Checks data (input 0) against indices (input 1): one rank, indices no larger outside the axis.
void check_elements(std::span<const TensorMeta> in, const Attrs& attrs, const char* op) {
  const Shape &x = in[0].shape, &idx = in[1].shape;
  require_index_dtype(in, 1, op, "indices");
  if (x.empty()) fail(op, "needs data of rank >= 1, got a scalar");
  const auto axis =
      static_cast<std::size_t>(normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), op));
  if (idx.size() != x.size()) fail(op, "indices " + shape_str(idx) + " must have the rank of data " + shape_str(x));
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (d != axis && idx[d] > x[d]) {
      fail(op, "indices " + shape_str(idx) + " exceed data " + shape_str(x) + " in dim " + std::to_string(d));
    }
  }
}

// For each element of indices: the flat data position it names, or -1 when out of range (a fault).
std::vector<std::int64_t> element_targets(const Shape& x, const Shape& idx_shape, const std::vector<std::int64_t>& idx,
                                          std::int64_t axis_attr, KernelContext& ctx, const char* op) {
  const auto axis =
      static_cast<std::size_t>(axis_attr < 0 ? axis_attr + static_cast<std::int64_t>(x.size()) : axis_attr);
  const auto strides = strides_of(x);
  std::vector<std::int64_t> out(idx.size());
  std::size_t n = 0;
  for_each_index(idx_shape, [&](const std::vector<std::int64_t>& at) {
    const std::int64_t k = wrap_index(idx[n], x[axis]);
    if (!in_range(k, x[axis])) [[unlikely]]
      set_index_fault(ctx, op, idx[n], x[axis], "axis " + std::to_string(axis) + " of data " + shape_str(x));
    std::int64_t flat = in_range(k, x[axis]) ? k * strides[axis] : -1;
    for (std::size_t d = 0; d < at.size() && flat >= 0; ++d) {
      if (d != axis) flat += at[d] * strides[d];
    }
    out[n++] = flat;
  });
  return out;
}

std::vector<TensorMeta> infer_gather_elements(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_elements(in, attrs, kGatherElements);
  return {{in[1].shape, in[0].dtype}};
}

void gather_elements_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &idx = ctx.inputs[1], &y = ctx.outputs[0];
  const auto targets =
      element_targets(*x.shape, *idx.shape, load_indices(idx), ctx.attrs.get_int("axis", 0), ctx, kGatherElements);
  copy_indexed(x.data, y.data, dtype_size(x.dtype), targets);
}

// ---- scatter: shared by ScatterElements and ScatterND -------------------------------------------

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

bool parse_reduction(const std::string& s, Reduction& r) {
  if (s == "none") {
    r = Reduction::kNone;
  } else if (s == "add") {
    r = Reduction::kAdd;
  } else if (s == "mul") {
    r = Reduction::kMul;
  } else if (s == "max") {
    r = Reduction::kMax;
  } else if (s == "min") {
    r = Reduction::kMin;
  } else {
    return false;
  }
  return true;
}

void check_reduction(const Attrs& attrs, const char* op) {
  Reduction r;
  const std::string s = attrs.get_string("reduction", "none");
  if (!parse_reduction(s, r)) fail(op, "reduction '" + s + "' is not none, add, mul, max or min");
}

Reduction reduction_of(const Attrs& attrs) {
  Reduction r = Reduction::kNone;
  parse_reduction(attrs.get_string("reduction", "none"), r);
  return r;
}

// The NPU kernel computes reductions in f32: f64 data goes to the AI CPU.
bool npu_supports_scatter(std::span<const TensorMeta> in, const Attrs& attrs) {
  return in[0].dtype != DType::kF64 || reduction_of(attrs) == Reduction::kNone;
}

// NaN propagates through max and min (numpy's maximum / minimum).
template <class V>
V combine(Reduction r, V a, V b) {
  switch (r) {
    case Reduction::kAdd: return a + b;
    case Reduction::kMul: return a * b;
    case Reduction::kMax: return a != a || b != b ? (a != a ? a : b) : std::max(a, b);
    case Reduction::kMin: return a != a || b != b ? (a != a ? a : b) : std::min(a, b);
    case Reduction::kNone: break;
  }
  return b;
}

template <class V>
void combine_all(std::vector<V>& out, const std::vector<V>& upd, const std::vector<std::int64_t>& targets,
                 Reduction r) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] >= 0)
      out[static_cast<std::size_t>(targets[i])] = combine(r, out[static_cast<std::size_t>(targets[i])], upd[i]);
  }
}

// y = data; then update element i goes to y[targets[i]] (skipped when < 0), in order.
template <class T>
void scatter_into(KernelContext& ctx, const std::vector<std::int64_t>& targets) {
  const TensorView &x = ctx.inputs[0], &upd = ctx.inputs[2], &y = ctx.outputs[0];
  const Reduction r = reduction_of(ctx.attrs);
  const std::size_t es = dtype_size(x.dtype);
  if (r == Reduction::kNone || !is_floating(x.dtype)) {
    if (x.numel > 0) std::memcpy(y.data, x.data, static_cast<std::size_t>(x.numel) * es);
  }
  if (r == Reduction::kNone) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (targets[i] >= 0) std::memcpy(y.data + static_cast<std::size_t>(targets[i]) * es, upd.data + i * es, es);
    }
  } else if (is_floating(x.dtype)) {
    std::vector<T> out = load<T>(x, ctx);
    combine_all(out, load<T>(upd, ctx), targets, r);
    store<T>(y, out.data(), ctx);
  } else {
    // Unsigned arithmetic wraps like the storage type; max / min compare as signed.
    std::vector<std::int64_t> out = load_indices(x), u = load_indices(upd);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (targets[i] < 0) continue;
      auto& o = out[static_cast<std::size_t>(targets[i])];
      const auto a = static_cast<std::uint64_t>(o), b = static_cast<std::uint64_t>(u[i]);
      o = r == Reduction::kAdd   ? static_cast<std::int64_t>(a + b)
          : r == Reduction::kMul ? static_cast<std::int64_t>(a * b)
                                 : combine(r, o, u[i]);
    }
    store_i64(y, out.data());
  }
}

std::vector<TensorMeta> infer_scatter_elements(std::span<const TensorMeta> in, const Attrs& attrs) {
  check_elements(in, attrs, kScatterElements);
  check_reduction(attrs, kScatterElements);
  if (in[2].shape != in[1].shape || in[2].dtype != in[0].dtype) {
    fail(kScatterElements, "updates (" + shape_str(in[2].shape) + ", " + std::string(dtype_name(in[2].dtype)) +
                               ") must have the shape of indices " + shape_str(in[1].shape) +
                               " and the dtype of data (" + std::string(dtype_name(in[0].dtype)) + ")");
  }
  return {{in[0].shape, in[0].dtype}};
}

template <class T>
void scatter_elements_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &idx = ctx.inputs[1];
  scatter_into<T>(ctx, element_targets(*x.shape, *idx.shape, load_indices(idx), ctx.attrs.get_int("axis", 0), ctx,
                                       kScatterElements));
}

// ---- GatherND, ScatterND ------------------------------------------------------------------------

// The slab of data each index tuple names: data dims [b, b + k) are indexed, [b + k, r) copied.
struct NdPlan {
  std::int64_t batch = 1, tuples = 1, k = 0, slab = 1, batch_stride = 1;
  Shape indexed;  // data dims b .. b + k - 1
};

NdPlan nd_plan(const Shape& x, const Shape& idx, std::int64_t b) {
  NdPlan p;
  p.k = idx.back();
  for (std::int64_t d = 0; d < b; ++d) p.batch *= x[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(b); d + 1 < idx.size(); ++d) p.tuples *= idx[d];
  for (std::size_t d = static_cast<std::size_t>(b + p.k); d < x.size(); ++d) p.slab *= x[d];
  p.indexed.assign(x.begin() + b, x.begin() + b + p.k);
  p.batch_stride = shape_numel(p.indexed) * p.slab;
  return p;
}

// Element offset of each tuple's slab in data, or -1 when an index is out of range (a fault).
std::vector<std::int64_t> slab_offsets(const NdPlan& p, const std::vector<std::int64_t>& idx, KernelContext& ctx,
                                       const char* op) {
  const auto strides = strides_of(p.indexed);
  std::vector<std::int64_t> out(static_cast<std::size_t>(p.batch * p.tuples));
  for (std::size_t t = 0; t < out.size(); ++t) {
    std::int64_t off = static_cast<std::int64_t>(t) / p.tuples * p.batch_stride;
    for (std::size_t j = 0; j < p.indexed.size() && off >= 0; ++j) {
      const std::int64_t given = idx[t * p.indexed.size() + j], i = wrap_index(given, p.indexed[j]);
      if (!in_range(i, p.indexed[j])) [[unlikely]]
        set_index_fault(ctx, op, given, p.indexed[j], "component " + std::to_string(j) + " of an index tuple");
      off = in_range(i, p.indexed[j]) ? off + i * strides[j] * p.slab : -1;
    }
    out[t] = off;
  }
  return out;
}

// Checks the shapes of data and indices for batch_dims b; returns the output shape of GatherND.
Shape check_nd(std::span<const TensorMeta> in, std::int64_t b, const char* op) {
  const Shape &x = in[0].shape, &idx = in[1].shape;
  require_index_dtype(in, 1, op, "indices");
  const auto r = static_cast<std::int64_t>(x.size()), q = static_cast<std::int64_t>(idx.size());
  if (q < 1 || r < 1) fail(op, "data " + shape_str(x) + " and indices " + shape_str(idx) + " need rank >= 1");
  if (b < 0 || b >= std::min(q, r))
    fail(op, "batch_dims " + std::to_string(b) + " must be in [0, min(rank of data, rank of indices))");
  const std::int64_t k = idx.back();
  if (k < 1 || k > r - b)
    fail(op, "the last dim of indices " + shape_str(idx) + " must be in [1, " + std::to_string(r - b) + "]");
  for (std::int64_t d = 0; d < b; ++d) {
    if (idx[static_cast<std::size_t>(d)] != x[static_cast<std::size_t>(d)]) {
      fail(op, "the batch dims of indices " + shape_str(idx) + " and data " + shape_str(x) + " differ");
    }
  }
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + k, x.end());
  return out;
}

std::vector<TensorMeta> infer_gather_nd(std::span<const TensorMeta> in, const Attrs& attrs) {
  return {{check_nd(in, attrs.get_int("batch_dims", 0), kGatherND), in[0].dtype}};
}

void gather_nd_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &idx = ctx.inputs[1], &y = ctx.outputs[0];
  const NdPlan p = nd_plan(*x.shape, *idx.shape, ctx.attrs.get_int("batch_dims", 0));
  const auto offsets = slab_offsets(p, load_indices(idx), ctx, kGatherND);
  const std::size_t bytes = static_cast<std::size_t>(p.slab) * dtype_size(x.dtype);
  for (std::size_t t = 0; t < offsets.size(); ++t) {
    std::byte* dst = y.data + t * bytes;
    if (offsets[t] >= 0) {
      std::memcpy(dst, x.data + static_cast<std::size_t>(offsets[t]) * dtype_size(x.dtype), bytes);
    } else {
      std::memset(dst, 0, bytes);
    }
  }
}

std::vector<TensorMeta> infer_scatter_nd(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape updates = check_nd(in, 0, kScatterND);
  check_reduction(attrs, kScatterND);
  if (in[2].shape != updates || in[2].dtype != in[0].dtype) {
    fail(kScatterND, "updates (" + shape_str(in[2].shape) + ", " + std::string(dtype_name(in[2].dtype)) + ") must be " +
                         shape_str(updates) + " of " + std::string(dtype_name(in[0].dtype)) + " for data " +
                         shape_str(in[0].shape) + " and indices " + shape_str(in[1].shape));
  }
  return {{in[0].shape, in[0].dtype}};
}

template <class T>
void scatter_nd_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &idx = ctx.inputs[1];
  const NdPlan p = nd_plan(*x.shape, *idx.shape, 0);
  const auto offsets = slab_offsets(p, load_indices(idx), ctx, kScatterND);
  std::vector<std::int64_t> targets(offsets.size() * static_cast<std::size_t>(p.slab));
  for (std::size_t t = 0; t < offsets.size(); ++t) {
    for (std::int64_t e = 0; e < p.slab; ++e) {
      targets[t * static_cast<std::size_t>(p.slab) + static_cast<std::size_t>(e)] =
          offsets[t] < 0 ? -1 : offsets[t] + e;
    }
  }
  scatter_into<T>(ctx, targets);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kGatherElements,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_gather_elements,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kScatterElements,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_scatter_elements,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGatherND,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_gather_nd,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kScatterND,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_scatter_nd,
                              .cost = movement_cost});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kGatherElements, gather_elements_kernel);
NPUSCOPE_REGISTER_KERNEL_IF(kScatterElements, Backend::kNpu, scatter_elements_kernel<float>, npu_supports_scatter);
NPUSCOPE_REGISTER_KERNEL(kScatterElements, Backend::kCpu, scatter_elements_kernel<double>);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kGatherND, gather_nd_kernel);
NPUSCOPE_REGISTER_KERNEL_IF(kScatterND, Backend::kNpu, scatter_nd_kernel<float>, npu_supports_scatter);
NPUSCOPE_REGISTER_KERNEL(kScatterND, Backend::kCpu, scatter_nd_kernel<double>);

}  // namespace npuscope::emulator::kernels
