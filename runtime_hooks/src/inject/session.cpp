// See Note [Session lifecycle] in session.h.
#include "session.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "row_builder.h"

namespace npuscope::inject {

thread_local constinit ThreadSlot t_slot __attribute__((tls_model("initial-exec"))) = {0, nullptr};

namespace {

constexpr auto kCommitInterval = std::chrono::milliseconds(500);  // durable at least this often
// Note [Stopping without a grace period]: time for in_hook stores to leave the store buffers.
constexpr auto kStoreDrain = std::chrono::microseconds(50);
// For a hook call to finish at stop: a tensor capture of a large tensor may take a while.
constexpr auto kHookWaitLimit = std::chrono::seconds(1);
constexpr std::size_t kWarmChunks = 32;  // 2 MiB of pre-faulted chunks ready for producers
// While recording, a thread's buffer is drained in slices of this many entries, so that a stop is
// seen between two of them (Note [A stop is not held up by fast producers]).
constexpr std::uint64_t kDrainSlice = kSlotsPerChunk;

std::atomic<std::uint64_t> g_next_generation{1};  // 0: no session (t_slot's initial value)

thread_local constinit bool t_exited __attribute__((tls_model("initial-exec"))) = false;

// Marks this thread's buffers retired when it exits, so the drain thread frees them once drained.
// The main thread's are kept: its TLS dies inside exit(), before the atexit handler that calls
// on_shutdown, and the records it sends from there (the final synchronize) must still be recorded.
struct ExitGuard {
  std::vector<ThreadState*> owned;
  ~ExitGuard() {
    if (static_cast<pid_t>(syscall(SYS_gettid)) == getpid()) return;
    t_slot = {0, nullptr};
    t_exited = true;
    for (ThreadState* s : owned) s->queue.retire();
  }
};
thread_local ExitGuard t_guard;

std::atomic<Session*> g_latest{nullptr};  // the session a fork()ed child must abandon

void on_fork_child() {
  if (Session* s = g_latest.load()) s->abandon_in_forked_child();
}

}  // namespace

const char* state_name(State s) {
  switch (s) {
    case State::kIdle: return "idle";
    case State::kRecording: return "recording";
    case State::kFlushing: return "flushing";
    case State::kFinalized: return "finalized";
    case State::kAborted: return "aborted";
  }
  return "?";
}

Session::Session(InjectConfig config, std::unique_ptr<collector::TraceWriter> writer)
    : config_(std::move(config)),
      generation_(g_next_generation.fetch_add(1)),
      writer_(std::move(writer)),
      pool_(config_.buffer_bytes, &alarm_),
      launches_(config_.dump != DumpMode::kNone),
      capture_(config_, launches_, pool_) {}

// ---- producers ----------------------------------------------------------------------------------

ThreadState* Session::attach() noexcept {
  if (t_exited) {
    count_late_drop();
    return nullptr;
  }
  try {
    auto state = std::make_unique<ThreadState>(pool_);
    ThreadState* raw = state.get();
    {
      std::lock_guard lock(threads_mutex_);
      threads_.push_back(std::move(state));
    }
    t_guard.owned.push_back(raw);  // if this throws the state is never retired: kept, not leaked twice
    t_slot = {generation_, raw};
    return raw;
  } catch (...) {
    count_late_drop();
    return nullptr;
  }
}

// ---- lifecycle ----------------------------------------------------------------------------------

void Session::transition(State to) {
  const State from = state_.load(std::memory_order_relaxed);
  const bool legal = (from == State::kIdle && to == State::kRecording) ||
                     (from == State::kRecording && to == State::kFlushing) ||
                     (from == State::kFlushing && to == State::kFinalized) || to == State::kAborted;
  if (!legal) {
    std::fprintf(stderr, "npuscope: internal error: injection state %s -> %s\n", state_name(from), state_name(to));
  }
  state_.store(to, std::memory_order_release);
}

void Session::start() {
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  g_latest.store(this);
  drain_ = std::thread([this] { drain_main(); });
  std::unique_lock lock(wake_mutex_);
  wake_.wait(lock, [this] { return started_; });
  lock.unlock();
  if (state() != State::kRecording) {
    drain_.join();
    throw collector::TraceError("the trace writer failed before recording started");
  }
}

void Session::abandon_in_forked_child() noexcept {
  forked_child_ = true;
  state_.store(State::kAborted, std::memory_order_relaxed);
}

void Session::shutdown() noexcept {
  if (forked_child_ || shutdown_called_.exchange(true)) return;
  alarm_.stop();
  if (drain_.joinable() && drain_.get_id() != std::this_thread::get_id()) drain_.join();
}

void Session::drain_main() {
  pthread_setname_np(pthread_self(), "npuscope-drain");  // as top, perf and gdb show it (drain_bench finds it so)
  try {
    RowBuilder rows(*writer_, pool_);
    transition(State::kRecording);
    {
      std::lock_guard lock(wake_mutex_);
      started_ = true;
    }
    wake_.notify_all();
    auto last_commit = std::chrono::steady_clock::now();
    std::chrono::nanoseconds interval = kBusyInterval;  // Note [Drain pacing]
    while (alarm_.sleep(interval, interval > kBusyInterval)) {
      interval = DrainAlarm::next_interval(interval, drain_round(rows));
      const auto now = std::chrono::steady_clock::now();
      if (now - last_commit >= kCommitInterval) {
        report_stats(rows, false);
        if (rows.wrote_since_commit()) writer_->commit();  // the writer commits on adds; idle periods too
        rows.committed();
        last_commit = now;
      }
    }
    finish(rows);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope: error: writing the trace failed (%s); profiling stopped, the trace is incomplete\n",
                 e.what());
    transition(State::kAborted);
    try {
      writer_.reset();  // commits what it has; the trace stays marked incomplete
    } catch (...) {
    }
    {
      std::lock_guard lock(wake_mutex_);
      started_ = true;
    }
    wake_.notify_all();
  }
}

void Session::finish(RowBuilder& rows) {
  transition(State::kFlushing);
  wait_for_hook_calls();
  drain_round(rows);
  rows.finish();
  report_stats(rows, true);
  writer_->finalize();
  writer_.reset();
  pool_.trim();
  transition(State::kFinalized);
}

// Returns once no hook call that saw `recording` is still storing (Note [Stopping without a grace
// period]). Called on the drain thread after the switch to flushing.
void Session::wait_for_hook_calls() {
  // Spun, not slept: a sleep this short still costs a timer slack (50 us) and a wake-up.
  const auto stores_out = std::chrono::steady_clock::now() + kStoreDrain;
  while (std::chrono::steady_clock::now() < stores_out) std::this_thread::yield();
  // A hook call takes well under a microsecond unless its thread is preempted: yield until it is
  // done. A thread that never comes back (stopped in a debugger, or interrupted mid-hook by a signal
  // handler that exits) may lose the record it was storing: counted, after kHookWaitLimit.
  const auto deadline = std::chrono::steady_clock::now() + kHookWaitLimit;
  for (ThreadState* t : thread_states()) {
    while (t->in_hook.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > deadline) {
        ++unfinished_hook_calls_;
        break;
      }
      std::this_thread::yield();
    }
  }
}

// ---- draining -----------------------------------------------------------------------------------

std::vector<ThreadState*> Session::thread_states() {
  std::lock_guard lock(threads_mutex_);
  std::vector<ThreadState*> states;
  states.reserve(threads_.size());
  for (const auto& t : threads_) states.push_back(t.get());
  return states;
}

std::uint64_t Session::drain_round(RowBuilder& rows) {
  std::uint64_t consumed = 0;
  const auto add = [&rows](Tag tag, const Slot* s) { rows.add(tag, s); };
  const bool to_the_end = state_.load(std::memory_order_relaxed) != State::kRecording;
  for (ThreadState* t : thread_states()) {
    const bool retired = t->queue.retired();  // read first: everything it pushed before is visible
    if (retired || to_the_end) {
      consumed += t->queue.consume(add);  // its producer is done: this ends
    } else {
      std::uint64_t slice = 0;
      do {
        slice = t->queue.consume(add, kDrainSlice);
        consumed += slice;
      } while (slice == kDrainSlice && !alarm_.stopped());
    }
    if (!retired) continue;
    for (int k = 0; k < kNumTags; ++k) retired_dropped_[k] += t->queue.dropped(static_cast<Tag>(k));
    std::unique_ptr<ThreadState> dead;
    std::lock_guard lock(threads_mutex_);
    for (auto& owned : threads_) {
      if (owned.get() == t) {
        dead = std::move(owned);
        owned = std::move(threads_.back());
        threads_.pop_back();
        break;
      }
    }
  }
  rows.flush();
  if (state_.load(std::memory_order_relaxed) == State::kRecording) pool_.prefill(kWarmChunks);
  return consumed;
}

namespace {

// The data-loss counter of each tag (Note [Trace stats]): its record kind's; a collective's links count
// with the collective.
using collector::StatId;
constexpr StatId kDroppedByTag[] = {
#define NPUSCOPE_DROPPED_BY_TAG(Record, name, Kind, lost) StatId::kDropped##Kind,
    NPUSCOPE_HOOK_RECORDS(NPUSCOPE_DROPPED_BY_TAG)
#undef NPUSCOPE_DROPPED_BY_TAG
        StatId::kDroppedCollective};
static_assert(std::size(kDroppedByTag) == kNumTags, "one dropped_records counter per record kind");

}  // namespace

void Session::report_stats(RowBuilder& rows, bool all) {
  std::uint64_t dropped[kNumTags];
  std::copy(std::begin(retired_dropped_), std::end(retired_dropped_), dropped);
  {
    std::lock_guard lock(threads_mutex_);
    for (const auto& t : threads_) {
      for (int k = 0; k < kNumTags; ++k) dropped[k] += t->queue.dropped(static_cast<Tag>(k));
    }
  }
  const std::int64_t late = late_drops_.load();
  std::int64_t total = late + unfinished_hook_calls_;
  std::int64_t by_stat[std::size(collector::kStats)] = {};  // tags that share a counter add up
  for (int k = 0; k < kNumTags; ++k) {
    total += static_cast<std::int64_t>(dropped[k]);
    by_stat[static_cast<std::size_t>(kDroppedByTag[k])] += static_cast<std::int64_t>(dropped[k]);
  }
  std::vector<std::pair<StatId, std::int64_t>> stats;
  bool listed[std::size(collector::kStats)] = {};
  for (const StatId id : kDroppedByTag) {
    const auto i = static_cast<std::size_t>(id);
    if (!std::exchange(listed[i], true)) stats.emplace_back(id, by_stat[i]);
  }
  const RowCounters& c = rows.counters();
  stats.insert(stats.end(), {{StatId::kDroppedRecords, total},
                             {StatId::kDroppedAfterStop, late},
                             {StatId::kDroppedUnfinishedAtStop, unfinished_hook_calls_},
                             {StatId::kRecords, c.records},
                             {StatId::kTensorDumps, c.tensors_dumped},
                             {StatId::kTensorBytesDumped, c.tensor_bytes_dumped},
                             {StatId::kTensorBytesCompressed, c.tensor_bytes_compressed},
                             {StatId::kTensorDumpsSkipped, capture_.dumps_skipped_cap.load()},
                             {StatId::kTensorDumpsDroppedMemory, capture_.dumps_skipped_memory.load()},
                             {StatId::kOrphanTensors, capture_.orphan_tensors.load()},
                             {StatId::kLaunchInfoLost, launch_info_lost_.load()},
                             {StatId::kUnpairedApi, c.unpaired_api},
                             {StatId::kUnpairedMarkers, c.unpaired_markers},
                             {StatId::kOverflowTasks, c.overflow_tasks},
                             {StatId::kSaturatedTasks, c.saturated_tasks},
                             {StatId::kUnderflowTasks, c.underflow_tasks}});
  for (const auto& [id, value] : stats) {
    std::optional<std::int64_t>& last = reported_[static_cast<std::size_t>(id)];
    const bool changed = last ? *last != value : value != 0;
    if (!all && !changed) continue;
    writer_->set_stat(id, value);
    last = value;
  }
}

}  // namespace npuscope::inject
