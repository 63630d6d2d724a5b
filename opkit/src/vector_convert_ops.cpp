// The vector instructions that change dtype or shape: Cast (with Ascend C's rounding modes), the
// reductions, Compare (to a bit mask) and Select (by one).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "npuscope/emulator/dtype.h"
#include "npuscope/opkit/vector_ops.h"
#include "vector_checks.h"

namespace npuscope::opkit::detail {

namespace {

double read_as_double(DType t, const std::byte* p, std::size_t i) {
  switch (t) {
    case DType::kF16: return emulator::half_bits_to_float(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DType::kBF16: return emulator::bf16_bits_to_float(reinterpret_cast<const std::uint16_t*>(p)[i]);
    case DType::kF32: return reinterpret_cast<const float*>(p)[i];
    case DType::kI32: return reinterpret_cast<const std::int32_t*>(p)[i];
    case DType::kI8: return reinterpret_cast<const std::int8_t*>(p)[i];
    case DType::kU8: return reinterpret_cast<const std::uint8_t*>(p)[i];
    default: return 0;
  }
}

bool castable(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kI32 || t == DType::kI8 ||
         t == DType::kU8;
}

// The neighbours of x in a 16-bit float format: stepping the bits of a finite value by one.
template <class Bits, class FromF, class ToF>
float round_16(float x, RoundMode mode, FromF from_float, ToF to_float) {
  const Bits r = from_float(x);
  const float rv = to_float(r);
  if (mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT || !std::isfinite(rv) || rv == x) return rv;
  auto step = [&](Bits bits, bool up) -> float {
    const float v = to_float(bits);
    Bits out;
    if (v == 0.0f)
      out = static_cast<Bits>(up ? 0x0001 : 0x8001);
    else if ((v > 0) == up)
      out = static_cast<Bits>(bits + 1);
    else
      out = static_cast<Bits>(bits - 1);
    return to_float(out);
  };
  const float lo = rv < x ? rv : step(r, false);
  const float hi = rv < x ? step(r, true) : rv;
  switch (mode) {
    case RoundMode::CAST_FLOOR: return lo;
    case RoundMode::CAST_CEIL: return hi;
    case RoundMode::CAST_TRUNC: return x > 0 ? lo : hi;
    case RoundMode::CAST_ROUND: {
      const float dl = x - lo, dh = hi - x;
      if (dl != dh) return dl < dh ? lo : hi;
      return x > 0 ? hi : lo;
    }
    case RoundMode::CAST_ODD: return (from_float(lo) & 1) ? lo : hi;
    default: return rv;
  }
}

double round_int(double x, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(x);
    case RoundMode::CAST_CEIL: return std::ceil(x);
    case RoundMode::CAST_TRUNC: return std::trunc(x);
    case RoundMode::CAST_ROUND: return std::round(x);
    case RoundMode::CAST_ODD: {
      const double t = std::trunc(x);
      return t == x || std::fmod(std::fabs(t), 2.0) == 1.0 ? t : t + (x > 0 ? 1 : -1);
    }
    default: return std::nearbyint(x);
  }
}

template <class I>
I saturate_int(double v) {
  if (std::isnan(v)) return 0;
  v = std::clamp(v, static_cast<double>(std::numeric_limits<I>::min()),
                 static_cast<double>(std::numeric_limits<I>::max()));
  return static_cast<I>(v);
}

void write_cast(BlockState& b, DType t, std::byte* p, std::size_t i, double x, RoundMode mode) {
  // As store() in vector_ops.cpp: a non-finite result is an overflow (BlockState::overflowed).
  auto overflow_float = [&](float v) { return std::isfinite(v) ? v : b.overflowed(v, t); };
  switch (t) {
    case DType::kF16: {
      float v = round_16<std::uint16_t>(static_cast<float>(x), mode, emulator::float_to_half_bits,
                                        emulator::half_bits_to_float);
      v = overflow_float(v);
      reinterpret_cast<std::uint16_t*>(p)[i] = emulator::float_to_half_bits(v);
      break;
    }
    case DType::kBF16: {
      float v = round_16<std::uint16_t>(static_cast<float>(x), mode, emulator::float_to_bf16_bits,
                                        emulator::bf16_bits_to_float);
      v = overflow_float(v);
      reinterpret_cast<std::uint16_t*>(p)[i] = emulator::float_to_bf16_bits(v);
      break;
    }
    case DType::kF32: reinterpret_cast<float*>(p)[i] = static_cast<float>(x); break;
    case DType::kI32: reinterpret_cast<std::int32_t*>(p)[i] = saturate_int<std::int32_t>(round_int(x, mode)); break;
    case DType::kI8: reinterpret_cast<std::int8_t*>(p)[i] = saturate_int<std::int8_t>(round_int(x, mode)); break;
    case DType::kU8: reinterpret_cast<std::uint8_t*>(p)[i] = saturate_int<std::uint8_t>(round_int(x, mode)); break;
    default: break;
  }
}

bool float_dtype(BlockState& b, DType t, bool ints, const char* name, const std::source_location& loc) {
  if (t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || (ints && t == DType::kI32)) return true;
  return b.fail(Check::kBadArgument, name, loc,
                "the vector unit has no " + std::string(dtype_name(t)) + " form of " + name);
}

}  // namespace

void vec_cast(DType dst_t, DType src_t, const LocalRef& dst, const LocalRef& src, RoundMode mode, std::uint32_t count,
              const std::source_location& loc) {
  constexpr const char* kName = "Cast";
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  if (!castable(dst_t) || !castable(src_t)) {
    b.fail(Check::kBadArgument, kName, loc,
           "no Cast from " + std::string(dtype_name(src_t)) + " to " + std::string(dtype_name(dst_t)));
    return;
  }
  if (!count_ok(b, count, kName, loc)) return;
  const std::uint64_t in_bytes = std::uint64_t{count} * dtype_size(src_t);
  const std::uint64_t out_bytes = std::uint64_t{count} * dtype_size(dst_t);
  if (!operand_ok(b, src, in_bytes, true, kName, loc, "src") ||
      !operand_ok(b, dst, out_bytes, false, kName, loc, "dst"))
    return;
  const std::byte* s = src.bytes();
  std::byte* d = dst.bytes();
  if (dst_t == DType::kF32 && src_t == DType::kF16) {
    emulator::half_to_float_n(reinterpret_cast<const std::uint16_t*>(s), reinterpret_cast<float*>(d), count);
  } else if (dst_t == DType::kF16 && src_t == DType::kF32 &&
             (mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT)) {
    const auto* f = reinterpret_cast<const float*>(s);
    const auto f16_max = static_cast<float>(emulator::dtype_max(DType::kF16));
    bool suspect = false;
    for (std::uint32_t i = 0; i < count; ++i) suspect |= !(std::fabs(f[i]) <= f16_max);
    if (suspect) {
      for (std::uint32_t i = 0; i < count; ++i) write_cast(b, dst_t, d, i, f[i], mode);
    } else {
      emulator::float_to_half_n(f, reinterpret_cast<std::uint16_t*>(d), count);
    }
  } else {
    for (std::uint32_t i = 0; i < count; ++i) write_cast(b, dst_t, d, i, read_as_double(src_t, s, i), mode);
  }
  b.mark_written(Memory::kUB, dst.offset, out_bytes);
  const std::uint64_t wider = std::max(in_bytes, out_bytes);
  b.issue(Pipe::kVector, kName, vector_cycles(wider, false), wider, loc);
}

void vec_reduce(ReduceOp op, DType t, const LocalRef& dst, const LocalRef& src, const LocalRef& work,
                std::uint32_t count, const std::source_location& loc) {
  static constexpr const char* kNames[] = {"ReduceSum", "ReduceMax", "ReduceMin"};
  const char* name = kNames[static_cast<int>(op)];
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  if (!float_dtype(b, t, true, name, loc)) return;
  if (!count_ok(b, count, name, loc)) return;
  const std::uint64_t size = dtype_size(t);
  const std::uint64_t bytes = count * size;
  if (!operand_ok(b, src, bytes, true, name, loc, "src") || !operand_ok(b, work, bytes, false, name, loc, "work") ||
      !operand_ok(b, dst, size, false, name, loc, "dst"))
    return;
  // Accumulated in f32 (f64 for int32) and rounded once to the dtype.
  const std::byte* s = src.bytes();
  double acc = op == ReduceOp::kSum ? 0.0 : read_as_double(t, s, 0);
  if (t == DType::kF32) {
    const auto* f = reinterpret_cast<const float*>(s);
    float a = static_cast<float>(acc);
    for (std::uint32_t i = 0; i < count; ++i) {
      if (op == ReduceOp::kSum)
        a += f[i];
      else if (op == ReduceOp::kMax)
        a = std::max(a, f[i]);
      else
        a = std::min(a, f[i]);
    }
    acc = a;
  } else {
    float a = static_cast<float>(acc);
    for (std::uint32_t i = 0; i < count; ++i) {
      const double v = read_as_double(t, s, i);
      if (op == ReduceOp::kSum) {
        if (t == DType::kI32)
          acc += v;
        else
          a += static_cast<float>(v);
      } else if (op == ReduceOp::kMax) {
        acc = std::max(acc, v);
      } else {
        acc = std::min(acc, v);
      }
    }
    if (op == ReduceOp::kSum && t != DType::kI32) acc = a;
  }
  write_cast(b, t, dst.bytes(), 0, acc, RoundMode::CAST_RINT);
  b.mark_written(Memory::kUB, work.offset, bytes);
  b.mark_written(Memory::kUB, dst.offset, size);
  b.issue(Pipe::kVector, name, vector_cycles(bytes, false) + vector_cycles(kVectorRepeatBytes, false), bytes, loc);
}

void vec_compare(DType t, const LocalRef& dst, const LocalRef& a, const LocalRef& c, CMPMODE mode, std::uint32_t count,
                 const std::source_location& loc) {
  constexpr const char* kName = "Compare";
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  if (!float_dtype(b, t, true, kName, loc)) return;
  if (!count_ok(b, count, kName, loc)) return;
  const std::uint64_t bytes = count * std::uint64_t{dtype_size(t)};
  const std::uint64_t mask_bytes = (count + 7) / 8;
  if (!operand_ok(b, a, bytes, true, kName, loc, "src0") || !operand_ok(b, c, bytes, true, kName, loc, "src1") ||
      !operand_ok(b, dst, mask_bytes, false, kName, loc, "dst"))
    return;
  auto* m = reinterpret_cast<std::uint8_t*>(dst.bytes());
  std::memset(m, 0, mask_bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    const double x = read_as_double(t, a.bytes(), i), y = read_as_double(t, c.bytes(), i);
    bool r = false;
    switch (mode) {
      case CMPMODE::LT: r = x < y; break;
      case CMPMODE::GT: r = x > y; break;
      case CMPMODE::EQ: r = x == y; break;
      case CMPMODE::LE: r = x <= y; break;
      case CMPMODE::GE: r = x >= y; break;
      case CMPMODE::NE: r = x != y; break;
    }
    if (r) m[i / 8] = static_cast<std::uint8_t>(m[i / 8] | (1u << (i % 8)));
  }
  b.mark_written(Memory::kUB, dst.offset, mask_bytes);
  b.issue(Pipe::kVector, kName, vector_cycles(bytes, false), bytes, loc);
}

void vec_select(DType t, const LocalRef& dst, const LocalRef& mask, const LocalRef& a, const LocalRef& c,
                std::uint32_t count, const std::source_location& loc) {
  constexpr const char* kName = "Select";
  BlockState& b = dst.block != nullptr ? *dst.block : current_block();
  if (!float_dtype(b, t, true, kName, loc)) return;
  if (!count_ok(b, count, kName, loc)) return;
  const std::uint64_t size = dtype_size(t);
  const std::uint64_t bytes = count * size;
  if (!operand_ok(b, mask, (count + 7) / 8, true, kName, loc, "selMask") ||
      !operand_ok(b, a, bytes, true, kName, loc, "src0") || !operand_ok(b, c, bytes, true, kName, loc, "src1") ||
      !operand_ok(b, dst, bytes, false, kName, loc, "dst"))
    return;
  const auto* m = reinterpret_cast<const std::uint8_t*>(mask.bytes());
  std::byte* d = dst.bytes();
  for (std::uint32_t i = 0; i < count; ++i) {
    const bool pick_a = (m[i / 8] >> (i % 8)) & 1u;
    std::memmove(d + i * size, (pick_a ? a.bytes() : c.bytes()) + i * size, size);
  }
  b.mark_written(Memory::kUB, dst.offset, bytes);
  b.issue(Pipe::kVector, kName, vector_cycles(bytes, false), bytes, loc);
}

}  // namespace npuscope::opkit::detail
