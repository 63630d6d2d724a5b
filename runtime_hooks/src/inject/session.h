// One profiling session: the per-thread producer state, the drain thread and its lifecycle.
//
// Note [Session lifecycle]
// State (Kineto's RunloopState idea), owned by the drain thread, which alone changes it:
//   idle -> recording     the drain thread started (init returns only then)
//   recording -> flushing on_shutdown: producers stop recording (later records are counted as
//                          dropped), the drain thread drains every buffer, closes open pairs,
//                          writes the stats
//   flushing -> finalized  the writer finalized the trace (META.status = 'complete')
//   any -> aborted         the writer failed (disk full, ...): said once on stderr; producers drop
// Producers read the state with one relaxed load per record. A record whose hook call overlaps the
// recording -> flushing switch is still drained (Note [Stopping without a grace period]). A session
// object is never freed (hook calls may race with the end of the process), and a thread keeps its
// buffer until it exits, so no hook call can touch freed memory.
// A fork()ed child inherits the session but not its drain thread: there the session is aborted at
// once (its records dropped, its shutdown a no-op); the parent's trace is the parent's alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drain_alarm.h"
#include "launch_table.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/runtime_hooks/inject_config.h"
#include "record_buffer.h"
#include "tensor_capture.h"

namespace npuscope::inject {

enum class State : std::uint8_t { kIdle, kRecording, kFlushing, kFinalized, kAborted };
const char* state_name(State s);

class RowBuilder;

// Note [Stopping without a grace period]
// A hook call that read `recording` just before the switch to flushing may still be storing its
// record when the drain thread drains for the last time; that record would be lost, uncounted. A
// fixed grace period (the old 1 ms sleep at exit) neither covers a hook call whose thread is
// preempted for longer nor is free: every profiled process paid it. Instead each hook call marks
// its thread `in_hook` and then reads the state again (enter_hook), and the drain thread, after the
// switch, waits until no thread is `in_hook` (wait_for_hook_calls): a Dekker handshake. Either
// the drain thread sees the flag, or the hook call sees `flushing` and counts its record as
// dropped after stop. The one gap is a flag store still in its core's store buffer while the
// drain thread looks; a store leaves it within microseconds (and at any interrupt, context switch
// or VM exit), so the drain thread lets kStoreDrain pass first. A full fence on the hook side would
// close the gap formally at ~5 ns per record; membarrier(PRIVATE_EXPEDITED) would too, but
// registering for it in a process that already has threads waits an RCU grace period (~10 ms
// here), more than it saves. A thread that attaches after the switch takes threads_mutex_ after
// the drain thread's snapshot, so it sees `flushing`. The hook side costs two plain stores and a
// load.

// Note [A stop is not held up by fast producers]
// A drain round reads each buffer until it has caught up with its producer. Producers that record
// faster than the drain thread writes (four threads in a tight loop, or any thread while the drain
// thread is starved of CPU) keep it from ever catching up, and on_shutdown, which waits for the
// drain thread to switch to flushing, waited with them: for seconds, until they stopped by
// themselves, and their records were all kept where the stop should have counted them as dropped.
// So while recording, a round drains each buffer in slices and looks for the stop between two; the
// final round, after the switch, drains to the end (the producers have stopped storing).

// What one producer thread owns in a session.
struct ThreadState {
  explicit ThreadState(ChunkPool& pool) : queue(pool) {}
  ThreadBuffer queue;
  TensorCapture capture;
  std::int64_t step = -1;            // this thread's current step (-1: none)
  std::atomic<bool> in_hook{false};  // inside a hook call (Note [Stopping without a grace period])
};

// This thread's state in the session numbered `generation` (TLS, initial-exec: the hot path's
// one TLS access is a plain load; constinit: no TLS wrapper call).
struct ThreadSlot {
  std::uint64_t generation;
  ThreadState* state;
};
extern thread_local constinit ThreadSlot t_slot __attribute__((tls_model("initial-exec")));

class Session {
 public:
  Session(InjectConfig config, std::unique_ptr<collector::TraceWriter> writer);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the drain thread; returns once the session records. Throws if the thread cannot start.
  void start();
  // on_shutdown: stop, drain, finalize, join the drain thread. Idempotent; blocks until done.
  void shutdown() noexcept;
  State state() const noexcept { return state_.load(std::memory_order_acquire); }
  // pthread_atfork child handler: the child is single-threaded here.
  void abandon_in_forked_child() noexcept;

  // ---- hot path (any producer thread) ----
  bool recording() const noexcept { return state_.load(std::memory_order_relaxed) == State::kRecording; }
  // This thread's state, created on its first record; null when the thread is exiting.
  ThreadState* thread() noexcept {
    const ThreadSlot& slot = t_slot;
    if (slot.generation == generation_) [[likely]]
      return slot.state;
    return attach();
  }
  // A hook call's prologue: this thread's state, marked in_hook, or null when the record is not to
  // be stored (counted). Every non-null return is paired with leave_hook.
  ThreadState* enter_hook() noexcept {
    if (!recording()) [[unlikely]] {
      count_late_drop();
      return nullptr;
    }
    ThreadState* t = thread();
    if (t == nullptr) [[unlikely]]
      return nullptr;
    t->in_hook.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // keeps the flag store before the load below
    if (!recording()) [[unlikely]] {
      leave_hook(*t);
      count_late_drop();
      return nullptr;
    }
    return t;
  }
  static void leave_hook(ThreadState& t) noexcept { t.in_hook.store(false, std::memory_order_release); }
  void count_late_drop() noexcept { late_drops_.fetch_add(1, std::memory_order_relaxed); }
  void count_launch_info_lost() noexcept { launch_info_lost_.fetch_add(1, std::memory_order_relaxed); }
  // The step a launch on a thread belongs to: the thread's own, else the last one any thread began.
  std::int64_t launch_step(const ThreadState& t) const noexcept {
    return t.step >= 0 ? t.step : global_step_.load(std::memory_order_relaxed);
  }
  void set_global_step(std::int64_t step) noexcept { global_step_.store(step, std::memory_order_relaxed); }

  const InjectConfig& config() const noexcept { return config_; }
  LaunchTable& launches() noexcept { return launches_; }
  CaptureShared& capture() noexcept { return capture_; }

 private:
  ThreadState* attach() noexcept;
  void drain_main();
  std::uint64_t drain_round(RowBuilder& rows);
  void finish(RowBuilder& rows);
  void wait_for_hook_calls();
  // The producers' states now (drain thread: only it frees them, so they stay valid for it).
  std::vector<ThreadState*> thread_states();
  void report_stats(RowBuilder& rows, bool all);
  void transition(State to);

  const InjectConfig config_;
  const std::uint64_t generation_;
  std::unique_ptr<collector::TraceWriter> writer_;  // the drain thread's once it runs
  DrainAlarm alarm_;                                // before pool_, which rings it; shutdown() stops it
  ChunkPool pool_;
  LaunchTable launches_;
  CaptureShared capture_;
  std::atomic<State> state_{State::kIdle};
  std::atomic<std::int64_t> global_step_{-1};
  std::atomic<std::int64_t> late_drops_{0};
  std::atomic<std::int64_t> launch_info_lost_{0};

  std::mutex threads_mutex_;  // guards threads_ (producers add, the drain thread removes)
  std::vector<std::unique_ptr<ThreadState>> threads_;
  std::uint64_t retired_dropped_[kNumTags] = {};  // drain thread: drops of threads already removed

  std::mutex wake_mutex_;  // guards started_
  std::condition_variable wake_;
  bool started_ = false;
  std::atomic<bool> shutdown_called_{false};
  bool forked_child_ = false;
  std::int64_t unfinished_hook_calls_ = 0;  // drain thread: hook calls still running kHookWaitLimit after stop
  std::thread drain_;
  std::optional<std::int64_t> reported_[std::size(collector::kStats)];  // drain thread: stats last written
};

}  // namespace npuscope::inject
