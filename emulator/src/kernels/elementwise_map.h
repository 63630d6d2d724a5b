// The element-wise maps: unary_kernel (the activations and math functions) and binary_kernel with
// numpy broadcasting (Add, Sub, Mul, Div, Pow, the logic and comparison ops, the gradients that take
// two operands).
//
// Note [Blocked element-wise maps]
// binary_kernel used to load both inputs into vectors of their own (broadcast through an int64 index
// per element), compute a third vector and store it through store<T> (a rounding pass, an overflow
// pass and a converting copy): seven passes over memory and three fresh buffers, 158 ms for an Add
// of two 11.7 M-element f32 tensors where PyTorch takes 16 ms. It now walks the output in blocks of
// kMapBlock elements that stay in L1: each operand hands over its block (BlockOperand), the functor
// fills a result block, and the result block is stored through the same store<T> on a sub-view of the
// output — or, when the NPU computes f32 into f32, written into the output and checked there (the
// same values and flags as store<float>; see Note [Direct f32 maps] in fused_util.h). Every load, rounding,
// overflow and conversion step is element-wise, and the flags are only ever raised, so the blocked
// map gives the same bits and the same flags as the whole-tensor one, on both backends (that Add:
// 16 ms; with a [1000] row broadcast: 10 ms instead of 458; f16: 14 ms instead of 181, see
// bench/training_ops_bench.cpp). unary_kernel (a ReLU over every activation) is the same map with one
// operand.
//
// An operand reaches a block in one of three ways:
//   direct   the input's own memory (its dtype is the compute type T and the NPU leaves it unrounded)
//   convert  load_into on the block's sub-view (another dtype, or rounded to a narrower compute dtype)
//   expand   a broadcast input, loaded whole once (it is small), spread over the block: an input that
//            covers a run of the output's dims (a scalar, a row, a [1, C, 1, 1] channel vector) by
//            runs, any other broadcast through the index of each element
// Aliasing (Note [Aliasing outputs] in fused_util.h): an input with the output's shape that starts at
// the output's address and has its element size is read block by block, each block entirely before
// that block of the output is written; an input that overlaps the output in any other way is loaded
// whole first, as an expanded operand.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

constexpr std::int64_t kMapBlock = 1024;

// The view of elements [i0, i0 + m) of a contiguous view; `shape` holds its 1-D shape.
TensorView block_view(const TensorView& v, std::int64_t i0, std::int64_t m, Shape& shape);

// Input element of output element i: (i / inner) % mid when the input covers the output dims
// [d0, d1) and is 1 (or absent) on the others (inner: the product of the dims after d1).
struct RunBroadcast {
  bool fits = false;
  std::int64_t inner = 1, mid = 1;
};
RunBroadcast run_broadcast(const Shape& input, const Shape& output);

// One input of a blocked map, as the compute type T (float or double). See Note [Blocked element-wise maps].
template <class T>
class BlockOperand {
 public:
  BlockOperand(const TensorView& in, const TensorView& out, const KernelContext& ctx) : in_(in), ctx_(ctx) {
    const bool same_shape = *in.shape == *out.shape;
    if (same_shape && in_step(in, out)) {
      constexpr DType kType = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
      const bool rounded =
          ctx.backend == Backend::kNpu && is_floating(in.dtype) && dtype_size(ctx.compute_dtype) < dtype_size(in.dtype);
      kind_ = in.dtype == kType && !rounded ? Kind::kDirect : Kind::kConvert;
      return;
    }
    whole_ = load<T>(in, ctx);
    run_ = same_shape ? RunBroadcast{true, 1, in.numel} : run_broadcast(*in.shape, *out.shape);
    if (!run_.fits) BroadcastIndex(*in.shape, *out.shape).fill(index_);
    kind_ = Kind::kExpand;
  }

  // The m values of output elements [i0, i0 + m); `scratch` holds kMapBlock values.
  const T* block(std::int64_t i0, std::int64_t m, T* scratch) const {
    switch (kind_) {
      case Kind::kDirect: return reinterpret_cast<const T*>(in_.data) + i0;
      case Kind::kConvert: {
        Shape shape;
        load_into<T>(block_view(in_, i0, m, shape), ctx_, scratch);
        return scratch;
      }
      case Kind::kExpand: expand(i0, m, scratch); return scratch;
    }
    return scratch;
  }

 private:
  enum class Kind { kDirect, kConvert, kExpand };

  void expand(std::int64_t i0, std::int64_t m, T* dst) const {
    if (!run_.fits) {
      for (std::int64_t j = 0; j < m; ++j) dst[j] = whole_[static_cast<std::size_t>(index_[i0 + j])];
      return;
    }
    // Runs of one input element (inner > 1) or of consecutive input elements (inner = 1).
    for (std::int64_t i = i0, end = i0 + m; i < end;) {
      const std::int64_t q = i / run_.inner, at = q % run_.mid;
      if (run_.inner == 1) {
        const std::int64_t len = std::min(run_.mid - at, end - i);
        std::copy_n(whole_.data() + at, len, dst + (i - i0));
        i += len;
      } else {
        const std::int64_t len = std::min((q + 1) * run_.inner, end) - i;
        std::fill_n(dst + (i - i0), len, whole_[static_cast<std::size_t>(at)]);
        i += len;
      }
    }
  }

  const TensorView& in_;
  const KernelContext& ctx_;
  Kind kind_ = Kind::kExpand;
  std::vector<T> whole_;
  RunBroadcast run_;
  std::vector<std::int64_t> index_;
};

// Writes result blocks to output 0: directly when f32 is computed into f32 (on the NPU the overflow
// mode then applied to the block in place), else through store<T> on the block's sub-view.
template <class T>
class BlockStore {
 public:
  BlockStore(const TensorView& out, KernelContext& ctx) : out_(out), ctx_(ctx) {
    if constexpr (std::is_same_v<T, float>) {
      // The CPU rounds nothing into f32: store<float> would copy and scan, finish_in_place scans.
      direct_ = out.dtype == DType::kF32 && (ctx.backend == Backend::kCpu || ctx.compute_dtype == DType::kF32);
    }
  }

  // Where the results of block i0 go: the output itself when direct (an element is read before it
  // is written, so an in-step alias stays right), else `scratch`.
  T* target(std::int64_t i0, T* scratch) const { return direct_ ? out_.as<T>() + i0 : scratch; }

  // Stores the m results at r (from target()).
  void put(std::int64_t i0, std::int64_t m, T* r) {
    if (!direct_) {
      Shape shape;
      store<T>(block_view(out_, i0, m, shape), r, ctx_);
      return;
    }
    finish_in_place(r, m, ctx_);
  }

 private:
  const TensorView& out_;
  KernelContext& ctx_;
  bool direct_ = false;
};

// Element-wise unary kernel over T with a block functor g(const T* a, T* r, m) that sets r[j] from
// a[j] for j < m (a and r may be the same memory); output 0 may alias the input. See Note [Blocked
// element-wise maps].
template <class T, class G>
void unary_block_kernel(KernelContext& ctx, G g) {
  const TensorView& out = ctx.outputs[0];
  const BlockOperand<T> a(ctx.inputs[0], out, ctx);
  BlockStore<T> st(out, ctx);
  T abuf[kMapBlock], r[kMapBlock];
  for (std::int64_t i0 = 0; i0 < out.numel; i0 += kMapBlock) {
    const std::int64_t m = std::min(kMapBlock, out.numel - i0);
    const T* pa = a.block(i0, m, abuf);
    T* pr = st.target(i0, r);
    g(pa, pr, m);
    st.put(i0, m, pr);
  }
}

// Element-wise unary kernel over T with functor f(T) -> T; output 0 may alias the input.
template <class T, class F>
void unary_kernel(KernelContext& ctx, F f) {
  unary_block_kernel<T>(ctx, [&f](const T* a, T* r, std::int64_t m) {
    for (std::int64_t j = 0; j < m; ++j) r[j] = f(a[j]);
  });
}

// Element-wise binary kernel over T with functor f(T, T) -> T and numpy broadcasting; output 0 may
// alias an input. See Note [Blocked element-wise maps].
template <class T, class F>
void binary_kernel(KernelContext& ctx, F f) {
  const TensorView& out = ctx.outputs[0];
  const BlockOperand<T> a(ctx.inputs[0], out, ctx), b(ctx.inputs[1], out, ctx);
  BlockStore<T> st(out, ctx);
  T abuf[kMapBlock], bbuf[kMapBlock], r[kMapBlock];
  for (std::int64_t i0 = 0; i0 < out.numel; i0 += kMapBlock) {
    const std::int64_t m = std::min(kMapBlock, out.numel - i0);
    const T* pa = a.block(i0, m, abuf);
    const T* pb = b.block(i0, m, bbuf);
    T* pr = st.target(i0, r);
    for (std::int64_t j = 0; j < m; ++j) pr[j] = f(pa[j], pb[j]);
    st.put(i0, m, pr);
  }
}

// Note [Golden maps in f32]
// The CPU golden computes element-wise ops in f64 and rounds each result once to the output dtype.
// For +, -, *, / and sqrt of f32 operands into an f32 output that is, bit for bit, the f32 operation
// itself: each is correctly rounded in IEEE arithmetic, and rounding the correctly rounded f64 result
// to f32 gives the correctly rounded f32 result, because 53 >= 2 * 24 + 2 (S. Figueroa, "When is
// double rounding innocuous?", SIGNUM 1995; subnormal results included). Ops that are exact (neg,
// abs, relu, x * x of an f32) are the same in either. So when every operand and the output are f32,
// such a map runs over float (ieee_unary_kernel, ieee_binary_kernel): no widening and narrowing pass
// per block, twice the lanes, the same bits and the same overflow flag (an f32 result out of range is
// inf either way). It was a third of the golden's element-wise time on ConvNeXt. Maps whose f64
// result is better than f32 math (exp, erf, tanh, pow, rsqrt = two roundings in f32) stay in f64;
// reductions too (an f64 sum is not an f32 sum).

// Whether a CPU golden map (T = double) gives the same bits in float: every input and output 0 f32.
bool golden_runs_in_f32(const KernelContext& ctx);

// unary_kernel for f, one correctly rounded IEEE operation or an exact one, generic over float and
// double: runs in float where Note [Golden maps in f32] allows it.
template <class T, class F>
void ieee_unary_kernel(KernelContext& ctx, F f) {
  if constexpr (std::is_same_v<T, double>) {
    if (golden_runs_in_f32(ctx)) return unary_kernel<float>(ctx, f);
  }
  unary_kernel<T>(ctx, f);
}

// binary_kernel for f as ieee_unary_kernel says.
template <class T, class F>
void ieee_binary_kernel(KernelContext& ctx, F f) {
  if constexpr (std::is_same_v<T, double>) {
    if (golden_runs_in_f32(ctx)) return binary_kernel<float>(ctx, f);
  }
  binary_kernel<T>(ctx, f);
}

}  // namespace npuscope::emulator::kernels
