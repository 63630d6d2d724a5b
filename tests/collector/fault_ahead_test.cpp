// Note [Faulting in ahead of the reader]: a helper faults in a filling array's pages without
// changing what the filler writes, and never outlives the filler waiting for progress.
#include "npuscope/collector/fault_ahead.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace npuscope::collector {
namespace {

constexpr std::size_t kRows = std::size_t{3} << 20;  // 24 MiB of int64: a few windows

// Fills `v` (reserved) with 0, 1, 2, ... telling `ahead` every 64Ki rows, then finishes.
void fill(std::vector<std::int64_t>& v, FaultAhead& ahead) {
  for (std::size_t i = 0; i < kRows; ++i) {
    v.push_back(static_cast<std::int64_t>(i));
    if ((i & 0xffff) == 0) ahead.progress(v.size() * sizeof(std::int64_t));
  }
  ahead.finished();
}

std::int64_t expected_sum() { return static_cast<std::int64_t>(kRows) * (static_cast<std::int64_t>(kRows) - 1) / 2; }

TEST(FaultAhead, AHelperLeavesTheFillersRowsAsWritten) {
  std::vector<std::int64_t> v;
  v.reserve(kRows);
  FaultAhead ahead(v);
  std::thread helper([&] {
    for (int i = 0; i < 100; ++i) ahead.help();  // between rows of its own
    ahead.help_until_finished();
  });
  fill(v, ahead);
  helper.join();
  ASSERT_EQ(v.size(), kRows);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), std::int64_t{0}), expected_sum());
  EXPECT_EQ(v[12345], 12345);
}

TEST(FaultAhead, AHelperWaitingReturnsWhenTheFillerFinishesOrFails) {
  std::vector<std::int64_t> v;
  v.reserve(kRows);
  FaultAhead ahead(v);
  std::thread helper([&] { ahead.help_until_finished(); });
  ahead.progress(kRows * sizeof(std::int64_t));  // the whole capacity: nothing left to fault in
  ahead.finished();                              // a helper waiting on that progress must wake
  helper.join();
  ahead.help();  // after the end: nothing, and no wait
  ahead.help_until_finished();
}

TEST(FaultAhead, AFinishedFillerWithoutProgressReleasesTheHelper) {
  std::vector<std::int64_t> v;
  v.reserve(1000);
  FaultAhead ahead(v);
  std::thread helper([&] { ahead.help_until_finished(); });
  ahead.finished();  // e.g. the reader threw before its first 64Ki rows
  helper.join();
  SUCCEED();
}

TEST(FaultAhead, AnEmptyArrayNeedsNoHelp) {
  std::vector<std::int64_t> v;
  FaultAhead ahead(v);
  ahead.help();
  ahead.finished();
  ahead.help_until_finished();
  EXPECT_TRUE(v.empty());
}

}  // namespace
}  // namespace npuscope::collector
