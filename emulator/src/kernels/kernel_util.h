// Helpers every kernel file uses, so that NPU numerics live in one place.
//
// Note [Kernel numerics]
// Kernels compute in a wide type T (float on the NPU, double for most CPU golden kernels) over
// contiguous buffers:
//   load<T>(view, ctx)        converts the storage dtype to T; on the NPU, when the precision mode
//                             lowers an f32 op to f16/bf16 (ctx.compute_dtype), inputs are rounded
//                             to it first, as the NPU would see them.
//   store<T>(view, src, ctx)  rounds each result to ctx.compute_dtype (NPU: "round to the storage
//                             dtype after the op"), applies the overflow mode (saturation: ±inf ->
//                             ±max, NaN -> 0, ctx.saturated), converts to the storage dtype and sets
//                             ctx.overflow when a result is not finite or was clamped.
// Integer and bool outputs are stored by truncation toward zero (NaN -> 0). A double stored to
// f16/bf16 is rounded once (see round_to_f32_odd).
//
// Note [Underflow counts]
// f16's smallest subnormal is 5.96e-8: a force_fp16 network whose activations shrink below it ends
// in zeros, with no inf or NaN to raise the overflow flag. So store<T>, where results are narrowed
// to f16/bf16 (the compute dtype of a lowered op, or the output dtype), also counts the results
// whose wide value was finite and non-zero and whose narrowed value is zero (ctx.underflow: the
// value was flushed, all of it lost) or subnormal (ctx.subnormal: it kept fewer than 11 bits).
// Inputs rounded by load<T> are not counted: a value is counted once, by the op that produced it,
// so the first task with an underflow is where the flushing starts. The counts are branch-free
// compares summed in the loops that convert anyway (store_narrow's scan, round_in_place's blocks).
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator::kernels {

// ---- conversion -------------------------------------------------------------------------------
void load_f32(const TensorView& v, float* dst);
void load_f64(const TensorView& v, double* dst);
void load_i64(const TensorView& v, std::int64_t* dst);
// int64 values -> the view's dtype: integers wrap as C casts do, floats convert, bool is != 0.
void store_i64(const TensorView& v, const std::int64_t* src);

// A double rounded to float *to odd* (truncate, then set the last bit if anything was dropped).
// Rounding that float to f16/bf16 equals one correct rounding of the double (f32 keeps >= 2 more
// bits than either), where plain double -> float -> f16 can round twice.
float round_to_f32_odd(double d);

// Whether this CPU has AVX2 (asked once): kernels with an AVX2 body pick it at run time.
bool cpu_has_avx2();

// `src` (n = view numel) -> the view's storage dtype. Returns true if any value is non-finite.
bool store_f32_raw(const TensorView& v, const float* src);
bool store_f64_raw(const TensorView& v, const double* src);

template <class T>
std::vector<T> load(const TensorView& v, const KernelContext& ctx);
template <class T>
void load_into(const TensorView& v, const KernelContext& ctx, T* dst);
template <class T>
void store(const TensorView& v, T* src, KernelContext& ctx);  // may modify src (rounding)

// Rounds values in place to `dtype` (f16/bf16: nearest even; f32: float; others: nothing).
void round_in_place(float* data, std::int64_t n, DType dtype);
void round_in_place(double* data, std::int64_t n, DType dtype);
// round_in_place for results: also adds to ctx.underflow / ctx.subnormal (Note [Underflow counts]).
void round_counting_underflow(float* data, std::int64_t n, DType dtype, KernelContext& ctx);
void round_counting_underflow(double* data, std::int64_t n, DType dtype, KernelContext& ctx);
// The same counts for `src` already converted into the f16/bf16 view `v`.
void count_stored_underflow(const TensorView& v, const float* src, KernelContext& ctx);
void count_stored_underflow(const TensorView& v, const double* src, KernelContext& ctx);

// ---- shapes -----------------------------------------------------------------------------------
// Normalises a possibly negative axis; throws InvalidArgument naming `op`.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* op);
// A shape seen around one of its axes: [outer, len, inner], the elements before the axis, along it
// and after it (a kernel along an axis loops over outer and inner).
struct AxisSplit {
  std::int64_t outer = 1, len = 1, inner = 1;
};
inline AxisSplit split_at(const Shape& shape, std::int64_t axis) {
  AxisSplit s;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[static_cast<std::size_t>(d)];
  }
  return s;
}
// numpy broadcast of two shapes; throws InvalidArgument naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Row-major strides of `shape`.
std::vector<std::int64_t> strides_of(const Shape& shape);

// ---- checked size arithmetic --------------------------------------------------------------------
// Note [Sizes from user input]
// Shapes, attributes (pads, blocksize, repeats, scales) and operands read from a model are user
// input: every size an infer function derives from them is computed with these helpers, which
// throw InvalidArgument("<op>: <what> overflows int64 (<a> <op> <b>)") instead of wrapping, and
// the output shape is then checked against kMaxTensorBytes (tensor.h) before anything is allocated.
// `what` is a string, or a callable returning one, called only on overflow (so that a message
// naming the dim and the attribute costs nothing on the per-op path).
[[noreturn]] void throw_overflow(const char* op, std::string_view what, std::int64_t a, const char* sign,
                                 std::int64_t b);
template <class What>
[[noreturn]] void throw_overflow_of(const char* op, const What& what, std::int64_t a, const char* sign,
                                    std::int64_t b) {
  if constexpr (std::is_invocable_v<What>)
    throw_overflow(op, what(), a, sign, b);
  else
    throw_overflow(op, what, a, sign, b);
}
template <class What>
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* op, const What& what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    throw_overflow_of(op, what, a, "+", b);
  return r;
}
template <class What>
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* op, const What& what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    throw_overflow_of(op, what, a, "*", b);
  return r;
}

// Records the first fault of a kernel (see Note [Kernel faults]); cold, out of line.
void set_fault(KernelContext& ctx, std::string message);
// "<op>: <what> <value> is out of range [-dim, dim - 1] for <where>": an index fault.
void set_index_fault(KernelContext& ctx, const char* op, std::int64_t value, std::int64_t dim, std::string_view where);

// Maps each output index of a broadcast to the input's flat index. Cheap when the input already has
// the output shape (identity) or is a scalar.
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& input, const Shape& output);
  bool identity() const { return identity_; }
  bool scalar() const { return scalar_; }
  // Fills `out` with the input flat index for every output element.
  void fill(std::vector<std::int64_t>& out) const;

 private:
  Shape output_;
  std::vector<std::int64_t> strides_;  // input strides on output dims (0 where broadcast)
  bool identity_ = false, scalar_ = false;
};

// Throws InvalidArgument("<op>: <what>") — for infer functions.
[[noreturn]] void fail(const char* op, const std::string& what);
// The dtype of input i, demanding a floating type.
void require_floating(std::span<const TensorMeta> in, int i, const char* op);
void require_same_dtype(std::span<const TensorMeta> in, const char* op);

// A per-dimension int attribute (strides, pads, dilations...) of `size` values; absent or empty
// means `fallback` for each. Throws InvalidArgument naming `op` for a wrong count or a value outside
// [min_value, kMaxTensorBytes].
std::vector<std::int64_t> dim_ints(const Attrs& attrs, const char* name, std::size_t size, std::int64_t fallback,
                                   std::int64_t min_value, const char* op);

// A shape attribute that a gradient op rebuilds (input_size, filter_size): `ranks` sizes (one of
// them; empty: any number), each in [0, kMaxTensorBytes]. Throws InvalidArgument naming `op`.
Shape size_attr(const Attrs& attrs, const char* name, std::initializer_list<std::size_t> ranks, const char* op);

// Input i's values as T, or n copies of `fallback` when the optional input is absent (gamma, beta).
template <class T>
std::vector<T> load_or(const KernelContext& ctx, std::size_t i, std::int64_t n, T fallback) {
  if (i < ctx.inputs.size() && ctx.inputs[i].data != nullptr) return load<T>(ctx.inputs[i], ctx);
  return std::vector<T>(static_cast<std::size_t>(n), fallback);
}

// Sum of f(0..n-1) over 8 interleaved lanes, then the lanes pairwise: a vector unit's order, whose
// f32 error grows far slower than one running sum's.
template <class T, class F>
T lane_sum(std::int64_t n, F f) {
  T lanes[8] = {};
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += f(j + l);
  }
  for (; j < n; ++j) lanes[j & 7] += f(j);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// Bytes of all inputs and outputs (the usual memory traffic of a streaming kernel).
double io_bytes(std::span<const TensorMeta> in, std::span<const TensorMeta> out);
// Bytes of the outputs: what a streaming kernel writes (KernelCost::bytes_written).
double out_bytes(std::span<const TensorMeta> out);
// Marks a softmax-like cost (softmax, log-softmax and their gradients): passes over each row (max,
// sum, normalise: stages and softmax_passes reads), precision-sensitive, its rows' partials
// combined across blocks (Note [Kernel cost terms] in cost_model.cpp).
void softmax_terms(KernelCost& c);
// A vector-unit cost with `flops_per_element` per output element.
KernelCost vector_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, double flops_per_element);

// ---- templates ----------------------------------------------------------------------------------
template <class T>
void load_into(const TensorView& v, const KernelContext& ctx, T* dst) {
  if constexpr (sizeof(T) == 4) {
    load_f32(v, dst);
  } else {
    load_f64(v, dst);
  }
  if (ctx.backend == Backend::kNpu && ctx.compute_dtype != v.dtype && is_floating(v.dtype) &&
      dtype_size(ctx.compute_dtype) < dtype_size(v.dtype)) {
    round_in_place(dst, v.numel, ctx.compute_dtype);
  }
}

template <class T>
std::vector<T> load(const TensorView& v, const KernelContext& ctx) {
  std::vector<T> out(static_cast<std::size_t>(v.numel));
  load_into(v, ctx, out.data());
  return out;
}

void apply_overflow_mode(float* data, std::int64_t n, DType dtype, KernelContext& ctx);
void apply_overflow_mode(double* data, std::int64_t n, DType dtype, KernelContext& ctx);

// Results a kernel wrote straight into the output's own f32 (float) or f64 (double) memory, where
// store<T> would round nothing (the CPU, or the NPU computing in the output's dtype): the flags and
// overflow mode store<T> would apply, in one scan (the overflow mode runs only on a non-finite value).
void finish_in_place(float* data, std::int64_t n, KernelContext& ctx);
void finish_in_place(double* data, std::int64_t n, KernelContext& ctx);
// Whether the bytes of `a` and `b` overlap.
bool views_overlap(const TensorView& a, const TensorView& b);
// Whether a kernel may read `in` in place while writing `out` element by element in step with it:
// they are disjoint, or the same memory with the same element size.
bool in_step(const TensorView& in, const TensorView& out);

// NPU f16/bf16 output computed in its own dtype: one bulk conversion, then the overflow mode applied
// to the result bits. Same bits and flags as rounding, clamping and converting in three passes: a
// value is non-finite after conversion exactly when its rounded value is.
void store_narrow(const TensorView& v, const float* src, KernelContext& ctx);

template <class T>
void store(const TensorView& v, T* src, KernelContext& ctx) {
  if constexpr (std::is_same_v<T, float>) {
    if (ctx.backend == Backend::kNpu && (v.dtype == DType::kF16 || v.dtype == DType::kBF16) &&
        ctx.compute_dtype == v.dtype) {
      store_narrow(v, src, ctx);
      return;
    }
  }
  if (ctx.backend == Backend::kNpu && is_floating(v.dtype)) {
    const DType narrow = dtype_size(ctx.compute_dtype) < dtype_size(v.dtype) ? ctx.compute_dtype : v.dtype;
    round_counting_underflow(src, v.numel, narrow, ctx);
    apply_overflow_mode(src, v.numel, narrow, ctx);
  }
  bool nonfinite;
  if constexpr (sizeof(T) == 4) {
    nonfinite = store_f32_raw(v, src);
  } else {
    nonfinite = store_f64_raw(v, src);
  }
  if (nonfinite) ctx.overflow = true;
  if (ctx.backend == Backend::kCpu && (v.dtype == DType::kF16 || v.dtype == DType::kBF16)) {
    count_stored_underflow(v, src, ctx);  // the CPU narrows in the conversion itself
  }
}

// The element-wise maps (unary_kernel, binary_kernel) live in elementwise_map.h.

}  // namespace npuscope::emulator::kernels
