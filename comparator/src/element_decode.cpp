// Element decoding for the metrics kernel. Loops are plain element-wise conversions the compiler
// vectorises; f16 uses F16C (VCVTPH2PS) when the CPU has it and the exact software decoder otherwise.
#include "element_decode.h"

#include <immintrin.h>

#include <cstring>

#include "npuscope/runtime_hooks/half_bits.h"

namespace npuscope::comparator {

namespace {

// Element i of a raw buffer: memcpy, as dumped buffers carry no alignment promise.
template <class T>
T load(const unsigned char* base, std::size_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}

float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

__attribute__((target("f16c,avx"))) void half_to_float_f16c(const unsigned char* src, std::size_t count, float* out) {
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < count; ++i) out[i] = hooks::half_bits_to_float(load<std::uint16_t>(src, i));
}

void half_to_float(const unsigned char* src, std::size_t count, float* out) {
  if (hooks::cpu_has_f16c()) return half_to_float_f16c(src, count, out);
  for (std::size_t i = 0; i < count; ++i) out[i] = hooks::half_bits_to_float(load<std::uint16_t>(src, i));
}

// The conversions shared by both output types; Out is float or double.
template <class Out>
void decode_common(const unsigned char* src, DType dtype, std::size_t count, Out* out) {
  switch (dtype) {
    case DType::kF32:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(load<float>(src, i));
      return;
    case DType::kBF16:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(bf16_to_float(load<std::uint16_t>(src, i)));
      return;
    case DType::kI8:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(static_cast<std::int8_t>(src[i]));
      return;
    case DType::kU8:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(src[i]);
      return;
    case DType::kBool:
      for (std::size_t i = 0; i < count; ++i) out[i] = src[i] != 0 ? Out(1) : Out(0);
      return;
    case DType::kI32:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(load<std::int32_t>(src, i));
      return;
    case DType::kI64:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(load<std::int64_t>(src, i));
      return;
    case DType::kF64:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(load<double>(src, i));
      return;
    case DType::kF16: break;  // the callers decode f16 themselves
  }
}

}  // namespace

bool fits_float(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kI8:
    case DType::kU8:
    case DType::kBool: return true;
    case DType::kI32:
    case DType::kI64:
    case DType::kF64: return false;
  }
  return false;
}

void decode_block(const void* data, DType dtype, std::size_t first, std::size_t count, float* out) {
  const auto* src = static_cast<const unsigned char*>(data) + first * dtype_size(dtype);
  if (dtype == DType::kF16) return half_to_float(src, count, out);
  decode_common(src, dtype, count, out);
}

void decode_block(const void* data, DType dtype, std::size_t first, std::size_t count, double* out) {
  const auto* src = static_cast<const unsigned char*>(data) + first * dtype_size(dtype);
  if (dtype != DType::kF16) return decode_common(src, dtype, count, out);
  // f16 against an i32/i64/f64 side, a rare pair: through floats, a chunk on the stack at a time.
  constexpr std::size_t kChunk = 256;
  float tmp[kChunk];
  for (std::size_t done = 0; done < count; done += kChunk) {
    const std::size_t n = count - done < kChunk ? count - done : kChunk;
    half_to_float(src + 2 * done, n, tmp);
    for (std::size_t i = 0; i < n; ++i) out[done + i] = tmp[i];
  }
}

}  // namespace npuscope::comparator
