// The cube path (cube_ops.h): layouts, the Mmad parameter checks, f32 accumulation through BLAS.
#include "npuscope/opkit/cube_ops.h"

#include <cblas.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace npuscope::opkit::detail {

namespace {

constexpr std::uint64_t kFractalBytes = 512;      // 16 x 16 of 2-byte elements (L0A, L0B, NZ in L1)
constexpr std::uint64_t kL0cFractalBytes = 1024;  // 16 x 16 f32 (L0C)

std::uint64_t blocks16(std::uint64_t v) { return (v + 15) / 16; }

bool is_16bit_float(DType t) { return t == DType::kF16 || t == DType::kBF16; }

float read16(DType t, std::uint16_t bits) {
  return t == DType::kF16 ? emulator::half_bits_to_float(bits) : emulator::bf16_bits_to_float(bits);
}

BlockState& block_of(const LocalRef& t) { return t.block != nullptr ? *t.block : current_block(); }

// A local range check with its message; false when the instruction must not run.
bool fits(BlockState& b, Check check, const LocalRef& t, std::uint64_t offset, std::uint64_t bytes, const char* name,
          const char* role, const std::source_location& loc) {
  if (t.block != nullptr && t.offset + offset + bytes <= t.end) return true;
  return b.fail(check, name, loc,
                std::string(role) + " needs " + std::to_string(bytes) + " bytes from " +
                    std::string(memory_name(t.memory())) + "+" + std::to_string(t.offset + offset) +
                    "; the tensor has " + std::to_string(t.block != nullptr ? t.end - t.offset : 0));
}

bool in_memory(BlockState& b, Check check, const LocalRef& t, Memory m, const char* name, const char* role,
               const std::source_location& loc) {
  if (t.block != nullptr && t.memory() == m) return true;
  return b.fail(check, name, loc,
                std::string(role) + " must be in " + std::string(memory_name(m)) +
                    (t.block != nullptr ? ", not " + std::string(memory_name(t.memory())) : " (never allocated)"));
}

}  // namespace

void copy_nd2nz(const LocalRef& dst, DType t, const void* src, const Nd2NzParams& p, const std::source_location& loc) {
  constexpr const char* kName = "DataCopy";
  BlockState& b = block_of(dst);
  if (!is_16bit_float(t) || p.ndNum != 1) {
    b.fail(Check::kBadArgument, kName, loc, "Nd2Nz copies one f16/bf16 matrix (ndNum 1)");
    return;
  }
  if (!in_memory(b, Check::kBadArgument, dst, Memory::kL1, kName, "the NZ destination", loc)) return;
  const std::uint64_t rows = p.nValue, cols = p.dValue, padded = p.dstNzC0Stride;
  if (rows == 0 || cols == 0 || p.srcDValue < cols || padded < rows || padded % 16 != 0) {
    b.fail(Check::kBadArgument, kName, loc,
           "Nd2Nz needs nValue, dValue >= 1, srcDValue >= dValue and dstNzC0Stride a multiple of 16 >= nValue");
    return;
  }
  const std::uint64_t bytes = blocks16(cols) * padded * 16 * 2;
  const std::uint64_t gm_bytes = ((rows - 1) * p.srcDValue + cols) * 2;
  if (dst.offset % 32 != 0) {
    b.fail(Check::kMisalignedCopy, kName, loc, "L1 address +" + std::to_string(dst.offset) + " is not 32-byte aligned");
    return;
  }
  if (!fits(b, Check::kLocalOutOfRange, dst, 0, bytes, kName, "the NZ matrix", loc)) return;
  if (!b.check_gm(src, gm_bytes, false, kName, loc)) return;
  const auto* s = static_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint16_t*>(dst.bytes());
  for (std::uint64_t cb = 0; cb < blocks16(cols); ++cb) {
    for (std::uint64_t i = 0; i < padded; ++i) {
      std::uint16_t* row = d + (cb * padded + i) * 16;
      for (std::uint64_t c = 0; c < 16; ++c) {
        const std::uint64_t j = cb * 16 + c;
        row[c] = i < rows && j < cols ? s[i * p.srcDValue + j] : std::uint16_t{0};
      }
    }
  }
  b.mark_written(Memory::kL1, dst.offset, bytes);
  b.count_gm_copy(src, rows > 1 ? p.srcDValue * 2 : cols * 2);
  b.issue(Pipe::kMte2, kName, gm_copy_cycles(b.costs(), rows * cols * 2), rows * cols * 2, loc);
}

void load_data(const LocalRef& dst, const LocalRef& src, const LoadData2DParams& p, const std::source_location& loc) {
  constexpr const char* kName = "LoadData";
  BlockState& b = block_of(dst);
  if (!in_memory(b, Check::kBadArgument, src, Memory::kL1, kName, "the source", loc)) return;
  if (dst.block == nullptr || (dst.memory() != Memory::kL0A && dst.memory() != Memory::kL0B)) {
    b.fail(Check::kBadArgument, kName, loc, "the destination must be in L0A or L0B");
    return;
  }
  if (p.repeatTimes == 0) {
    b.fail(Check::kBadArgument, kName, loc, "repeatTimes must be at least 1");
    return;
  }
  if (dst.offset % kFractalBytes != 0 || src.offset % 32 != 0) {
    b.fail(Check::kMisalignedCopy, kName, loc, "L0A/L0B addresses are 512-byte aligned, L1 addresses 32-byte aligned");
    return;
  }
  for (std::uint64_t r = 0; r < p.repeatTimes; ++r) {
    const std::uint64_t s_off = (p.startIndex + r * p.srcStride) * kFractalBytes;
    const std::uint64_t d_off = r * (1u + p.dstGap) * kFractalBytes;
    if (!fits(b, Check::kLocalOutOfRange, src, s_off, kFractalBytes, kName, "a source fractal", loc) ||
        !fits(b, Check::kLocalOutOfRange, dst, d_off, kFractalBytes, kName, "a destination fractal", loc))
      return;
    if (!b.is_written(Memory::kL1, src.offset + s_off, kFractalBytes)) {
      b.fail(Check::kUninitializedRead, kName, loc,
             "fractal " + std::to_string(p.startIndex + r * p.srcStride) + " of the L1 source was never written");
      return;
    }
  }
  for (std::uint64_t r = 0; r < p.repeatTimes; ++r) {
    const auto* s =
        reinterpret_cast<const std::uint16_t*>(src.bytes() + (p.startIndex + r * p.srcStride) * kFractalBytes);
    auto* d = reinterpret_cast<std::uint16_t*>(dst.bytes() + r * (1u + p.dstGap) * kFractalBytes);
    if (p.ifTranspose) {
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) d[j * 16 + i] = s[i * 16 + j];
    } else {
      std::memcpy(d, s, kFractalBytes);
    }
    b.mark_written(dst.memory(), dst.offset + r * (1u + p.dstGap) * kFractalBytes, kFractalBytes);
  }
  b.issue(Pipe::kMte1, kName, local_copy_cycles(b.costs(), p.repeatTimes * kFractalBytes),
          p.repeatTimes * kFractalBytes, loc);
}

void mmad(DType in, const LocalRef& c, const LocalRef& a, const LocalRef& bm, const MmadParams& p,
          const std::source_location& loc) {
  constexpr const char* kName = "Mmad";
  BlockState& b = block_of(c);
  if (!is_16bit_float(in)) {
    b.fail(Check::kMmadParams, kName, loc, "Mmad takes f16 or bf16 inputs (f32 results in L0C)");
    return;
  }
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.m > 4095 || p.n > 4095 || p.k > 4095) {
    b.fail(Check::kMmadParams, kName, loc,
           "m, n, k must be in [1, 4095]; got " + std::to_string(p.m) + ", " + std::to_string(p.n) + ", " +
               std::to_string(p.k));
    return;
  }
  if (!in_memory(b, Check::kMmadParams, a, Memory::kL0A, kName, "A", loc) ||
      !in_memory(b, Check::kMmadParams, bm, Memory::kL0B, kName, "B", loc) ||
      !in_memory(b, Check::kMmadParams, c, Memory::kL0C, kName, "C", loc))
    return;
  if (a.offset % kFractalBytes != 0 || bm.offset % kFractalBytes != 0 || c.offset % kL0cFractalBytes != 0) {
    b.fail(Check::kMmadParams, kName, loc,
           "A and B must start 512-byte aligned and C 256-element aligned (L0A+" + std::to_string(a.offset) + ", L0B+" +
               std::to_string(bm.offset) + ", L0C+" + std::to_string(c.offset) + ")");
    return;
  }
  const std::uint64_t m1 = blocks16(p.m), n1 = blocks16(p.n), k1 = blocks16(p.k);
  if (!fits(b, Check::kMmadParams, a, 0, m1 * k1 * kFractalBytes, kName, "A", loc) ||
      !fits(b, Check::kMmadParams, bm, 0, k1 * n1 * kFractalBytes, kName, "B", loc) ||
      !fits(b, Check::kMmadParams, c, 0, m1 * n1 * kL0cFractalBytes, kName, "C", loc))
    return;
  if (!b.is_written(Memory::kL0A, a.offset, m1 * k1 * kFractalBytes) ||
      !b.is_written(Memory::kL0B, bm.offset, k1 * n1 * kFractalBytes) ||
      (!p.cmatrixInitVal && !b.is_written(Memory::kL0C, c.offset, m1 * n1 * kL0cFractalBytes))) {
    b.fail(Check::kUninitializedRead, kName, loc, "an operand's fractals were not all written (LoadData missing?)");
    return;
  }
  const std::uint64_t m = p.m, n = p.n, k = p.k;
  std::vector<float> af(m * k), bf(k * n), cf(m * n);
  const auto* as = reinterpret_cast<const std::uint16_t*>(a.bytes());
  const auto* bs = reinterpret_cast<const std::uint16_t*>(bm.bytes());
  auto* cs = reinterpret_cast<float*>(c.bytes());
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t kk = 0; kk < k; ++kk)
      af[i * k + kk] = read16(in, as[((i / 16) * k1 + kk / 16) * 256 + (i % 16) * 16 + kk % 16]);
  for (std::uint64_t kk = 0; kk < k; ++kk)
    for (std::uint64_t j = 0; j < n; ++j)
      bf[kk * n + j] = read16(in, bs[((kk / 16) * n1 + j / 16) * 256 + (j % 16) * 16 + kk % 16]);
  auto c_at = [&](std::uint64_t i, std::uint64_t j) -> float& {
    return cs[((j / 16) * m1 + i / 16) * 256 + (i % 16) * 16 + j % 16];
  };
  if (p.cmatrixInitVal) {
    std::memset(cs, 0, m1 * n1 * kL0cFractalBytes);
  } else {
    for (std::uint64_t i = 0; i < m; ++i)
      for (std::uint64_t j = 0; j < n; ++j) cf[i * n + j] = c_at(i, j);
  }
  // f16/bf16 products are exact in f32; the cube accumulates them in f32.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, af.data(), static_cast<int>(k), bf.data(), static_cast<int>(n), p.cmatrixInitVal ? 0.0f : 1.0f,
              cf.data(), static_cast<int>(n));
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) c_at(i, j) = cf[i * n + j];
  b.mark_written(Memory::kL0C, c.offset, m1 * n1 * kL0cFractalBytes);
  b.issue(Pipe::kCube, kName, cube_cycles(b.costs(), m, n, k, false), (m * k + k * n) * 2, loc);
}

void fixpipe(void* dst, DType t, const LocalRef& src, const FixpipeParams& p, const std::source_location& loc) {
  constexpr const char* kName = "Fixpipe";
  BlockState& b = block_of(src);
  if (!in_memory(b, Check::kBadArgument, src, Memory::kL0C, kName, "the source", loc)) return;
  if (!(is_16bit_float(t) || t == DType::kF32) || p.mSize == 0 || p.nSize == 0 || p.srcStride < p.mSize ||
      p.srcStride % 16 != 0 || p.dstStride < p.nSize) {
    b.fail(Check::kBadArgument, kName, loc,
           "Fixpipe writes f16/bf16/f32 and needs mSize, nSize >= 1, srcStride a multiple of 16 >= mSize and "
           "dstStride >= nSize");
    return;
  }
  const std::uint64_t size = dtype_size(t);
  const std::uint64_t span = blocks16(p.nSize) * p.srcStride * 16 * 4;
  if (!fits(b, Check::kLocalOutOfRange, src, 0, span, kName, "the L0C source", loc)) return;
  if (!b.is_written(Memory::kL0C, src.offset, span)) {
    b.fail(Check::kUninitializedRead, kName, loc, "the L0C results were not all written (Mmad missing?)");
    return;
  }
  const std::uint64_t gm_bytes = ((p.mSize - 1) * std::uint64_t{p.dstStride} + p.nSize) * size;
  if (!b.check_gm(dst, gm_bytes, true, kName, loc)) return;
  const auto* cs = reinterpret_cast<const float*>(src.bytes());
  for (std::uint64_t i = 0; i < p.mSize; ++i) {
    auto* row = static_cast<std::byte*>(dst) + i * p.dstStride * size;
    for (std::uint64_t j = 0; j < p.nSize; ++j) {
      float v = cs[((j / 16) * p.srcStride + i) * 16 + j % 16];
      std::uint16_t bits = 0;
      if (t == DType::kF16) bits = emulator::float_to_half_bits(v);
      if (t == DType::kBF16) bits = emulator::float_to_bf16_bits(v);
      const float stored = t == DType::kF32 ? v : read16(t, bits);
      if (!std::isfinite(stored)) {
        v = b.overflowed(stored, t);
        if (t == DType::kF16) bits = emulator::float_to_half_bits(v);
        if (t == DType::kBF16) bits = emulator::float_to_bf16_bits(v);
      }
      if (t == DType::kF32)
        std::memcpy(row + j * 4, &v, 4);
      else
        std::memcpy(row + j * 2, &bits, 2);
    }
    b.record_gm_write(row, p.nSize * size);
  }
  b.count_gm_copy(dst, p.mSize > 1 ? std::uint64_t{p.dstStride} * size : std::uint64_t{p.nSize} * size);
  b.issue(Pipe::kFix, kName, gm_copy_cycles(b.costs(), std::uint64_t{p.mSize} * p.nSize * size),
          std::uint64_t{p.mSize} * p.nSize * size, loc);
}

}  // namespace npuscope::opkit::detail
