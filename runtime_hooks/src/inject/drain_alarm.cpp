// See Note [Drain pacing] in drain_alarm.h.
#include "drain_alarm.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

namespace npuscope::inject {

bool DrainAlarm::sleep(std::chrono::nanoseconds timeout, bool dozing) noexcept {
  // The word first, then the flag (both sequentially consistent): a stop() the flag misses bumps
  // the word after it was read, so the futex wait returns at once.
  const std::uint32_t seen = word_.load();
  if (stopped_.load()) return false;
  dozing_.store(dozing, std::memory_order_relaxed);
  const auto ns = timeout.count();
  const timespec rel{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  // Returns at once if a ring came after `seen` was read; a spurious or EINTR return only means
  // an early round.
  syscall(SYS_futex, &word_, FUTEX_WAIT_PRIVATE, seen, &rel, nullptr, 0);
  dozing_.store(false, std::memory_order_relaxed);
  return !stopped_.load();
}

std::chrono::nanoseconds DrainAlarm::next_interval(std::chrono::nanoseconds last, std::uint64_t records) noexcept {
  if (records != 0) return kBusyInterval;
  return std::min<std::chrono::nanoseconds>(std::max<std::chrono::nanoseconds>(last, kBusyInterval) * 2, kIdleInterval);
}

void DrainAlarm::ring() noexcept {
  word_.fetch_add(1);
  syscall(SYS_futex, &word_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace npuscope::inject
