// The one clock of a session: nanoseconds since the session started.
//
// Note [Virtual time]
// Device task times come from the cost model, not from how long the CPU took to emulate them.
// Host threads advance by their real elapsed time MINUS the time they spent blocked on emulation
// work (waiting for the device worker), PLUS the modelled host cost of each launch; a synchronize
// moves the calling thread's clock forward to the completion time of what it waited for. So the
// timeline shows what an NPU would show, and "host-bound or device-bound?" is a real question.
// Each host thread has its own clock (all start at the session start).
#pragma once

#include <cstdint>

namespace npuscope::emulator::vclock {

// Real nanoseconds since the session start (steady clock).
std::uint64_t real_now_ns();
// This thread's virtual host time.
std::uint64_t host_now_ns();
// Moves this thread's clock forward to `virtual_ns` if it is behind (after a synchronize).
void advance_to(std::uint64_t virtual_ns);
// Adds modelled host work (e.g. the host-side cost of a launch) to this thread's clock.
void advance_by(std::uint64_t ns);
// Small, stable index of the calling thread (0 for the first thread that asked).
std::uint32_t thread_index();

// While alive, the calling thread's real time does not count as host time (it is blocked on the
// emulator). Nesting is allowed.
class BlockedScope {
 public:
  BlockedScope();
  ~BlockedScope();
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  std::uint64_t start_real_ns_;
};

}  // namespace npuscope::emulator::vclock
