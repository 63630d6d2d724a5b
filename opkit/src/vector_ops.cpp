// The vector unit: each instruction checks its operands, computes in f32 (integers in 64 bits), rounds
// to the tensor's dtype and costs its cycles on the Vector pipe (Note [Pipe costs]). Floating results
// go through float buffers of kChunk elements, converted in bulk (F16C for f16).
#include "npuscope/opkit/vector_ops.h"
#include "npuscope/emulator/dtype.h"

#include "vector_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace npuscope::opkit::detail {

namespace {

constexpr std::size_t kChunk = 1024;

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

void finish(BlockState& b, const LocalRef& dst, std::uint64_t dst_bytes, std::uint64_t operand_bytes,
            bool transcendental, const char* name, const std::source_location& loc) {
  b.mark_written(Memory::kUB, dst.offset, dst_bytes);
  b.issue(Pipe::kVector, name, vector_cycles(operand_bytes, transcendental), operand_bytes, loc);
}

// Note [Vector Exp]
// e^x as Cephes' expf computes it (within 1 ulp of f32 on [-87.3, 88.7]): n = round(x / ln 2),
// r = x - n ln 2 in two parts, a degree-6 polynomial for e^r, times 2^n built in the exponent bits.
// Written without branches so that the compiler vectorises the loop over a tile; std::exp is a
// scalar call per element and was half the GELU sample's vector time. Below -87.3 the result is 0
// (the f32 subnormals a real vector unit flushes too), above 88.7 it is inf, NaN stays NaN.
inline float vector_exp(float x) {
  const float xc = std::min(std::max(x, -87.3f), 88.7f);
  const float t = xc * 1.44269504088896341f;
  const auto n = static_cast<std::int32_t>(t + std::copysign(0.5f, t));
  const auto nf = static_cast<float>(n);
  float r = xc - nf * 0.693359375f;
  r = r + nf * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const std::uint32_t bits = static_cast<std::uint32_t>(n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float result = p * scale;
  result = x > 88.7f ? std::numeric_limits<float>::infinity() : result;
  result = x < -87.3f ? 0.0f : result;
  return x != x ? x : result;
}

// ---- f32 views of floating tensors --------------------------------------------------------------

template <class T>
const float* load(const T* src, float* buf, std::size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return src;
  } else if constexpr (std::is_same_v<T, half>) {
    emulator::half_to_float_n(reinterpret_cast<const std::uint16_t*>(src), buf, n);
    return buf;
  } else {
    emulator::bf16_to_float_n(reinterpret_cast<const std::uint16_t*>(src), buf, n);
    return buf;
  }
}

template <class T>
float max_finite() {
  return static_cast<float>(emulator::dtype_max(dtype_of<T>()));
}

// Stores f32 results as T; `suspect` says some result is beyond T's range or NaN (the compute loops
// find it in the same pass): then a non-finite result is an overflow, clamped in saturation mode.
template <class T>
void store(BlockState& b, float* r, T* dst, std::size_t n, bool suspect) {
  if (suspect) [[unlikely]] {
    for (std::size_t i = 0; i < n; ++i) {
      const float rounded = static_cast<float>(T(r[i]));
      if (!std::isfinite(rounded)) r[i] = b.overflowed(rounded, dtype_of<T>());
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (r != dst) std::memcpy(dst, r, n * sizeof(float));
  } else if constexpr (std::is_same_v<T, half>) {
    emulator::float_to_half_n(r, reinterpret_cast<std::uint16_t*>(dst), n);
  } else {
    emulator::float_to_bf16_n(r, reinterpret_cast<std::uint16_t*>(dst), n);
  }
}

// f32 results are computed straight into the destination (an element is read before it is
// written, so an in-place instruction is fine); f16/bf16 ones through a float chunk.
template <class T, class F>
void map1(BlockState& b, T* dst, const T* src, std::size_t n, F f) {
  float in[kChunk], out[kChunk];
  for (std::size_t i = 0; i < n; i += kChunk) {
    const std::size_t m = std::min(kChunk, n - i);
    const float* x = load(src + i, in, m);
    float* r = out;
    if constexpr (std::is_same_v<T, float>) r = dst + i;
    const float limit = max_finite<T>();
    int suspect = 0;  // an int: GCC 12 does not vectorise a bool reduction
    for (std::size_t j = 0; j < m; ++j) {
      r[j] = f(x[j]);
      suspect |= !(std::fabs(r[j]) <= limit) ? 1 : 0;
    }
    store(b, r, dst + i, m, suspect != 0);
  }
}

template <class T, class F>
void map2(BlockState& b, T* dst, const T* a, const T* c, std::size_t n, F f) {
  float ina[kChunk], inc[kChunk], out[kChunk];
  for (std::size_t i = 0; i < n; i += kChunk) {
    const std::size_t m = std::min(kChunk, n - i);
    const float* x = load(a + i, ina, m);
    const float* y = load(c + i, inc, m);
    float* r = out;
    if constexpr (std::is_same_v<T, float>) r = dst + i;
    const float limit = max_finite<T>();
    int suspect = 0;
    for (std::size_t j = 0; j < m; ++j) {
      r[j] = f(x[j], y[j]);
      suspect |= !(std::fabs(r[j]) <= limit) ? 1 : 0;
    }
    store(b, r, dst + i, m, suspect != 0);
  }
}

template <class T>
void int_map1(T* dst, const T* src, std::size_t n, auto f) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(f(static_cast<std::int64_t>(src[i])));
}
template <class T>
void int_map2(T* dst, const T* a, const T* c, std::size_t n, auto f) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = static_cast<T>(f(static_cast<std::int64_t>(a[i]), static_cast<std::int64_t>(c[i])));
}

// Calls fn(T{}) for the dtype, or reports it unsupported. `ints` allows int32.
template <class Fn>
bool by_dtype(BlockState& b, DType t, bool ints, const char* name, const std::source_location& loc, Fn&& fn) {
  switch (t) {
    case DType::kF16: fn(half{}); return true;
    case DType::kBF16: fn(bfloat16_t{}); return true;
    case DType::kF32: fn(float{}); return true;
    case DType::kI32:
      if (ints) {
        fn(std::int32_t{});
        return true;
      }
      break;
    default: break;
  }
  return b.fail(Check::kBadArgument, name, loc, "the vector unit has no " + dtype_str(t) + " form of this instruction");
}

template <class T>
constexpr bool kIsInt = std::is_integral_v<T>;

const char* binary_name(BinaryOp op) {
  static constexpr const char* kNames[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  return kNames[static_cast<int>(op)];
}
const char* scalar_name(ScalarOp op) {
  static constexpr const char* kNames[] = {"Adds", "Muls", "Maxs", "Mins"};
  return kNames[static_cast<int>(op)];
}
const char* unary_name(UnaryOp op) {
  static constexpr const char* kNames[] = {"Exp", "Ln", "Abs", "Sqrt", "Relu", "Reciprocal", "Rsqrt", "Tanh"};
  return kNames[static_cast<int>(op)];
}

}  // namespace

void vec_binary(BinaryOp op, DType t, const LocalRef& dst, const LocalRef& a, const LocalRef& b2, std::uint32_t count,
                const std::source_location& loc) {
  const char* name = binary_name(op);
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  const std::uint64_t bytes = std::uint64_t{count} * dtype_size(t);
  if (!count_ok(b, count, name, loc) || !operand_ok(b, a, bytes, true, name, loc, "src0") ||
      !operand_ok(b, b2, bytes, true, name, loc, "src1") || !operand_ok(b, dst, bytes, false, name, loc, "dst"))
    return;
  by_dtype(b, t, op != BinaryOp::kDiv, name, loc, [&](auto tag) {
    using T = decltype(tag);
    auto* d = reinterpret_cast<T*>(dst.bytes());
    const auto* x = reinterpret_cast<const T*>(a.bytes());
    const auto* y = reinterpret_cast<const T*>(b2.bytes());
    auto run = [&](auto f) {
      if constexpr (kIsInt<T>)
        int_map2(d, x, y, count, f);
      else
        map2(b, d, x, y, count, f);
    };
    switch (op) {
      case BinaryOp::kAdd: run([](auto p, auto q) { return p + q; }); break;
      case BinaryOp::kSub: run([](auto p, auto q) { return p - q; }); break;
      case BinaryOp::kMul: run([](auto p, auto q) { return p * q; }); break;
      case BinaryOp::kDiv: run([](auto p, auto q) { return p / q; }); break;
      case BinaryOp::kMax: run([](auto p, auto q) { return p > q ? p : q; }); break;
      case BinaryOp::kMin: run([](auto p, auto q) { return p < q ? p : q; }); break;
    }
  });
  finish(b, dst, bytes, bytes, op == BinaryOp::kDiv, name, loc);
}

void vec_scalar(ScalarOp op, DType t, const LocalRef& dst, const LocalRef& src, double scalar, std::uint32_t count,
                const std::source_location& loc) {
  const char* name = scalar_name(op);
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  const std::uint64_t bytes = std::uint64_t{count} * dtype_size(t);
  if (!count_ok(b, count, name, loc) || !operand_ok(b, src, bytes, true, name, loc, "src") ||
      !operand_ok(b, dst, bytes, false, name, loc, "dst"))
    return;
  by_dtype(b, t, true, name, loc, [&](auto tag) {
    using T = decltype(tag);
    auto* d = reinterpret_cast<T*>(dst.bytes());
    const auto* x = reinterpret_cast<const T*>(src.bytes());
    // The scalar is held in the tensor's dtype, as the instruction's scalar register holds it.
    using C = std::conditional_t<kIsInt<T>, std::int64_t, float>;
    const C s = kIsInt<T> ? static_cast<C>(scalar) : static_cast<C>(static_cast<float>(T(static_cast<float>(scalar))));
    auto run = [&](auto f) {
      if constexpr (kIsInt<T>)
        int_map1(d, x, count, f);
      else
        map1(b, d, x, count, f);
    };
    switch (op) {
      case ScalarOp::kAdds: run([s](auto p) { return p + s; }); break;
      case ScalarOp::kMuls: run([s](auto p) { return p * s; }); break;
      case ScalarOp::kMaxs: run([s](auto p) { return p > s ? p : s; }); break;
      case ScalarOp::kMins: run([s](auto p) { return p < s ? p : s; }); break;
    }
  });
  finish(b, dst, bytes, bytes, false, name, loc);
}

void vec_unary(UnaryOp op, DType t, const LocalRef& dst, const LocalRef& src, std::uint32_t count,
               const std::source_location& loc) {
  const char* name = unary_name(op);
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  const std::uint64_t bytes = std::uint64_t{count} * dtype_size(t);
  if (!count_ok(b, count, name, loc) || !operand_ok(b, src, bytes, true, name, loc, "src") ||
      !operand_ok(b, dst, bytes, false, name, loc, "dst"))
    return;
  const bool ints = op == UnaryOp::kAbs || op == UnaryOp::kRelu;
  by_dtype(b, t, ints, name, loc, [&](auto tag) {
    using T = decltype(tag);
    auto* d = reinterpret_cast<T*>(dst.bytes());
    const auto* x = reinterpret_cast<const T*>(src.bytes());
    if constexpr (kIsInt<T>) {
      if (op == UnaryOp::kAbs)
        int_map1(d, x, count, [](std::int64_t p) { return p < 0 ? -p : p; });
      else
        int_map1(d, x, count, [](std::int64_t p) { return p > 0 ? p : 0; });
    } else {
      switch (op) {
        case UnaryOp::kExp: map1(b, d, x, count, [](float p) { return vector_exp(p); }); break;
        case UnaryOp::kLn: map1(b, d, x, count, [](float p) { return std::log(p); }); break;
        case UnaryOp::kAbs: map1(b, d, x, count, [](float p) { return std::fabs(p); }); break;
        case UnaryOp::kSqrt: map1(b, d, x, count, [](float p) { return std::sqrt(p); }); break;
        case UnaryOp::kRelu: map1(b, d, x, count, [](float p) { return p > 0.0f ? p : 0.0f; }); break;
        case UnaryOp::kReciprocal: map1(b, d, x, count, [](float p) { return 1.0f / p; }); break;
        case UnaryOp::kRsqrt: map1(b, d, x, count, [](float p) { return 1.0f / std::sqrt(p); }); break;
        case UnaryOp::kTanh: map1(b, d, x, count, [](float p) { return std::tanh(p); }); break;
      }
    }
  });
  const bool transcendental = !(op == UnaryOp::kAbs || op == UnaryOp::kRelu);
  finish(b, dst, bytes, bytes, transcendental, name, loc);
}

void vec_duplicate(DType t, const LocalRef& dst, double value, std::uint32_t count, const std::source_location& loc) {
  constexpr const char* kName = "Duplicate";
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  const std::uint64_t bytes = std::uint64_t{count} * dtype_size(t);
  if (!count_ok(b, count, kName, loc) || !operand_ok(b, dst, bytes, false, kName, loc, "dst")) return;
  by_dtype(b, t, true, kName, loc, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (kIsInt<T>)
      v = static_cast<T>(value);
    else
      v = T(static_cast<float>(value));
    std::fill_n(reinterpret_cast<T*>(dst.bytes()), count, v);
  });
  finish(b, dst, bytes, bytes, false, kName, loc);
}

}  // namespace npuscope::opkit::detail
