// When the drain thread wakes up.
//
// Note [Drain pacing]
// Each wake-up of a thread costs the workload, even one that finds nothing to do: on a 2-vCPU VM
// an unrelated process that only slept and woke every 10 ms slowed `multi_stream --ops 100000
// --size 16` by ~3 %, every 5 ms by ~6 %, every 2 ms by ~12 % (medians of 31 interleaved runs),
// and the drain thread with nothing to drain cost the same. Draining less often costs too, once
// records flow: the chunks filled between two rounds outgrow the caches (20 and 40 ms rounds were
// 4 and 7 % slower than 10 ms, even with the chunks pre-faulted). So the drain thread drains every kBusyInterval while
// records arrive, and after a round that found none it dozes, doubling its sleep up to kIdleInterval: an idle profiled
// process is woken 5 times a second, not 100. While it dozes, the first producer that takes a fresh chunk rings the
// alarm (ChunkPool::acquire), so a burst after a quiet phase is drained at the busy pace again, not after up to
// kIdleInterval of records. Records of a producer that fills no chunk wait at most kIdleInterval, well inside the 1 s a
// killed workload may lose (Note [Trace spool]).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace npuscope::inject {

inline constexpr std::chrono::milliseconds kBusyInterval{10};
inline constexpr std::chrono::milliseconds kIdleInterval{200};

class DrainAlarm {
 public:
  // ---- drain thread ----
  // Sleeps for `timeout` or until rung (at once if stopped). While `dozing`, ring_if_dozing() rings
  // too. Returns false once stop() was called.
  bool sleep(std::chrono::nanoseconds timeout, bool dozing) noexcept;
  // The next sleep after a round that consumed `records`.
  static std::chrono::nanoseconds next_interval(std::chrono::nanoseconds last, std::uint64_t records) noexcept;

  // ---- any thread ----
  void ring() noexcept;
  // The session stops: the sleeper wakes, and every later sleep returns false at once. The flag
  // lives here, read after the futex word, so that a stop between the drain thread's last check
  // and its sleep cannot be slept through.
  void stop() noexcept {
    stopped_.store(true);
    ring();
  }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_relaxed); }
  // Producers, once per chunk: one relaxed load unless the drain thread dozes.
  void ring_if_dozing() noexcept {
    if (dozing_.load(std::memory_order_relaxed)) [[unlikely]] {
      if (dozing_.exchange(false, std::memory_order_relaxed)) ring();
    }
  }

 private:
  std::atomic<std::uint32_t> word_{0};  // the futex: bumped by every ring
  std::atomic<bool> dozing_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace npuscope::inject
