// AsStrided and ViewCopy: against a naive strided loop for transposes, expands (stride 0), offsets,
// strided innermost dims and every element size; NPU bytes == CPU bytes; ViewCopy in place and into
// a fresh output; views outside the storage (kernel faults) and bad attributes.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "emulator/alias_test_util.h"
#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/dispatch.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class StridedCopyTest : public OpTest {};

Attrs view_attrs(const I64s& size, const I64s& stride, std::int64_t offset) {
  return {{"size", size}, {"stride", stride}, {"storage_offset", offset}};
}

// The storage positions of a view in row-major order of `size`.
I64s positions(const I64s& size, const I64s& stride, std::int64_t offset) {
  I64s out{offset};
  for (std::size_t d = 0; d < size.size(); ++d) {
    I64s next;
    for (std::int64_t base : out) {
      for (std::int64_t i = 0; i < size[d]; ++i) next.push_back(base + i * stride[d]);
    }
    out = next;
  }
  return out;
}

struct ViewCase {
  I64s size, stride;
  std::int64_t offset;
};
const std::vector<ViewCase> kViews{
    {{4, 6}, {1, 4}, 0},         // a transpose of [6, 4]
    {{2, 3, 4}, {12, 1, 3}, 0},  // transpose(1, 2) of [2, 4, 3]
    {{3, 5}, {0, 1}, 2},         // expand of a row, with an offset
    {{2, 2, 3}, {1, 12, 4}, 1},  // permuted, nothing contiguous
    {{5}, {2}, 1},               // every other element
    {{2, 1, 3}, {6, 99, 1}, 3},  // a size-1 dim with any stride
    {{24}, {1}, 0},              // the whole storage
    {{0, 3}, {3, 1}, 0},         // empty
};

}  // namespace

TEST_F(StridedCopyTest, AsStridedMatchesNaiveLoopForEveryDtype) {
  const I64s storage_values = [] {
    I64s v(24);
    for (int i = 0; i < 24; ++i) v[i] = i * 3 - 20;
    return v;
  }();
  for (DType dt : {DType::kF32, DType::kF16, DType::kI64, DType::kI32, DType::kBool, DType::kU8}) {
    const Tensor storage = ints(storage_values, {24}, dt);
    const I64s stored = storage.to_ints();
    for (const ViewCase& v : kViews) {
      const Attrs a = view_attrs(v.size, v.stride, v.offset);
      const Tensor y = call_op1("AsStrided", {storage}, a);
      EXPECT_EQ(y.shape(), Shape(v.size.begin(), v.size.end()));
      I64s want;
      for (std::int64_t p : positions(v.size, v.stride, v.offset)) want.push_back(stored[p]);
      EXPECT_EQ(y.to_ints(), want) << dtype_name(dt) << " size " << shape_str(y.shape());
      EXPECT_TRUE(npu_bytes_match_cpu("AsStrided", {storage}, a)) << dtype_name(dt);
    }
  }
}

TEST_F(StridedCopyTest, ViewCopyWritesOnlyTheViewsPositions) {
  const Tensor storage = Tensor::randn({24}, DType::kF32, DeviceRef::cpu(), 1);
  for (const ViewCase& v : kViews) {
    if (v.stride[0] == 0) continue;  // writing through an expand is not a copy_ target
    const Attrs a = view_attrs(v.size, v.stride, v.offset);
    std::int64_t n = 1;
    for (std::int64_t s : v.size) n *= s;
    const Tensor src = Tensor::randn(Shape(v.size.begin(), v.size.end()), DType::kF32, DeviceRef::cpu(), 2);
    Doubles want = to_vec(storage);
    const Doubles sv = to_vec(src);
    const I64s pos = positions(v.size, v.stride, v.offset);
    for (std::int64_t i = 0; i < n; ++i) want[pos[i]] = sv[i];
    EXPECT_EQ(to_vec(call_op1("ViewCopy", {storage, src}, a)), want);                     // a fresh output
    EXPECT_EQ(to_vec(run_in_place("ViewCopy", {storage, src}, a, Backend::kCpu)), want);  // in place
    EXPECT_EQ(to_vec(run_in_place("ViewCopy", {storage, src}, a, Backend::kNpu)), want);
    EXPECT_TRUE(npu_bytes_match_cpu("ViewCopy", {storage, src}, a));
  }
  // f16 and int64: bytes copied exactly.
  const Tensor h = Tensor::randn({12}, DType::kF16, DeviceRef::cpu(), 3);
  const Tensor hs = Tensor::randn({3, 2}, DType::kF16, DeviceRef::cpu(), 4);
  EXPECT_TRUE(npu_bytes_match_cpu("ViewCopy", {h, hs}, view_attrs({3, 2}, {1, 3}, 0)));
  const Tensor l = ints({1, 2, 3, 4, 5, 6}, {6});
  EXPECT_EQ(call_op1("ViewCopy", {l, ints({-1, -2}, {2})}, view_attrs({2}, {3}, 1)).to_ints(),
            (I64s{1, -1, 3, 4, -2, 6}));
}

TEST_F(StridedCopyTest, AsStridedInPlaceOverTheWholeStorage) {
  const Tensor storage = Tensor::randn({10}, DType::kF32, DeviceRef::cpu(), 1);
  EXPECT_EQ(to_vec(run_in_place("AsStrided", {storage}, view_attrs({10}, {1}, 0), Backend::kCpu)), to_vec(storage));
}

TEST_F(StridedCopyTest, ViewOutsideTheStorageIsAKernelFault) {
  const Tensor storage = floats({1, 2, 3, 4, 5, 6}, {6});
  const Attrs a = view_attrs({2, 3}, {3, 1}, 1);  // reaches element 6
  EXPECT_TRUE(mentions(error_of([&] { call_op1("AsStrided", {storage}, a); }),
                       {"AsStrided", "reaches storage element 6", "6 elements"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("AsStrided", {storage.to(DeviceRef::npu())}, a).cpu(); }),
                       {"AsStrided", "reaches storage element 6"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ViewCopy", {storage, floats({0, 0, 0, 0, 0, 0}, {2, 3})}, a);
                       }),
                       {"ViewCopy", "reaches storage element 6"}));
  // The device still works after the fault was reported.
  EXPECT_EQ(to_vec(call_op1("AsStrided", {storage.to(DeviceRef::npu())}, view_attrs({2}, {2}, 0)).cpu()),
            (Doubles{1, 3}));
}

TEST_F(StridedCopyTest, BadAttributesNameTheOp) {
  const Tensor storage = floats({1, 2, 3, 4, 5, 6}, {6});
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("AsStrided", {storage}, view_attrs({2, 3}, {1}, 0));
                       }),
                       {"AsStrided", "size has 2 dims", "stride has 1"}));
  EXPECT_TRUE(mentions(error_of([&] { call_op1("AsStrided", {storage}, view_attrs({2}, {-1}, 0)); }),
                       {"AsStrided", "stride -1"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("AsStrided", {storage.view({2, 3})}, view_attrs({2}, {1}, 0));
                       }),
                       {"AsStrided", "1-D", "[2, 3]"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ViewCopy", {storage, ints({1, 2}, {2})}, view_attrs({2}, {1}, 0));
                       }),
                       {"ViewCopy", "same dtype"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         call_op1("ViewCopy", {storage, floats({1, 2, 3}, {3})}, view_attrs({2}, {1}, 0));
                       }),
                       {"ViewCopy", "src [3]"}));
  EXPECT_TRUE(
      mentions(error_of([&] {
                 call_op1("AsStrided", {storage}, view_attrs({1 << 20, 1 << 20}, {std::int64_t{1} << 50, 1}, 0));
               }),
               {"AsStrided", "overflows"}));
}

// Views larger than a 16 x 16 tile, with partial tiles: the tiled transpose path of both ops.
TEST_F(StridedCopyTest, LargeTransposesMatchNaiveLoop) {
  const std::int64_t n = 5 * 37 * 45;
  const Tensor storage = Tensor::randn({n}, DType::kF32, DeviceRef::cpu(), 1);
  const Doubles sv = to_vec(storage);
  const std::vector<ViewCase> views{
      {{45, 37}, {1, 45}, 0},              // t() of [37, 45]
      {{5, 45, 37}, {37 * 45, 1, 45}, 0},  // transpose(1, 2) of [5, 37, 45]
      {{45, 5, 37}, {1, 37 * 45, 45}, 0},  // permute(2, 0, 1)
      {{20, 33}, {1, 40}, 7},              // a transposed window with an offset
  };
  for (const ViewCase& v : views) {
    const Attrs a = view_attrs(v.size, v.stride, v.offset);
    const I64s pos = positions(v.size, v.stride, v.offset);
    Doubles want;
    for (std::int64_t p : pos) want.push_back(sv[p]);
    EXPECT_EQ(to_vec(call_op1("AsStrided", {storage}, a)), want) << shape_str(Shape(v.size.begin(), v.size.end()));
    EXPECT_TRUE(npu_bytes_match_cpu("AsStrided", {storage}, a));
    // ViewCopy back: writing the gathered values to the same view leaves the storage as it was;
    // writing a fresh src puts each value at its position.
    const Tensor src = Tensor::randn(Shape(v.size.begin(), v.size.end()), DType::kF32, DeviceRef::cpu(), 2);
    Doubles scattered = sv;
    const Doubles srcv = to_vec(src);
    for (std::size_t i = 0; i < pos.size(); ++i) scattered[pos[i]] = srcv[i];
    EXPECT_EQ(to_vec(run_in_place("ViewCopy", {storage, src}, a, Backend::kNpu)), scattered);
    EXPECT_TRUE(npu_bytes_match_cpu("ViewCopy", {storage, src}, a));
  }
}
