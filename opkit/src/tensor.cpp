#include "npuscope/opkit/tensor.h"

#include <cstring>

namespace npuscope::opkit::detail {

namespace {
std::string where(Memory m, std::uint64_t offset, std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes at " + std::string(memory_name(m)) + "+" + std::to_string(offset);
}
}  // namespace

void scalar_read(BlockState& b, Memory m, std::uint64_t offset, void* out, std::uint32_t bytes, std::uint64_t limit,
                 const std::source_location& loc) {
  b.issue(Pipe::kScalar, "GetValue", kScalarAccessCycles, bytes, loc);
  if (offset + bytes > limit) {
    b.fail(Check::kLocalOutOfRange, "GetValue", loc, "read of " + where(m, offset, bytes) + ", past the tensor's end");
    return;
  }
  if (!b.is_written(m, offset, bytes)) {
    b.fail(Check::kUninitializedRead, "GetValue", loc, "read of " + where(m, offset, bytes) + ", never written");
    return;
  }
  std::memcpy(out, b.memory(m) + offset, bytes);
}

void scalar_write(BlockState& b, Memory m, std::uint64_t offset, const void* in, std::uint32_t bytes,
                  std::uint64_t limit, const std::source_location& loc) {
  b.issue(Pipe::kScalar, "SetValue", kScalarAccessCycles, bytes, loc);
  if (offset + bytes > limit) {
    b.fail(Check::kLocalOutOfRange, "SetValue", loc, "write of " + where(m, offset, bytes) + ", past the tensor's end");
    return;
  }
  std::memcpy(b.memory(m) + offset, in, bytes);
  b.mark_written(m, offset, bytes);
}

void gm_scalar(BlockState& b, void* gm, void* value, std::uint32_t bytes, bool write, const std::source_location& loc) {
  const char* name = write ? "SetValue" : "GetValue";
  b.issue(Pipe::kScalar, name, kGmLatencyCycles, bytes, loc);
  if (!b.check_gm(gm, bytes, write, name, loc)) return;
  if (write) {
    std::memcpy(gm, value, bytes);
    b.record_gm_write(gm, bytes);
  } else {
    std::memcpy(value, gm, bytes);
  }
}

}  // namespace npuscope::opkit::detail
