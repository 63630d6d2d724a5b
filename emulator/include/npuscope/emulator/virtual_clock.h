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

// Note [Hand-offs between host threads]
// Each host thread has its own clock, which counts only that thread's own work. When one thread
// hands work to another and waits for it (PyTorch's backward(): the caller waits while the autograd
// engine's thread runs the backward functions), the clocks must meet, or the worker's records land
// at an unrelated time: the giver publishes its time (publish), the worker starts from the latest
// time published (take_published: its clock is set to it, forward or back; a worker that publishes
// when it finishes each piece never goes back behind its own records), and the waiter, its wait
// excluded as blocked time, resumes at the latest time published (advance_to(published())).
void publish();
std::uint64_t published();
void take_published();

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
