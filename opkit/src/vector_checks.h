// The operand checks every vector instruction makes (vector_ops.cpp, vector_convert_ops.cpp).
#pragma once

#include <cstdint>
#include <source_location>
#include <string>

#include "npuscope/opkit/tensor.h"

namespace npuscope::opkit::detail {

// In UB, `bytes` within the tensor and, for a source, all written. False (after the finding) when
// the instruction must not run.
inline bool operand_ok(BlockState& b, const LocalRef& t, std::uint64_t bytes, bool reads, const char* name,
                       const std::source_location& loc, const char* role) {
  if (t.block == nullptr) return b.fail(Check::kBadArgument, name, loc, std::string(role) + " was never allocated");
  if (t.memory() != Memory::kUB) {
    return b.fail(Check::kBadArgument, name, loc,
                  std::string(role) + " is in " + std::string(memory_name(t.memory())) +
                      ": vector instructions read and write UB only");
  }
  if (t.offset + bytes > t.end) {
    return b.fail(Check::kLocalOutOfRange, name, loc,
                  std::string(role) + ": " + std::to_string(bytes) + " bytes from UB+" + std::to_string(t.offset) +
                      " run past the tensor's end (" + std::to_string(t.end - t.offset) + " bytes)");
  }
  if (reads && !b.is_written(Memory::kUB, t.offset, bytes)) {
    return b.fail(Check::kUninitializedRead, name, loc,
                  std::string(role) + ": read of " + std::to_string(bytes) + " bytes at UB+" +
                      std::to_string(t.offset) + ", not all of them written");
  }
  return true;
}

inline bool count_ok(BlockState& b, std::uint32_t count, const char* name, const std::source_location& loc) {
  if (count > 0) return true;
  return b.fail(Check::kBadArgument, name, loc, "count must be at least 1");
}

}  // namespace npuscope::opkit::detail
