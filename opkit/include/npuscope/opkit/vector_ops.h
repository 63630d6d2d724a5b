// Vector instructions on UB tensors, the count form of Ascend C's API (the first `count` elements).
// Each element is computed in f32 (integers in 64-bit) and rounded to the tensor's dtype, as the
// vector unit stores it; an f16 result beyond 65504 is inf (inf_nan mode) or 65504 (saturation), and
// the launch records the overflow. Costs: Note [Pipe costs].
#pragma once

#include <cstdint>
#include <source_location>

#include "npuscope/opkit/tensor.h"

namespace npuscope::opkit {

enum class BinaryOp : std::uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin };
enum class ScalarOp : std::uint8_t { kAdds, kMuls, kMaxs, kMins };
enum class UnaryOp : std::uint8_t { kExp, kLn, kAbs, kSqrt, kRelu, kReciprocal, kRsqrt, kTanh };
enum class ReduceOp : std::uint8_t { kSum, kMax, kMin };

namespace detail {
void vec_binary(BinaryOp op, DType t, const LocalRef& dst, const LocalRef& a, const LocalRef& b, std::uint32_t count,
                const std::source_location& loc);
void vec_scalar(ScalarOp op, DType t, const LocalRef& dst, const LocalRef& src, double scalar, std::uint32_t count,
                const std::source_location& loc);
void vec_unary(UnaryOp op, DType t, const LocalRef& dst, const LocalRef& src, std::uint32_t count,
               const std::source_location& loc);
void vec_duplicate(DType t, const LocalRef& dst, double value, std::uint32_t count, const std::source_location& loc);
void vec_cast(DType dst_t, DType src_t, const LocalRef& dst, const LocalRef& src, RoundMode mode, std::uint32_t count,
              const std::source_location& loc);
void vec_reduce(ReduceOp op, DType t, const LocalRef& dst, const LocalRef& src, const LocalRef& work,
                std::uint32_t count, const std::source_location& loc);
void vec_compare(DType t, const LocalRef& dst, const LocalRef& a, const LocalRef& b, CMPMODE mode, std::uint32_t count,
                 const std::source_location& loc);
void vec_select(DType t, const LocalRef& dst, const LocalRef& mask, const LocalRef& a, const LocalRef& b,
                std::uint32_t count, const std::source_location& loc);
}  // namespace detail

#define NPUSCOPE_OPKIT_BINARY(Name, op)                                                                       \
  template <class T>                                                                                          \
  void Name(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, std::uint32_t count, \
            std::source_location loc = std::source_location::current()) {                                     \
    detail::vec_binary(op, dtype_of<T>(), dst.ref(), a.ref(), b.ref(), count, loc);                           \
  }
NPUSCOPE_OPKIT_BINARY(Add, BinaryOp::kAdd)
NPUSCOPE_OPKIT_BINARY(Sub, BinaryOp::kSub)
NPUSCOPE_OPKIT_BINARY(Mul, BinaryOp::kMul)
NPUSCOPE_OPKIT_BINARY(Div, BinaryOp::kDiv)
NPUSCOPE_OPKIT_BINARY(Max, BinaryOp::kMax)
NPUSCOPE_OPKIT_BINARY(Min, BinaryOp::kMin)
#undef NPUSCOPE_OPKIT_BINARY

#define NPUSCOPE_OPKIT_SCALAR(Name, op)                                                                          \
  template <class T, class S>                                                                                    \
  void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, S scalar, std::uint32_t count,                 \
            std::source_location loc = std::source_location::current()) {                                        \
    detail::vec_scalar(op, dtype_of<T>(), dst.ref(), src.ref(), static_cast<double>(static_cast<float>(scalar)), \
                       count, loc);                                                                              \
  }
NPUSCOPE_OPKIT_SCALAR(Adds, ScalarOp::kAdds)
NPUSCOPE_OPKIT_SCALAR(Muls, ScalarOp::kMuls)
NPUSCOPE_OPKIT_SCALAR(Maxs, ScalarOp::kMaxs)
NPUSCOPE_OPKIT_SCALAR(Mins, ScalarOp::kMins)
#undef NPUSCOPE_OPKIT_SCALAR

#define NPUSCOPE_OPKIT_UNARY(Name, op)                                                 \
  template <class T>                                                                   \
  void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, std::uint32_t count, \
            std::source_location loc = std::source_location::current()) {              \
    detail::vec_unary(op, dtype_of<T>(), dst.ref(), src.ref(), count, loc);            \
  }
NPUSCOPE_OPKIT_UNARY(Exp, UnaryOp::kExp)
NPUSCOPE_OPKIT_UNARY(Ln, UnaryOp::kLn)
NPUSCOPE_OPKIT_UNARY(Abs, UnaryOp::kAbs)
NPUSCOPE_OPKIT_UNARY(Sqrt, UnaryOp::kSqrt)
NPUSCOPE_OPKIT_UNARY(Relu, UnaryOp::kRelu)
NPUSCOPE_OPKIT_UNARY(Reciprocal, UnaryOp::kReciprocal)
NPUSCOPE_OPKIT_UNARY(Rsqrt, UnaryOp::kRsqrt)
NPUSCOPE_OPKIT_UNARY(Tanh, UnaryOp::kTanh)
#undef NPUSCOPE_OPKIT_UNARY

template <class T, class S>
void Duplicate(const LocalTensor<T>& dst, S value, std::uint32_t count,
               std::source_location loc = std::source_location::current()) {
  detail::vec_duplicate(dtype_of<T>(), dst.ref(), static_cast<double>(value), count, loc);
}

template <class D, class S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, std::uint32_t count,
          std::source_location loc = std::source_location::current()) {
  detail::vec_cast(dtype_of<D>(), dtype_of<S>(), dst.ref(), src.ref(), mode, count, loc);
}

// dst[0] = the sum / max / min of src[0, count); work is scratch of at least `count` elements.
#define NPUSCOPE_OPKIT_REDUCE(Name, op)                                                                            \
  template <class T>                                                                                               \
  void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, std::uint32_t count, \
            std::source_location loc = std::source_location::current()) {                                          \
    detail::vec_reduce(op, dtype_of<T>(), dst.ref(), src.ref(), work.ref(), count, loc);                           \
  }
NPUSCOPE_OPKIT_REDUCE(ReduceSum, ReduceOp::kSum)
NPUSCOPE_OPKIT_REDUCE(ReduceMax, ReduceOp::kMax)
NPUSCOPE_OPKIT_REDUCE(ReduceMin, ReduceOp::kMin)
#undef NPUSCOPE_OPKIT_REDUCE

// dst (uint8, one bit per element, element i in bit i % 8 of byte i / 8) = a <mode> b.
template <class T>
void Compare(const LocalTensor<std::uint8_t>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode,
             std::uint32_t count, std::source_location loc = std::source_location::current()) {
  detail::vec_compare(dtype_of<T>(), dst.ref(), a.ref(), b.ref(), mode, count, loc);
}
// dst[i] = bit i of mask ? a[i] : b[i] (Ascend C's VSEL_TENSOR_TENSOR_MODE).
template <class T>
void Select(const LocalTensor<T>& dst, const LocalTensor<std::uint8_t>& mask, const LocalTensor<T>& a,
            const LocalTensor<T>& b, std::uint32_t count, std::source_location loc = std::source_location::current()) {
  detail::vec_select(dtype_of<T>(), dst.ref(), mask.ref(), a.ref(), b.ref(), count, loc);
}

}  // namespace npuscope::opkit
