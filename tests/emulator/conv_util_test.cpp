// Several images per convolution GEMM (Note [Batched convolution GEMMs] in
// emulator/src/kernels/conv_util.h): a batch gives what its images give one at a time, for Conv2d
// (with a bias), Conv2DBackpropInput and Conv2DBackpropFilter, on both backends, when the images
// fill several GEMMs with a remainder, and for a grouped 1x1 convolution whose columns are gathered
// from the input directly.
#include <gtest/gtest.h>

#include "emulator/train_op_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

using ConvBatchTest = OpTest;
using Ints = std::vector<std::int64_t>;

// Image i of an NCHW (or NC..) cpu tensor, as a tensor of batch 1.
Tensor image(const Tensor& t, std::int64_t i) {
  Shape s = t.shape();
  s[0] = 1;
  const std::vector<double> v = to_vec(t);
  const std::int64_t per = shape_numel(s);
  std::vector<float> f(v.begin() + i * per, v.begin() + (i + 1) * per);
  return Tensor::from_floats(f, s, t.dtype());
}

std::vector<Tensor> maybe_npu(const std::vector<Tensor>& xs, bool npu) { return npu ? on_npu(xs) : xs; }

struct Geometry {
  Shape x, w;
  Ints strides, pads;
  std::int64_t group;
  Attrs attrs() const { return {{"strides", strides}, {"pads", pads}, {"dilations", Ints{1, 1}}, {"group", group}}; }
};

// Conv2d, dx and dW of the whole batch against the same ops image by image (dW summed).
void expect_batch_matches_images(const Geometry& p, bool npu) {
  const Tensor x = seq(p.x, 0.2), w = seq(p.w, 0.9, DType::kF32, 0.2), bias = seq({p.w[0]}, 1.7);
  const Tensor y = call_op1("Conv2d", maybe_npu({x, w, bias}, npu), p.attrs()).cpu();
  const Tensor dy = seq(y.shape(), 2.3);
  Attrs ax = p.attrs(), aw = p.attrs();
  ax.set("input_size", p.x);
  aw.set("filter_size", p.w);
  const Tensor dx = call_op1("Conv2DBackpropInput", maybe_npu({dy, w}, npu), ax).cpu();
  const Tensor dw = call_op1("Conv2DBackpropFilter", maybe_npu({x, dy}, npu), aw).cpu();
  std::vector<double> want_y, want_dx, want_dw(static_cast<std::size_t>(shape_numel(p.w)), 0.0);
  for (std::int64_t i = 0; i < p.x[0]; ++i) {
    Attrs ax1 = ax;
    Shape one = p.x;
    one[0] = 1;
    ax1.set("input_size", one);
    const auto yi = to_vec(call_op1("Conv2d", maybe_npu({image(x, i), w, bias}, npu), p.attrs()));
    const auto dxi = to_vec(call_op1("Conv2DBackpropInput", maybe_npu({image(dy, i), w}, npu), ax1));
    const auto dwi = to_vec(call_op1("Conv2DBackpropFilter", maybe_npu({image(x, i), image(dy, i)}, npu), aw));
    want_y.insert(want_y.end(), yi.begin(), yi.end());
    want_dx.insert(want_dx.end(), dxi.begin(), dxi.end());
    for (std::size_t k = 0; k < dwi.size(); ++k) want_dw[k] += dwi[k];
  }
  EXPECT_TRUE(all_close(to_vec(y), want_y, 1e-5, 1e-5)) << shape_str(p.x) << (npu ? " npu" : " cpu");
  EXPECT_TRUE(all_close(to_vec(dx), want_dx, 1e-5, 1e-5)) << shape_str(p.x) << (npu ? " npu" : " cpu");
  EXPECT_TRUE(all_close(to_vec(dw), want_dw, 1e-4, 1e-3)) << shape_str(p.x) << (npu ? " npu" : " cpu");
}

}  // namespace

TEST_F(ConvBatchTest, ImagesSplitOverSeveralGemmsGiveTheirOwnResults) {
  // (16·9 + 16) rows of 64·64 f32 columns per image (2.6 MB of the 8 MiB budget): 3 images per GEMM,
  // so 5 images run as 3 + 2.
  const Geometry p{{5, 16, 64, 64}, {16, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1};
  expect_batch_matches_images(p, false);
  expect_batch_matches_images(p, true);
}

TEST_F(ConvBatchTest, GroupedDirectAndStridedConvolutionsBatch) {
  expect_batch_matches_images({{4, 8, 5, 6}, {6, 4, 1, 1}, {1, 1}, {0, 0, 0, 0}, 2}, true);  // 1x1, gathered
  expect_batch_matches_images({{3, 4, 9, 9}, {8, 2, 3, 3}, {2, 2}, {1, 1, 1, 1}, 2}, true);  // grouped, strided
  expect_batch_matches_images({{3, 4, 9, 9}, {8, 2, 3, 3}, {2, 2}, {1, 1, 1, 1}, 2}, false);
}
