// See Note [Virtual time] in virtual_clock.h.
#include "npuscope/emulator/virtual_clock.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>

#include "npuscope/emulator/errors.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace npuscope::emulator::vclock {
namespace {

// Note [Cheap real time]
// Every API call, allocation and kernel reads the clock, several times per op, and a steady_clock
// read costs ~25 ns here (the vDSO's fenced TSC read plus its seqlock), against ~10 ns for a bare
// RDTSC: a profiled launch-heavy workload spent about 100 ns per op on clock reads alone. Like
// Tracy, we read the TSC and scale it to nanoseconds ourselves, but only where the kernel itself
// keeps time with the TSC (its clocksource is "tsc": invariant, and synchronised across cores), so
// the timestamps of all threads stay comparable. The scale is measured against steady_clock once
// kCalibration has passed since the start; until then, and on other machines, steady_clock is
// read directly. (20 ms of calibration against ~25 ns of read jitter: a drift under 2 us per second.)
// A test's ManualClock (Note [Manual clock] in virtual_clock.h) sets the scale back to 0 while it
// lives, so that only the steady_clock path, which looks for it, is taken: the TSC path is unchanged.
constexpr std::uint64_t kCalibrationNs = 20'000'000;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

#if defined(__x86_64__)
inline std::uint64_t ticks() { return __rdtsc(); }
bool kernel_uses_tsc() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return std::getline(in, name) && name == "tsc";
}
#else
inline std::uint64_t ticks() { return 0; }
bool kernel_uses_tsc() { return false; }
#endif

struct TscClock {
  const bool usable = kernel_uses_tsc();
  const std::uint64_t start_ticks = ticks();
  const std::uint64_t start_ns = steady_ns();     // the session start
  std::atomic<std::uint64_t> ns_per_tick_q32{0};  // 32.32 fixed point; 0 until calibrated, or while manual

  // Note [Manual clock] in virtual_clock.h: read only where ns_per_tick_q32 is 0.
  std::atomic<bool> manual{false};
  std::atomic<std::uint64_t> manual_ns{0};
  std::atomic<std::uint64_t> floor_ns{0};  // the last manual time: real time stands still until past it
  std::mutex switch_mutex;                 // a manual clock's start and end against a calibration

  std::uint64_t now_since_start() {
    // acquire: a plain load on x86, the one machine that calibrates; it pairs with a manual start.
    const std::uint64_t scale = ns_per_tick_q32.load(std::memory_order_acquire);
    if (scale != 0) [[likely]] {
      return static_cast<std::uint64_t>((static_cast<unsigned __int128>(ticks() - start_ticks) * scale) >> 32);
    }
    if (manual.load(std::memory_order_acquire)) [[unlikely]]
      return manual_ns.load(std::memory_order_relaxed);
    const std::uint64_t t = ticks();
    const std::uint64_t ns = steady_ns() - start_ns;
    const std::uint64_t floor = floor_ns.load(std::memory_order_relaxed);
    if (ns < floor) [[unlikely]]
      return floor;
    if (usable && ns >= kCalibrationNs && t > start_ticks) calibrate(ns, t);
    return ns;
  }

  void calibrate(std::uint64_t ns, std::uint64_t t) {
    const auto q32 = static_cast<std::uint64_t>((static_cast<unsigned __int128>(ns) << 32) / (t - start_ticks));
    std::lock_guard lock(switch_mutex);
    if (manual.load(std::memory_order_relaxed)) return;  // one started meanwhile: the TSC stays off
    std::uint64_t expected = 0;                          // the first calibration wins: one scale for every thread
    ns_per_tick_q32.compare_exchange_strong(expected, q32 != 0 ? q32 : 1, std::memory_order_relaxed);
  }
};
TscClock g_clock;

struct ThreadClock {
  std::uint64_t excluded_ns = 0;  // real time blocked on the emulator
  std::uint64_t advance_ns = 0;   // modelled time added (syncs, launch costs)
  int blocked_depth = 0;
  std::uint64_t blocked_since = 0;  // real time the outermost BlockedScope began
};
// initial-exec: read straight off the thread pointer, not through __tls_get_addr (the emulator is
// linked into its programs, never dlopen()ed after they start).
thread_local constinit ThreadClock t_clock __attribute__((tls_model("initial-exec")));

std::atomic<std::uint32_t> g_next_thread{0};
std::atomic<std::uint64_t> g_published{0};  // Note [Hand-offs between host threads]
thread_local constinit std::uint32_t t_thread_slot __attribute__((tls_model("initial-exec"))) = 0;  // index + 1

}  // namespace

std::uint64_t real_now_ns() { return g_clock.now_since_start(); }

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

void publish() {
  const std::uint64_t now = host_now_ns();
  std::uint64_t seen = g_published.load(std::memory_order_relaxed);
  while (seen < now && !g_published.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

std::uint64_t published() { return g_published.load(std::memory_order_relaxed); }

void take_published() {
  const std::uint64_t target = published();
  if (target == 0) return;
  t_clock.advance_ns += target - host_now_ns();  // modular: the clock may move back (see the note)
}

std::uint32_t thread_index() {
  if (t_thread_slot == 0) [[unlikely]]
    t_thread_slot = g_next_thread.fetch_add(1, std::memory_order_relaxed) + 1;
  return t_thread_slot - 1;
}

BlockedScope::BlockedScope() : start_real_ns_(real_now_ns()) {
  if (t_clock.blocked_depth++ == 0) t_clock.blocked_since = start_real_ns_;
}

BlockedScope::~BlockedScope() {
  if (--t_clock.blocked_depth == 0) t_clock.excluded_ns += real_now_ns() - t_clock.blocked_since;
}

ManualClock::ManualClock() {
  const std::uint64_t now = real_now_ns();
  std::lock_guard lock(g_clock.switch_mutex);
  if (g_clock.manual.load(std::memory_order_relaxed))
    throw InvalidArgument("vclock::ManualClock: another one is alive (one manual clock at a time)");
  g_clock.manual_ns.store(std::max(now, g_clock.floor_ns.load(std::memory_order_relaxed)), std::memory_order_relaxed);
  g_clock.manual.store(true, std::memory_order_relaxed);
  g_clock.ns_per_tick_q32.store(0, std::memory_order_release);  // a read that sees the 0 sees `manual`
}

ManualClock::~ManualClock() {
  std::lock_guard lock(g_clock.switch_mutex);
  g_clock.floor_ns.store(g_clock.manual_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_clock.manual.store(false, std::memory_order_release);  // the TSC is calibrated again once past the floor
}

std::uint64_t ManualClock::now_ns() const { return g_clock.manual_ns.load(std::memory_order_relaxed); }

void ManualClock::advance(std::uint64_t ns) { g_clock.manual_ns.fetch_add(ns, std::memory_order_relaxed); }

}  // namespace npuscope::emulator::vclock
