// Overflow-safe arithmetic on trace timestamps and durations (int64 ns).
//
// Note [Timestamp range]
// npuscope writes timestamps in [0, kMaxTimestampNs] (virtual time since the session started; 2^62
// ns is about 146 years): within it, any difference of two timestamps and any sum of two fits an
// int64. A trace from elsewhere (or damaged) may hold anything, and ~10,700 bad-input runs found
// start_ns near INT64_MAX/MIN overflowing `end - start` (signed overflow: undefined behaviour). So:
// the analyzer refuses rows outside the range (an error naming the trace, table, row and range);
// the exports, which only print, compute durations and totals with these saturating helpers.
#pragma once

#include <cstdint>
#include <limits>

namespace npuscope::collector {

inline constexpr std::int64_t kMaxTimestampNs = std::int64_t{1} << 62;

inline bool timestamp_in_range(std::int64_t ns) { return ns >= 0 && ns <= kMaxTimestampNs; }

// a + b, clamped to the int64 range.
inline std::int64_t add_saturated(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

// end - start, 0 when end <= start, clamped to INT64_MAX when it does not fit.
inline std::int64_t duration_saturated(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) return 0;
  std::int64_t out = 0;
  return __builtin_sub_overflow(end_ns, start_ns, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}

}  // namespace npuscope::collector
