// --compare NPU BENCH: the two sides (msprobe dumps, or npuscope traces with a PyTorch dump: Note
// [Dump comparison sides] in npuscope/comparator/dump_sides.h) read, paired by step and rank and
// compared on a thread of their own while the window stays live (Note [Dump comparison in the viewer] in
// npuscope/viewer/dump_comparison.h), for the Compare panel (dump_compare_panel.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/compare_dumps.h"
#include "npuscope/comparator/dump_sides.h"
#include "npuscope/viewer/dump_comparison.h"

namespace npuscope::viewer {

struct DumpCompareRequest {
  std::string npu, bench;                  // the sides: an msprobe dump, or an npuscope trace with a PyTorch dump
  comparator::DumpCompareOptions options;  // --mapping, --fuzzy-match (its progress is the job's)
};

// Reads and compares in the background (Note [Dump comparison in the viewer]).
class DumpCompareJob {
 public:
  explicit DumpCompareJob(DumpCompareRequest request);
  // Cancels a comparison still running (between entries) and waits for the thread.
  ~DumpCompareJob();
  DumpCompareJob(const DumpCompareJob&) = delete;
  DumpCompareJob& operator=(const DumpCompareJob&) = delete;

  const DumpCompareRequest& request() const { return request_; }
  // From the UI thread:
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  void wait();  // until finished (one frame for --screenshot)
  // The steps and ranks compared so far, in the NPU side's order.
  std::vector<const DumpComparison*> comparisons() const;
  // What it is doing ("reading NPU ...", "comparing step 0, rank 0 (1 of 2): 300 of 760 entries"),
  // and how far (0..1); "" once finished.
  std::string status() const;
  double fraction() const;
  // What went wrong: a dump that could not be read, steps whose dumps could not be compared; ""
  // none. notes(): dumps of one side with no counterpart.
  std::string error() const;
  std::vector<std::string> notes() const;

 private:
  void run();
  void set_status(std::string status);

  DumpCompareRequest request_;
  comparator::DumpSides sides_;  // the worker's until the first comparison is published; kept, as they point into it
  mutable std::mutex mutex_;     // guards what follows, up to the atomics
  std::vector<std::unique_ptr<DumpComparison>> done_;
  std::string status_, error_;
  std::vector<std::string> notes_;
  std::atomic<std::int64_t> entries_done_{0}, entries_total_{0};
  std::atomic<bool> cancel_{false}, finished_{false};
  std::thread worker_;  // last: started once everything above is built
};

}  // namespace npuscope::viewer
