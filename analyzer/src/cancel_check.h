// Reading millions of rows stays cancellable: the viewer closing stops an analysis or a diff.
#pragma once

#include <atomic>
#include <cstdint>

#include "npuscope/analyzer/analyze.h"

namespace npuscope::analyzer {

// Counts rows; every 64Ki, throws AnalyzeCancelled if the analysis was cancelled.
class CancelCheck {
 public:
  explicit CancelCheck(const std::atomic<bool>* cancel) : cancel_(cancel) {}
  void row() {
    if (cancel_ != nullptr && (++rows_ & 0xffff) == 0 && cancel_->load(std::memory_order_relaxed)) {
      throw AnalyzeCancelled();
    }
  }

 private:
  const std::atomic<bool>* cancel_;
  std::uint32_t rows_ = 0;
};

}  // namespace npuscope::analyzer
