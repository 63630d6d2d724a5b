// A second thread faults in the pages of a big row array just ahead of the thread filling it.
//
// Note [Faulting in ahead of the reader]
// Filling a 10M-row array touches about 1 GB of fresh memory, and the kernel zeroes every page on
// its first touch: 10 % of `npuscope analyze`'s CPU time on 10M tasks went to clear_page_erms, all of
// it on the thread reading TASK, the longest of the two readers (Note [Reading in parallel] in
// analyzer/src/trace_data.cpp). The other reader (API calls) finishes first, so it takes the zeroing
// over: every 64Ki rows the filler publishes how far it got (progress), and the helper asks the
// kernel to fault in the next kWindow bytes (madvise MADV_POPULATE_WRITE, Linux 5.14; an older
// kernel refuses it and the filler faults its own pages as before). Only a window ahead, never the
// whole capacity: a reserve that overestimates (rows that are not kept) must not become resident.
// Faulting in does not change what the pages hold, so the helper never races with the filler's
// writes; a page the filler reached first is already present and costs nothing.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuscope::collector {

class FaultAhead {
 public:
  static constexpr std::size_t kWindow = std::size_t{64} << 20;

  // The pages of v's capacity (reserved before, and not grown while this lives).
  template <class T, class A>
  explicit FaultAhead(const std::vector<T, A>& v)
      : begin_(reinterpret_cast<std::uintptr_t>(v.data())), end_(begin_ + v.capacity() * sizeof(T)) {}

  // Filler: `bytes` of the array are written.
  void progress(std::size_t bytes) {
    used_.store(bytes, std::memory_order_relaxed);
    used_.notify_one();
  }
  // Filler: done (also when it failed): a helper waiting in help_until_finished returns.
  void finished() {
    finished_.store(true, std::memory_order_release);
    used_.store(kFinished, std::memory_order_relaxed);  // a value no progress() stores: wakes the helper
    used_.notify_one();
  }

  // Helper: faults in up to kWindow bytes ahead of the filler's progress; never blocks.
  void help() {
    if (refused_ || finished_.load(std::memory_order_acquire)) return;
    fault_in(used_.load(std::memory_order_relaxed));
  }
  // Helper, once it has nothing else to do: keeps ahead until the filler finishes.
  void help_until_finished() {
    std::size_t seen = used_.load(std::memory_order_relaxed);
    while (!refused_ && !finished_.load(std::memory_order_acquire) && faulted_ < end_) {
      fault_in(seen);
      used_.wait(seen, std::memory_order_relaxed);
      seen = used_.load(std::memory_order_relaxed);
    }
  }

 private:
  static constexpr std::size_t kFinished = SIZE_MAX;

  // Faults in the pages up to kWindow bytes past `used` bytes (kFinished: none).
  void fault_in(std::size_t used) {
    constexpr std::uintptr_t kPage = 4096;
    if (used >= end_ - begin_) return;
    const std::uintptr_t until = std::min((begin_ + used + kWindow + kPage - 1) & ~(kPage - 1), end_);
    const std::uintptr_t from = std::max(faulted_, begin_ & ~(kPage - 1));
    if (until <= from) return;
    if (::madvise(reinterpret_cast<void*>(from), until - from, MADV_POPULATE_WRITE) != 0) refused_ = true;
    faulted_ = until;
  }

  const std::uintptr_t begin_, end_;
  std::atomic<std::size_t> used_{0};
  std::atomic<bool> finished_{false};
  std::uintptr_t faulted_ = 0;  // the helper's: pages below it were asked for
  bool refused_ = false;        // the kernel has no MADV_POPULATE_WRITE
};

}  // namespace npuscope::collector
