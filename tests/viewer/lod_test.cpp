// Level of detail (Note [Level of detail]): what is drawn covers every item in view exactly once,
// wide items one by one, narrow runs folded, and a zoomed-out row of a million items costs a few
// hundred draw items.
#include <gtest/gtest.h>

#include "npuscope/viewer/lod.h"

using namespace npuscope::viewer;

namespace {

// `n` items of `len` ns every `period` ns from t = 1000.
std::vector<TimelineItem> row_of(std::size_t n, std::int64_t len, std::int64_t period) {
  std::vector<TimelineItem> row(n);
  for (std::size_t i = 0; i < n; ++i) {
    row[i] = TimelineItem::make(1000 + static_cast<std::int64_t>(i) * period,
                                1000 + static_cast<std::int64_t>(i) * period + len, 0, static_cast<std::int64_t>(i), 0);
  }
  return row;
}

std::uint64_t total_count(const std::vector<DrawItem>& items) {
  std::uint64_t n = 0;
  for (const DrawItem& d : items) n += d.count;
  return n;
}

TEST(Lod, WideItemsAreDrawnOneByOne) {
  const auto row = row_of(100, 800, 1000);
  std::vector<DrawItem> out;
  visible_items(row, {0, 200'000, 1000}, out);  // 200 ns per px: every item is 4 px wide
  ASSERT_EQ(out.size(), 100u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].count, 1u);
    EXPECT_EQ(out[i].item, &row[i]);
  }
}

TEST(Lod, TheItemThatStartedBeforeTheViewIsIncluded) {
  const auto row = row_of(10, 800, 1000);
  std::vector<DrawItem> out;
  visible_items(row, {1500, 3500, 1000}, out);  // inside item 0, item 1, into item 2
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.front().item->id, 0u);
  EXPECT_EQ(out.back().item->id, 2u);
}

TEST(Lod, AMillionItemsZoomedOutFoldIntoAFewDrawItems) {
  const auto row = row_of(1'000'000, 500, 1000);  // 1 s of 0.5 us tasks
  std::vector<DrawItem> out;
  const ViewRange all{0, 1'000'002'000, 1280};
  visible_items(row, all, out);
  EXPECT_LE(out.size(), 1280 / 3 + 2) << "bounded by the pixels, not the items";
  EXPECT_EQ(total_count(out), row.size()) << "every item is in exactly one draw item";
  for (std::size_t i = 1; i < out.size(); ++i) EXPECT_GE(out[i].start_ns, out[i - 1].end_ns);
}

TEST(Lod, NarrowRunsBetweenWideItemsFoldAndWideOnesStay) {
  std::vector<TimelineItem> row = row_of(5, 10, 20);  // 5 tiny items at 1000..1090
  row.push_back(TimelineItem::make(10'000, 20'000, 0, 0, 0));
  std::vector<DrawItem> out;
  visible_items(row, {0, 40'000, 400}, out);  // 100 ns per px: tiny = 0.1 px, wide = 100 px
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].count, 5u);
  EXPECT_EQ(out[0].start_ns, 1000);
  EXPECT_EQ(out[0].end_ns, 1090);
  EXPECT_EQ(out[1].count, 1u);
  EXPECT_EQ(out[1].item, &row.back());
}

TEST(Lod, NothingToDraw) {
  std::vector<DrawItem> out;
  visible_items({}, {0, 100, 100}, out);
  visible_items(row_of(10, 10, 100), {5000, 6000, 100}, out);  // after the last item
  visible_items(row_of(10, 10, 100), {50, 50, 100}, out);      // an empty view
  EXPECT_TRUE(out.empty());
}

}  // namespace
