// What the launching host thread knows about a task, handed to the thread that runs it.
//
// Note [Launch table]
// When tensors are dumped, the dump filters need a fact of the host thread that launched a task:
// the step it was in (the "steps" filter is about tasks LAUNCHED in steps A-B). The kQueued record
// arrives on the launching thread (the emulator sends it only to subscribers that want it: without
// dumps we do not), so there we store {step, name} in a fixed table indexed by task_id % kSize;
// the worker reads it back by task_id. (Which thread launched a task, TASK.thread_id, comes with
// every task record: TaskRecord::launch_thread.) Each slot is a small seqlock (the key is
// cleared while the fields change), so a reader never takes fields of another task as its own. A
// slot is only reused after kSize later launches; a task still queued by then is reported as
// "launch info lost" (counted) and counts as outside every step.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace npuscope::inject {

class LaunchTable {
 public:
  struct Info {
    std::int64_t step = -1;  // -1: not inside a step
    const char* name = nullptr;
  };

  static constexpr std::size_t kSize = std::size_t{1} << 16;  // 24 bytes each: 1.5 MiB

  // Only a session that dumps tensors uses the table (and pays its memory).
  explicit LaunchTable(bool used) : slots_(used ? new Slot[kSize] : nullptr) {}

  // Without the table (no dumps) put() keeps nothing and get() finds nothing: a listener may still be
  // sent kQueued records it did not ask for.
  void put(std::uint64_t task_id, const Info& info) noexcept {
    if (!slots_) [[unlikely]]
      return;
    Slot& s = slots_[task_id & (kSize - 1)];
    s.key.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    s.step.store(info.step, std::memory_order_relaxed);
    s.name.store(info.name, std::memory_order_relaxed);
    s.key.store(task_id, std::memory_order_release);
  }

  bool get(std::uint64_t task_id, Info* out) const noexcept {
    if (!slots_) [[unlikely]]
      return false;
    const Slot& s = slots_[task_id & (kSize - 1)];
    if (s.key.load(std::memory_order_acquire) != task_id) return false;
    Info info{s.step.load(std::memory_order_relaxed), s.name.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.key.load(std::memory_order_relaxed) != task_id) return false;
    *out = info;
    return true;
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> key{0};  // task_id, 0 while empty or being written
    std::atomic<std::int64_t> step{-1};
    std::atomic<const char*> name{nullptr};
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace npuscope::inject
