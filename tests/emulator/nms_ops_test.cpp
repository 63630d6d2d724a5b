// NonMaxSuppression: hand-worked selections (IoU suppression, score threshold, the per-class limit,
// center_point_box, flipped corners, batches and classes in order), the AI CPU run on the NPU, and
// the errors for bad shapes, thresholds and a missing count.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "emulator/task_end_records.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using NmsTest = OpTest;

// Box 1 overlaps box 0 with IoU 0.9 / 1.1 = 0.82; box 2 is apart. Corners [y1, x1, y2, x2].
const std::vector<float> kBoxes{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3};
const std::vector<float> kScores{0.9f, 0.8f, 0.7f};

Attrs nms_attrs(std::int64_t max, double iou, std::int64_t count) {
  return {{"max_output_boxes_per_class", max}, {"iou_threshold", iou}, {"count", count}};
}

I64s select(const std::vector<float>& boxes, const std::vector<float>& scores, Shape bs, Shape ss, Attrs a,
            DeviceRef device = DeviceRef::cpu()) {
  const Tensor b = floats(boxes, std::move(bs)).to(device), s = floats(scores, std::move(ss)).to(device);
  return call_op1("NonMaxSuppression", {b, s}, a).cpu().to_ints();
}

}  // namespace

TEST_F(NmsTest, SuppressesByIouThenScore) {
  EXPECT_EQ(select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, nms_attrs(3, 0.5, 2)), (I64s{0, 0, 0, 0, 0, 2}));
  // IoU threshold above 0.82: nothing suppressed.
  EXPECT_EQ(select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, nms_attrs(3, 0.9, 3)), (I64s{0, 0, 0, 0, 0, 1, 0, 0, 2}));
  // Only scores > 0.75 take part; at most one per class.
  Attrs thr = nms_attrs(3, 0.9, 2);
  thr.set("score_threshold", 0.75);
  EXPECT_EQ(select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, thr), (I64s{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, nms_attrs(1, 0.5, 1)), (I64s{0, 0, 0}));
}

TEST_F(NmsTest, CenterFormatFlippedCornersAndOrder) {
  // The same boxes as centres and sizes.
  Attrs center = nms_attrs(3, 0.5, 2);
  center.set("center_point_box", std::int64_t{1});
  EXPECT_EQ(select({0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 2.5f, 0.5f, 1, 1}, kScores, {1, 3, 4}, {1, 1, 3}, center),
            (I64s{0, 0, 0, 0, 0, 2}));
  // Corners in either order mean the same box.
  EXPECT_EQ(select({1, 1, 0, 0, 0, 0.1f, 1, 1.1f, 1, 3, 0, 2}, kScores, {1, 3, 4}, {1, 1, 3}, nms_attrs(3, 0.5, 2)),
            (I64s{0, 0, 0, 0, 0, 2}));
  // Two batches x two classes, in batch then class order; class 1 prefers box 2.
  std::vector<float> boxes = kBoxes;
  boxes.insert(boxes.end(), kBoxes.begin(), kBoxes.end());
  const std::vector<float> scores{0.9f, 0.8f, 0.7f, 0.1f, 0.2f, 0.3f, 0.9f, 0.8f, 0.7f, 0.1f, 0.2f, 0.3f};
  EXPECT_EQ(select(boxes, scores, {2, 3, 4}, {2, 2, 3}, nms_attrs(1, 0.5, 4), DeviceRef::npu()),
            (I64s{0, 0, 0, 0, 1, 2, 1, 0, 0, 1, 1, 2}));
}

TEST_F(NmsTest, RunsAsAnAiCpuTaskOnTheNpu) {
  npuscope::emulator::testing::EndRecords log;
  const Tensor b = floats(kBoxes, {1, 3, 4}).to(DeviceRef::npu()), s = floats(kScores, {1, 1, 3}).to(DeviceRef::npu());
  const Tensor y = call_op1("NonMaxSuppression", {b, s}, nms_attrs(3, 0.5, 2));
  const I64s selected = y.cpu().to_ints();  // waits for the task: its end record is in
  EXPECT_EQ(selected, (I64s{0, 0, 0, 0, 0, 2}));
  ASSERT_EQ(log.ends.size(), 1u);
  EXPECT_EQ(log.ends[0].task_type, npuscope::TaskType::kAiCpu);
  EXPECT_EQ(log.ends[0].fallback, 1);
  EXPECT_GT(log.ends[0].flops, 0u);
}

TEST_F(NmsTest, BadInputsNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] {
                         select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, nms_attrs(3, 1.5, 2));
                       }),
                       {"NonMaxSuppression", "iou_threshold", "[0, 1]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         select(kBoxes, kScores, {1, 3, 4}, {1, 3, 1}, nms_attrs(3, 0.5, 2));
                       }),
                       {"scores", "[1, 3, 1]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         select(kBoxes, kScores, {1, 4, 3}, {1, 1, 3}, nms_attrs(3, 0.5, 2));
                       }),
                       {"boxes", "[1, 4, 3]"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 select(kBoxes, kScores, {1, 3, 4}, {1, 1, 3}, {{"max_output_boxes_per_class", std::int64_t{3}}});
               }),
               {"count"}));
}
