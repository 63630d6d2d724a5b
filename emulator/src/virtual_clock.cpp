// See Note [Virtual time] in virtual_clock.h.
#include "npuscope/emulator/virtual_clock.h"

#include <atomic>
#include <chrono>

namespace npuscope::emulator::vclock {
namespace {

const std::chrono::steady_clock::time_point kSessionStart = std::chrono::steady_clock::now();

struct ThreadClock {
  std::uint64_t excluded_ns = 0;  // real time blocked on the emulator
  std::uint64_t advance_ns = 0;   // modelled time added (syncs, launch costs)
  int blocked_depth = 0;
  std::uint64_t blocked_since = 0;  // real time the outermost BlockedScope began
};
thread_local ThreadClock t_clock;

std::atomic<std::uint32_t> g_next_thread{0};
thread_local std::uint32_t t_thread_index = g_next_thread.fetch_add(1, std::memory_order_relaxed);

}  // namespace

std::uint64_t real_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - kSessionStart).count());
}

// While blocked the clock stands still (rather than running on and jumping back when the scope
// ends), so host timestamps stay monotonic.
std::uint64_t host_now_ns() {
  const std::uint64_t real = t_clock.blocked_depth > 0 ? t_clock.blocked_since : real_now_ns();
  return real - t_clock.excluded_ns + t_clock.advance_ns;
}

void advance_to(std::uint64_t virtual_ns) {
  const std::uint64_t now = host_now_ns();
  if (virtual_ns > now) t_clock.advance_ns += virtual_ns - now;
}

void advance_by(std::uint64_t ns) { t_clock.advance_ns += ns; }

std::uint32_t thread_index() { return t_thread_index; }

BlockedScope::BlockedScope() : start_real_ns_(real_now_ns()) {
  if (t_clock.blocked_depth++ == 0) t_clock.blocked_since = start_real_ns_;
}

BlockedScope::~BlockedScope() {
  if (--t_clock.blocked_depth == 0) t_clock.excluded_ns += real_now_ns() - t_clock.blocked_since;
}

}  // namespace npuscope::emulator::vclock
