// See Note [Kernel numerics] in kernel_util.h.
#include "kernel_util.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "npuscope/emulator/float16.h"
#include "underflow_count.h"

namespace npuscope::emulator::kernels {
namespace {

// n values, each static_cast: a widening load, or a wrapping integer store.
template <class T, class Src>
void cast_n(const Src* src, T* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}

// f16 <-> f64 (the CPU golden's f16 tensors) through the bulk f32 converters, a block at a time:
// every f16 value is an f32 one, and a double goes to f32 first by round-to-odd (or, `odd` false,
// by a plain cast) so that the f16 rounding still happens once. The scalar routine per element
// took most of an f16 golden kernel's time.
constexpr std::int64_t kConvertBlock = 256;

void half_to_f64_n(const std::uint16_t* src, double* dst, std::int64_t n) {
  float block[kConvertBlock];
  for (std::int64_t i = 0; i < n; i += kConvertBlock) {
    const std::int64_t m = std::min(kConvertBlock, n - i);
    half_to_float_n(src + i, block, static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) dst[i + j] = block[j];
  }
}

void f64_to_half_n(const double* src, std::uint16_t* dst, std::int64_t n, bool odd) {
  float block[kConvertBlock];
  for (std::int64_t i = 0; i < n; i += kConvertBlock) {
    const std::int64_t m = std::min(kConvertBlock, n - i);
    for (std::int64_t j = 0; j < m; ++j) block[j] = odd ? round_to_f32_odd(src[i + j]) : static_cast<float>(src[i + j]);
    float_to_half_n(block, dst + i, static_cast<std::size_t>(m));
  }
}

template <class T>
void load_any(const TensorView& v, T* dst) {
  const std::int64_t n = v.numel;
  switch (v.dtype) {
    case DType::kF32: cast_n(v.as<float>(), dst, n); break;
    case DType::kF64: cast_n(v.as<double>(), dst, n); break;
    case DType::kF16:
      if constexpr (std::is_same_v<T, float>) {
        half_to_float_n(v.as<std::uint16_t>(), dst, static_cast<std::size_t>(n));
      } else {
        half_to_f64_n(v.as<std::uint16_t>(), dst, n);
      }
      break;
    case DType::kBF16:
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(bf16_bits_to_float(v.as<std::uint16_t>()[i]));
      break;
    case DType::kI8: cast_n(v.as<std::int8_t>(), dst, n); break;
    case DType::kU8: cast_n(v.as<std::uint8_t>(), dst, n); break;
    case DType::kI32: cast_n(v.as<std::int32_t>(), dst, n); break;
    case DType::kI64: cast_n(v.as<std::int64_t>(), dst, n); break;
    case DType::kBool: cast_n(v.as<std::uint8_t>(), dst, n); break;
  }
}

// Float -> integer as a cast: truncation toward zero, NaN -> 0, clamped to the type's range.
template <class I, class T>
I to_int(T x) {
  if (x != x) return 0;
  if (x <= static_cast<T>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (x >= static_cast<T>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

template <class I, class T>
void to_int_n(const T* src, I* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = to_int<I>(src[i]);
}

// True when some value is inf or NaN. The exponent bits are tested as integers: std::isfinite
// reduced into a flag does not vectorise, and the CPU golden's f32 stores scanned every result
// twice that way (16% of a MobileNetV2 forward on `cpu`).
template <class T>
bool any_nonfinite(const T* data, std::int64_t n) {
  using Bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
  constexpr Bits kExponent = std::is_same_v<T, float> ? Bits(0x7f800000u) : Bits(0x7ff0000000000000u);
  Bits bad = 0;
  for (std::int64_t i = 0; i < n; ++i)
    bad |= static_cast<Bits>((std::bit_cast<Bits>(data[i]) & kExponent) == kExponent);
  return bad != 0;
}

template <class T>
bool store_any(const TensorView& v, const T* src) {
  const std::int64_t n = v.numel;
  // f32: the stored values are scanned (an inf/NaN source stays one, and a finite double can overflow).
  bool nonfinite = is_floating(v.dtype) && v.dtype != DType::kF32 && any_nonfinite(src, n);
  switch (v.dtype) {
    case DType::kF32: {
      float* dst = v.as<float>();
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      nonfinite = any_nonfinite(dst, n);
      break;
    }
    case DType::kF64:
      for (std::int64_t i = 0; i < n; ++i) v.as<double>()[i] = static_cast<double>(src[i]);
      break;
    case DType::kF16: {
      auto* dst = v.as<std::uint16_t>();
      if constexpr (std::is_same_v<T, float>) {
        float_to_half_n(src, dst, static_cast<std::size_t>(n));
      } else {
        f64_to_half_n(src, dst, n, true);
      }
      for (std::int64_t i = 0; i < n && !nonfinite; ++i) nonfinite |= (dst[i] & 0x7c00u) == 0x7c00u;
      break;
    }
    case DType::kBF16: {
      auto* dst = v.as<std::uint16_t>();
      for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, float>) {
          dst[i] = float_to_bf16_bits(src[i]);
        } else {
          dst[i] = float_to_bf16_bits(round_to_f32_odd(src[i]));
        }
      }
      for (std::int64_t i = 0; i < n && !nonfinite; ++i) nonfinite |= (dst[i] & 0x7f80u) == 0x7f80u;
      break;
    }
    case DType::kI8: to_int_n(src, v.as<std::int8_t>(), n); break;
    case DType::kU8: to_int_n(src, v.as<std::uint8_t>(), n); break;
    case DType::kI32: to_int_n(src, v.as<std::int32_t>(), n); break;
    case DType::kI64: to_int_n(src, v.as<std::int64_t>(), n); break;
    case DType::kBool:
      for (std::int64_t i = 0; i < n; ++i) v.as<std::uint8_t>()[i] = src[i] != T(0) ? 1 : 0;
      break;
  }
  return nonfinite;
}

constexpr float kHalfMinNormal = 6.103515625e-05f;    // 2^-14
constexpr float kBf16MinNormal = 1.17549435082e-38f;  // 2^-126

// `count` non-null: results, counted as Note [Underflow counts] says.
template <class T>
void round_any(T* data, std::int64_t n, DType dtype, UnderflowCount* count) {
  switch (dtype) {
    case DType::kF16:
      if constexpr (std::is_same_v<T, float>) {
        // Blocks through the bulk (F16C) converters: the scalar round trip dominated f16 kernels.
        std::uint16_t bits[256];
        for (std::int64_t i = 0; i < n; i += 256) {
          const std::size_t m = static_cast<std::size_t>(std::min<std::int64_t>(256, n - i));
          float_to_half_n(data + i, bits, m);
          if (count != nullptr) count_narrowed(data + i, bits, m, true, *count);
          half_to_float_n(bits, data + i, m);
        }
      } else if (count != nullptr) {
        for (std::int64_t i = 0; i < n; ++i) {
          const float r = round_to_half(static_cast<float>(data[i]));
          count_narrowed_one(data[i], r, kHalfMinNormal, *count);
          data[i] = r;
        }
      } else {
        std::uint16_t bits[kConvertBlock];
        for (std::int64_t i = 0; i < n; i += kConvertBlock) {
          const std::int64_t m = std::min(kConvertBlock, n - i);
          f64_to_half_n(data + i, bits, m, false);
          half_to_f64_n(bits, data + i, m);
        }
      }
      break;
    case DType::kBF16:
      if (count != nullptr) {
        for (std::int64_t i = 0; i < n; ++i) {
          const float r = round_to_bf16(static_cast<float>(data[i]));
          count_narrowed_one(data[i], r, kBf16MinNormal, *count);
          data[i] = r;
        }
      } else {
        for (std::int64_t i = 0; i < n; ++i) data[i] = round_to_bf16(static_cast<float>(data[i]));
      }
      break;
    case DType::kF32:
      if constexpr (std::is_same_v<T, double>) {
        for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(data[i]);
      }
      break;
    default: break;
  }
}

void add_counts(const UnderflowCount& c, KernelContext& ctx) {
  ctx.underflow += c.flushed;
  ctx.subnormal += c.subnormal;
}

template <class T>
void round_counting_any(T* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) return round_any(data, n, dtype, nullptr);
  UnderflowCount c;
  round_any(data, n, dtype, &c);
  add_counts(c, ctx);
}

template <class T>
void count_stored_any(const TensorView& v, const T* src, KernelContext& ctx) {
  const bool half = v.dtype == DType::kF16;
  const auto* bits = v.as<std::uint16_t>();
  UnderflowCount c;
  if constexpr (std::is_same_v<T, float>) {
    count_narrowed(src, bits, static_cast<std::size_t>(v.numel), half, c);
  } else {
    const float min_normal = half ? kHalfMinNormal : kBf16MinNormal;
    for (std::int64_t i = 0; i < v.numel; ++i) {
      count_narrowed_one(src[i], half ? half_bits_to_float(bits[i]) : bf16_bits_to_float(bits[i]), min_normal, c);
    }
  }
  add_counts(c, ctx);
}

template <class T>
void overflow_any(T* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  if (!is_floating(dtype)) return;
  const T max = static_cast<T>(dtype_max(dtype));
  bool any = false, clamped = false;
  if (ctx.overflow_mode == OverflowMode::kSaturation) {
    for (std::int64_t i = 0; i < n; ++i) {
      T& x = data[i];
      if (x != x) {
        x = 0;
        clamped = true;
      } else if (x > max) {
        x = max;
        clamped = true;
      } else if (x < -max) {
        x = -max;
        clamped = true;
      }
    }
    any = clamped;
  } else {
    for (std::int64_t i = 0; i < n; ++i) any |= !std::isfinite(data[i]);
  }
  if (any) ctx.overflow = true;
  if (clamped) ctx.saturated = true;
}

}  // namespace

float round_to_f32_odd(double d) {
  float f = static_cast<float>(d);
  if (!std::isfinite(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);  // truncate (inf -> max)
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

void load_f32(const TensorView& v, float* dst) { load_any(v, dst); }
void load_f64(const TensorView& v, double* dst) { load_any(v, dst); }
void load_i64(const TensorView& v, std::int64_t* dst) {
  if (v.dtype == DType::kI64) {
    if (v.numel > 0) std::memcpy(dst, v.data, static_cast<std::size_t>(v.numel) * 8);  // empty: data may be null
    return;
  }
  std::vector<double> tmp(static_cast<std::size_t>(v.numel));
  load_any(v, tmp.data());
  to_int_n(tmp.data(), dst, v.numel);
}

void store_i64(const TensorView& v, const std::int64_t* src) {
  const std::int64_t n = v.numel;
  switch (v.dtype) {
    case DType::kI8: cast_n(src, v.as<std::int8_t>(), n); break;
    case DType::kU8: cast_n(src, v.as<std::uint8_t>(), n); break;
    case DType::kI32: cast_n(src, v.as<std::int32_t>(), n); break;
    case DType::kI64:
      if (n > 0) std::memcpy(v.data, src, static_cast<std::size_t>(n) * 8);  // src is null for no values
      break;
    case DType::kBool:
      for (std::int64_t i = 0; i < n; ++i) v.as<std::uint8_t>()[i] = src[i] != 0 ? 1 : 0;
      break;
    default: {
      std::vector<double> tmp(src, src + n);
      store_any(v, tmp.data());
    }
  }
}

bool store_f32_raw(const TensorView& v, const float* src) { return store_any(v, src); }
bool store_f64_raw(const TensorView& v, const double* src) { return store_any(v, src); }

void round_in_place(float* data, std::int64_t n, DType dtype) { round_any(data, n, dtype, nullptr); }
void round_in_place(double* data, std::int64_t n, DType dtype) { round_any(data, n, dtype, nullptr); }
void round_counting_underflow(float* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  round_counting_any(data, n, dtype, ctx);
}
void round_counting_underflow(double* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  round_counting_any(data, n, dtype, ctx);
}
void count_stored_underflow(const TensorView& v, const float* src, KernelContext& ctx) {
  count_stored_any(v, src, ctx);
}
void count_stored_underflow(const TensorView& v, const double* src, KernelContext& ctx) {
  count_stored_any(v, src, ctx);
}

void store_narrow(const TensorView& v, const float* src, KernelContext& ctx) {
  const bool half = v.dtype == DType::kF16;
  auto* bits = v.as<std::uint16_t>();
  const auto n = static_cast<std::size_t>(v.numel);
  const std::uint16_t exponent = half ? 0x7c00u : 0x7f80u, max_bits = half ? 0x7bffu : 0x7f7fu;
  bool nonfinite = false;
  UnderflowCount c;
  // In blocks, so that the scans read what the conversion has just written, from L1.
  for (std::size_t i0 = 0; i0 < n; i0 += 2048) {
    const std::size_t m = std::min<std::size_t>(2048, n - i0);
    half ? float_to_half_n(src + i0, bits + i0, m) : float_to_bf16_n(src + i0, bits + i0, m);
    for (std::size_t i = i0; i < i0 + m; ++i) nonfinite |= (bits[i] & exponent) == exponent;
    count_narrowed(src + i0, bits + i0, m, half, c);
  }
  add_counts(c, ctx);
  if (!nonfinite) return;
  ctx.overflow = true;
  if (ctx.overflow_mode != OverflowMode::kSaturation) return;
  ctx.saturated = true;
  for (std::size_t i = 0; i < n; ++i) {
    if ((bits[i] & exponent) != exponent) continue;
    const bool nan = (bits[i] & ~exponent & 0x7fffu) != 0;
    bits[i] = nan ? 0 : static_cast<std::uint16_t>((bits[i] & 0x8000u) | max_bits);  // NaN -> 0, ±inf -> ±max
  }
}

// The scan tests the exponent bits (all ones: inf or NaN) as integers: a comparison of floats
// reduced into a flag does not vectorise, and this scan runs over every result of the hot kernels.
template <class T>
void finish_any(T* data, std::int64_t n, KernelContext& ctx) {
  using Bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
  constexpr Bits kExponent = std::is_same_v<T, float> ? Bits(0x7f800000u) : Bits(0x7ff0000000000000u);
  Bits bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    bad |= static_cast<Bits>((std::bit_cast<Bits>(data[i]) & kExponent) == kExponent);
  }
  if (bad == 0) return;
  ctx.overflow = true;
  if (ctx.backend == Backend::kNpu) overflow_any(data, n, std::is_same_v<T, float> ? DType::kF32 : DType::kF64, ctx);
}

void finish_in_place(float* data, std::int64_t n, KernelContext& ctx) { finish_any(data, n, ctx); }
void finish_in_place(double* data, std::int64_t n, KernelContext& ctx) { finish_any(data, n, ctx); }

bool views_overlap(const TensorView& a, const TensorView& b) {
  if (a.numel == 0 || b.numel == 0 || a.data == nullptr || b.data == nullptr) return false;
  const std::byte* a_end = a.data + a.numel * static_cast<std::int64_t>(dtype_size(a.dtype));
  const std::byte* b_end = b.data + b.numel * static_cast<std::int64_t>(dtype_size(b.dtype));
  return a.data < b_end && b.data < a_end;
}

bool in_step(const TensorView& in, const TensorView& out) {
  return !views_overlap(in, out) || (in.data == out.data && dtype_size(in.dtype) == dtype_size(out.dtype));
}

void apply_overflow_mode(float* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  overflow_any(data, n, dtype, ctx);
}
void apply_overflow_mode(double* data, std::int64_t n, DType dtype, KernelContext& ctx) {
  overflow_any(data, n, dtype, ctx);
}

// ---- shapes -------------------------------------------------------------------------------------

void fail(const char* op, const std::string& what) { throw InvalidArgument(std::string(op) + ": " + what); }

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* op) {
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    fail(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<std::int64_t> strides_of(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

void throw_overflow(const char* op, std::string_view what, std::int64_t a, const char* sign, std::int64_t b) {
  throw InvalidArgument(std::string(op) + ": " + std::string(what) + " overflows int64 (" + std::to_string(a) + " " +
                        sign + " " + std::to_string(b) + ")");
}

void set_fault(KernelContext& ctx, std::string message) {
  if (ctx.fault.empty()) ctx.fault = std::move(message);
}

void set_index_fault(KernelContext& ctx, const char* op, std::int64_t value, std::int64_t dim, std::string_view where) {
  if (!ctx.fault.empty()) return;
  set_fault(ctx, std::string(op) + ": index " + std::to_string(value) + " is out of range [" + std::to_string(-dim) +
                     ", " + std::to_string(dim - 1) + "] for " + std::string(where) +
                     " (ONNX: an out-of-range index is an error; negative indices count from the end)");
}

BroadcastIndex::BroadcastIndex(const Shape& input, const Shape& output) : output_(output) {
  identity_ = input == output;
  scalar_ = shape_numel(input) == 1;
  const std::size_t n = output.size(), offset = n - input.size();
  const auto in_strides = strides_of(input);
  strides_.assign(n, 0);
  for (std::size_t i = offset; i < n; ++i) {
    strides_[i] = input[i - offset] == 1 ? 0 : in_strides[i - offset];
  }
}

void BroadcastIndex::fill(std::vector<std::int64_t>& out) const {
  const std::int64_t total = shape_numel(output_);
  out.resize(static_cast<std::size_t>(total));
  if (total == 0) return;
  const std::size_t rank = output_.size();
  if (rank == 0) {
    out[0] = 0;
    return;
  }
  // Odometer over the output; the innermost dim is a tight loop.
  std::vector<std::int64_t> index(rank, 0);
  const std::int64_t inner = output_[rank - 1], inner_stride = strides_[rank - 1];
  std::int64_t base = 0, pos = 0;
  while (pos < total) {
    for (std::int64_t j = 0; j < inner; ++j) out[static_cast<std::size_t>(pos++)] = base + j * inner_stride;
    for (std::size_t d = rank - 1; d-- > 0;) {
      base += strides_[d];
      if (++index[d] < output_[d]) break;
      base -= strides_[d] * output_[d];
      index[d] = 0;
    }
  }
}

void require_floating(std::span<const TensorMeta> in, int i, const char* op) {
  if (!is_floating(in[static_cast<std::size_t>(i)].dtype)) {
    fail(op, "input " + std::to_string(i) + " must be a floating-point tensor, got " +
                 std::string(dtype_name(in[static_cast<std::size_t>(i)].dtype)));
  }
}

void require_same_dtype(std::span<const TensorMeta> in, const char* op) {
  for (const auto& m : in) {
    if (m.present && m.dtype != in[0].dtype) {
      fail(op, "inputs must have one dtype, got " + std::string(dtype_name(in[0].dtype)) + " and " +
                   std::string(dtype_name(m.dtype)));
    }
  }
}

std::vector<std::int64_t> dim_ints(const Attrs& attrs, const char* name, std::size_t size, std::int64_t fallback,
                                   std::int64_t min_value, const char* op) {
  std::vector<std::int64_t> v = attrs.get_ints(name, {});
  if (v.empty()) return std::vector<std::int64_t>(size, fallback);
  if (v.size() != size) {
    fail(op, std::string(name) + " must have " + std::to_string(size) + " values, got " + shape_str(v));
  }
  // No dim is longer than kMaxTensorBytes, so neither is a useful pad, stride or dilation; the cap
  // keeps the geometry's arithmetic far from overflow (Note [Sizes from user input]).
  const auto max_value = static_cast<std::int64_t>(kMaxTensorBytes);
  for (auto e : v) {
    if (e < min_value || e > max_value) {
      fail(op, std::string(name) + " " + shape_str(v) + " has " + std::to_string(e) + ", outside [" +
                   std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
    }
  }
  return v;
}

Shape size_attr(const Attrs& attrs, const char* name, std::initializer_list<std::size_t> ranks, const char* op) {
  std::string count;  // "4", "4 or 5", or "" for any
  for (std::size_t r : ranks) count += (count.empty() ? "" : " or ") + std::to_string(r);
  if (!attrs.has(name)) {
    fail(op, std::string("needs the '") + name + "' attribute (" +
                 (count.empty() ? "one size per dim" : count + " ints") + ")");
  }
  const Shape s = attrs.get_ints(name);
  const auto max_dim = static_cast<std::int64_t>(kMaxTensorBytes);
  const bool rank_ok = ranks.size() == 0 || std::find(ranks.begin(), ranks.end(), s.size()) != ranks.end();
  if (!rank_ok || std::any_of(s.begin(), s.end(), [&](std::int64_t v) { return v < 0 || v > max_dim; })) {
    fail(op, std::string(name) + " must be " + (count.empty() ? "" : count + " ") + "sizes in [0, " +
                 std::to_string(max_dim) + "], got " + shape_str(s));
  }
  return s;
}

double io_bytes(std::span<const TensorMeta> in, std::span<const TensorMeta> out) {
  double bytes = 0;
  for (const auto& m : in) bytes += static_cast<double>(m.nbytes());
  for (const auto& m : out) bytes += static_cast<double>(m.nbytes());
  return bytes;
}

void softmax_terms(KernelCost& c) {
  c.softmax = true;
  c.stages = 2;
  c.precision_upcast = true;
  c.cross_core = true;
}

double out_bytes(std::span<const TensorMeta> out) { return io_bytes({}, out); }

KernelCost vector_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, double flops_per_element) {
  KernelCost c;
  c.unit = ComputeUnit::kVector;
  double elements = 0;
  for (const auto& m : out) elements += static_cast<double>(m.numel());
  c.flops = elements * flops_per_element;
  c.bytes = io_bytes(in, out);
  c.bytes_written = out_bytes(out);
  return c;
}

}  // namespace npuscope::emulator::kernels
