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

// Real nanoseconds since the session start (steady clock), or a ManualClock's time while one lives.
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

// Note [Manual clock]
// Host times follow the threads' real time (Note [Virtual time]), which a loaded machine or a
// sanitizer build stretches; a test of virtual time must not depend on it, nor sleep to make real
// time pass. While a ManualClock lives, real_now_ns() reads it in every thread: it starts at the real
// clock's reading and moves only when the test advances it, so host times are the modelled costs
// and what the test advances, and a test asserts exact values. When it ends the real clock takes
// over again, standing still until real time has caught up with it: no clock goes back.
// It costs the hot path nothing: it turns the calibrated TSC read off (Note [Cheap real time] in
// virtual_clock.cpp), and only the steady_clock path, taken until calibration and on machines
// without a usable TSC, looks for it. One at a time (a second is an InvalidArgument).
class ManualClock {
 public:
  ManualClock();
  ~ManualClock();
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  std::uint64_t now_ns() const;    // what real_now_ns() returns
  void advance(std::uint64_t ns);  // real time passing, in every thread
};

}  // namespace npuscope::emulator::vclock
