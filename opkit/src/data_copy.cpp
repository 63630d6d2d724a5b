#include "npuscope/opkit/data_copy.h"

#include <cstring>

namespace npuscope::opkit::detail {

namespace {

constexpr std::uint64_t kAlign = 32;
constexpr std::uint64_t round_up(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::string at(const LocalRef& t, std::uint64_t offset) {
  return std::string(memory_name(t.memory())) + "+" + std::to_string(offset);
}

// The checks every copy makes on its local side. False when the copy must not run.
bool local_ok(BlockState& b, const LocalRef& t, std::uint64_t bytes, bool reads, bool needs_aligned_length,
              const char* name, const std::source_location& loc) {
  if (needs_aligned_length && bytes % kAlign != 0) {
    return b.fail(Check::kMisalignedCopy, name, loc,
                  "length " + std::to_string(bytes) + " bytes is not a multiple of 32 (use DataCopyPad for a tail)");
  }
  if (t.offset % kAlign != 0) {
    return b.fail(Check::kMisalignedCopy, name, loc, "local address " + at(t, t.offset) + " is not 32-byte aligned");
  }
  if (t.offset + bytes > t.end) {
    return b.fail(Check::kLocalOutOfRange, name, loc,
                  std::to_string(bytes) + " bytes at " + at(t, t.offset) + " run past the tensor's end (" +
                      std::to_string(t.end - t.offset) + " bytes)");
  }
  if (reads && !b.is_written(t.memory(), t.offset, bytes)) {
    return b.fail(Check::kUninitializedRead, name, loc,
                  "read of " + std::to_string(bytes) + " bytes at " + at(t, t.offset) + ", not all of them written");
  }
  return true;
}

bool valid(const LocalRef& t, const char* name, const std::source_location& loc) {
  if (t.block != nullptr) return true;
  return current_block().fail(Check::kBadArgument, name, loc, "the local tensor was never allocated");
}

Pipe out_pipe(const LocalRef& src) { return src.memory() == Memory::kL0C ? Pipe::kFix : Pipe::kMte3; }

}  // namespace

void copy_gm_to_local(const LocalRef& dst, const void* src, std::uint64_t bytes, const std::source_location& loc) {
  constexpr const char* kName = "DataCopy";
  if (!valid(dst, kName, loc)) return;
  BlockState& b = *dst.block;
  if (!local_ok(b, dst, bytes, false, true, kName, loc) || !b.check_gm(src, bytes, false, kName, loc)) return;
  std::memcpy(dst.bytes(), src, bytes);
  b.mark_written(dst.memory(), dst.offset, bytes);
  b.count_gm_copy(src, bytes);
  b.issue(Pipe::kMte2, kName, gm_copy_cycles(b.costs(), bytes), bytes, loc);
}

void copy_local_to_gm(void* dst, const LocalRef& src, std::uint64_t bytes, const std::source_location& loc) {
  constexpr const char* kName = "DataCopy";
  if (!valid(src, kName, loc)) return;
  BlockState& b = *src.block;
  if (!local_ok(b, src, bytes, true, true, kName, loc) || !b.check_gm(dst, bytes, true, kName, loc)) return;
  std::memcpy(dst, src.bytes(), bytes);
  b.record_gm_write(dst, bytes);
  b.count_gm_copy(dst, bytes);
  b.issue(out_pipe(src), kName, gm_copy_cycles(b.costs(), bytes), bytes, loc);
}

void copy_local_to_local(const LocalRef& dst, const LocalRef& src, std::uint64_t bytes,
                         const std::source_location& loc) {
  constexpr const char* kName = "DataCopy";
  if (!valid(dst, kName, loc) || !valid(src, kName, loc)) return;
  BlockState& b = *dst.block;
  if (!local_ok(b, src, bytes, true, true, kName, loc) || !local_ok(b, dst, bytes, false, true, kName, loc)) return;
  std::memmove(dst.bytes(), src.bytes(), bytes);
  b.mark_written(dst.memory(), dst.offset, bytes);
  const bool to_l0 = dst.memory() == Memory::kL0A || dst.memory() == Memory::kL0B;
  b.issue(to_l0 ? Pipe::kMte1 : Pipe::kVector, kName, local_copy_cycles(b.costs(), bytes), bytes, loc);
}

void copy_pad_gm_to_local(const LocalRef& dst, const void* src, const DataCopyExtParams& p, std::uint32_t elem,
                          const void* pad_value, const std::source_location& loc) {
  constexpr const char* kName = "DataCopyPad";
  if (!valid(dst, kName, loc)) return;
  BlockState& b = *dst.block;
  const std::uint64_t local_block = round_up(p.blockLen) + std::uint64_t{p.dstStride} * kAlign;
  const std::uint64_t gm_block = std::uint64_t{p.blockLen} + p.srcStride;
  if (p.blockCount == 0 || p.blockLen == 0) {
    b.fail(Check::kBadArgument, kName, loc, "blockCount and blockLen must be at least 1");
    return;
  }
  const std::uint64_t local_span = (p.blockCount - 1) * local_block + round_up(p.blockLen);
  const std::uint64_t gm_span = (p.blockCount - 1) * gm_block + p.blockLen;
  if (!local_ok(b, dst, local_span, false, false, kName, loc) || !b.check_gm(src, gm_span, false, kName, loc)) return;
  for (std::uint64_t i = 0; i < p.blockCount; ++i) {
    std::byte* d = dst.bytes() + i * local_block;
    std::memcpy(d, static_cast<const std::byte*>(src) + i * gm_block, p.blockLen);
    std::uint64_t written = p.blockLen;
    if (pad_value != nullptr) {
      for (std::uint64_t o = p.blockLen; o + elem <= round_up(p.blockLen); o += elem)
        std::memcpy(d + o, pad_value, elem);
      written = round_up(p.blockLen);
    }
    b.mark_written(dst.memory(), dst.offset + i * local_block, written);
  }
  b.count_gm_copy(src, p.blockCount > 1 ? gm_block : p.blockLen);
  b.issue(Pipe::kMte2, kName, gm_copy_cycles(b.costs(), std::uint64_t{p.blockCount} * p.blockLen), gm_span, loc);
}

void copy_pad_local_to_gm(void* dst, const LocalRef& src, const DataCopyExtParams& p, const std::source_location& loc) {
  constexpr const char* kName = "DataCopyPad";
  if (!valid(src, kName, loc)) return;
  BlockState& b = *src.block;
  if (p.blockCount == 0 || p.blockLen == 0) {
    b.fail(Check::kBadArgument, kName, loc, "blockCount and blockLen must be at least 1");
    return;
  }
  const std::uint64_t local_block = round_up(p.blockLen) + std::uint64_t{p.srcStride} * kAlign;
  const std::uint64_t gm_block = std::uint64_t{p.blockLen} + p.dstStride;
  const std::uint64_t local_span = (p.blockCount - 1) * local_block + p.blockLen;
  const std::uint64_t gm_span = (p.blockCount - 1) * gm_block + p.blockLen;
  if (!local_ok(b, src, local_span, false, false, kName, loc) || !b.check_gm(dst, gm_span, true, kName, loc)) return;
  for (std::uint64_t i = 0; i < p.blockCount; ++i) {
    if (!b.is_written(src.memory(), src.offset + i * local_block, p.blockLen)) {
      b.fail(Check::kUninitializedRead, kName, loc,
             "block " + std::to_string(i) + ": read of " + std::to_string(p.blockLen) + " bytes at " +
                 at(src, src.offset + i * local_block) + ", not all of them written");
      return;
    }
  }
  for (std::uint64_t i = 0; i < p.blockCount; ++i) {
    std::byte* d = static_cast<std::byte*>(dst) + i * gm_block;
    std::memcpy(d, src.bytes() + i * local_block, p.blockLen);
    b.record_gm_write(d, p.blockLen);
  }
  b.count_gm_copy(dst, p.blockCount > 1 ? gm_block : p.blockLen);
  b.issue(out_pipe(src), kName, gm_copy_cycles(b.costs(), std::uint64_t{p.blockCount} * p.blockLen), gm_span, loc);
}

}  // namespace npuscope::opkit::detail
