// What the launching host thread knows about a task, handed to the thread that runs it.
//
// Note [Launch table]
// A device task's records arrive on the device worker (tensors, then kEnd), but two facts belong to
// the host thread that launched it: which thread that was (TASK.thread_id), and the step it was in
// (the "steps" dump filter is about tasks LAUNCHED in steps A-B). The kQueued record arrives on the
// launching thread, so there we store {thread, step, name} in a fixed table indexed by
// task_id % kSize; the worker reads it back by task_id. Each slot is a small seqlock (the key is
// cleared while the fields change), so a reader never takes fields of another task as its own. A
// slot is only reused after kSize later launches; a task still queued by then is reported as
// "launch info lost" (counted) — it keeps thread 0 and counts as outside every step.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace npuscope::inject {

class LaunchTable {
 public:
  struct Info {
    std::uint32_t thread_id = 0;
    std::int64_t step = -1;  // -1: not inside a step
    const char* name = nullptr;
  };

  static constexpr std::size_t kSize = std::size_t{1} << 16;  // 32 bytes each: 2 MiB

  LaunchTable() : slots_(new Slot[kSize]) {}

  void put(std::uint64_t task_id, const Info& info) noexcept {
    Slot& s = slots_[task_id & (kSize - 1)];
    s.key.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    s.thread_id.store(info.thread_id, std::memory_order_relaxed);
    s.step.store(info.step, std::memory_order_relaxed);
    s.name.store(info.name, std::memory_order_relaxed);
    s.key.store(task_id, std::memory_order_release);
  }

  bool get(std::uint64_t task_id, Info* out) const noexcept {
    const Slot& s = slots_[task_id & (kSize - 1)];
    if (s.key.load(std::memory_order_acquire) != task_id) return false;
    Info info{s.thread_id.load(std::memory_order_relaxed), s.step.load(std::memory_order_relaxed),
              s.name.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.key.load(std::memory_order_relaxed) != task_id) return false;
    *out = info;
    return true;
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> key{0};  // task_id, 0 while empty or being written
    std::atomic<std::uint32_t> thread_id{0};
    std::atomic<std::int64_t> step{-1};
    std::atomic<const char*> name{nullptr};
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace npuscope::inject
