// A real profile's kernels as calibration points (profile_points.h): each CANN op type of the shared
// 910B profile maps a kernel written by hand with that profile's shapes (attributes inferred), as do
// the 3-D pool, ROI pool and align, deformable, smooth L1 and NMS types with their models' shapes
// (I3D, Faster R-CNN, Mask R-CNN, R-FCN, DCNv2); bad kernels are kept with their reason, and the
// summary counts every kernel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "npuscope/calibration/model.h"
#include "npuscope/calibration/profile_points.h"
#include "npuscope/calibration/profile_report.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/op_registry.h"

namespace cal = npuscope::calibration;
namespace em = npuscope::emulator;

namespace {

// A kernel as the trace stores it: lists with ';' after each entry (importer/src/tensor_lists.h).
cal::ProfileKernel kernel(std::string type, std::string in_shapes, std::string in_dtypes, std::string in_formats,
                          std::string out_shapes, std::string out_dtypes, std::string out_formats = "") {
  cal::ProfileKernel k;
  k.op_type = std::move(type);
  k.name = k.op_type + "_kernel";
  k.input_shapes = std::move(in_shapes);
  k.input_dtypes = std::move(in_dtypes);
  k.input_formats = std::move(in_formats);
  k.output_shapes = std::move(out_shapes);
  k.output_dtypes = std::move(out_dtypes);
  k.output_formats = std::move(out_formats);
  k.block_dim = 24;
  k.task_type = "AI_CORE";
  k.dur_ns = 10000;
  return k;
}

struct Mapped {
  cal::ProfileMapping m;
  const cal::DataPoint* point() const { return m.points.empty() ? nullptr : &m.points[0]; }
  std::string reason() const { return m.unmodelled.empty() ? "" : m.unmodelled[0].reason; }
};

Mapped map_one(const cal::ProfileKernel& k) {
  static const em::DeviceSpec spec = em::load_spec("ascend910b");
  return {cal::map_profile({k}, spec)};
}

std::vector<std::int64_t> ints(const cal::DataPoint& p, const char* name) { return p.attrs.get_ints(name); }

// The point of a kernel that must map, as emulator op `op`.
const cal::DataPoint& expect_op(const Mapped& m, const std::string& op) {
  EXPECT_EQ(m.reason(), "");
  static const cal::DataPoint none;
  if (m.point() == nullptr) return none;
  EXPECT_EQ(m.point()->op, op);
  return *m.point();
}

using Shape = std::vector<std::int64_t>;

// The shapes of a point's inputs.
std::vector<Shape> input_shapes(const cal::DataPoint& p) {
  std::vector<Shape> out;
  for (const auto& t : p.inputs) out.push_back(t.shape);
  return out;
}

// Whether the cost model times the point (map_profile has checked that it accepts it).
bool timed(const cal::DataPoint& p) {
  static const em::DeviceSpec spec = em::load_spec("ascend910b");
  return !p.op.empty() && cal::modelled_us(spec, p) > 0;
}

bool has(const std::string& reason, const char* what) { return reason.find(what) != std::string::npos; }

}  // namespace

TEST(ProfilePoints, ConvolutionsGoBackToNchwWithStridesAndPadsInferred) {
  // Conv2D1 of the profile: x 32x3x224x224 as 5HD with C0 8, w 64x3x11x11 as FRACTAL_Z, bias.
  const auto c1 = map_one(kernel("Conv2D", "32,1,224,224,8;121,4,16,8;64;", "f32;f32;f32;", "NC1HWC0;FRACTAL_Z;NCHW;",
                                 "32,8,55,55,8;", "f32;", "NC1HWC0;"));
  const auto& p1 = expect_op(c1, "Conv2d");
  ASSERT_EQ(p1.inputs.size(), 3u);
  EXPECT_EQ(p1.inputs[0].shape, (Shape{32, 8, 224, 224}));  // C = C1*C0: what the cube computes
  EXPECT_EQ(p1.inputs[1].shape, (Shape{64, 8, 11, 11}));
  EXPECT_EQ(ints(p1, "strides"), (Shape{4, 4}));
  EXPECT_EQ(ints(p1, "pads"), (Shape{2, 2, 2, 2}));
  EXPECT_EQ(p1.block_dim, 24u);
  EXPECT_DOUBLE_EQ(p1.measured_us, 10);
  const auto c2 = map_one(kernel("Conv2D", "32,8,27,27,8;200,12,16,8;192;", "f32;f32;f32;", "NC1HWC0;FRACTAL_Z;NCHW;",
                                 "32,24,27,27,8;", "f32;", "NC1HWC0;"));
  EXPECT_EQ(ints(expect_op(c2, "Conv2d"), "strides"), (Shape{1, 1}));
  EXPECT_EQ(ints(expect_op(c2, "Conv2d"), "pads"), (Shape{2, 2, 2, 2}));

  const auto bi = map_one(kernel("Conv2DBackpropInput", "4;200,12,16,8;32,24,27,27,8;", "i32;f32;f32;",
                                 "NCHW;FRACTAL_Z;NC1HWC0;", "32,8,27,27,8;", "f32;", "NC1HWC0;"));
  const auto& pi = expect_op(bi, "Conv2DBackpropInput");
  EXPECT_EQ(ints(pi, "input_size"), (Shape{32, 64, 27, 27}));
  EXPECT_EQ(pi.inputs[1].shape, (Shape{192, 64, 5, 5}));
  const auto bf = map_one(kernel("Conv2DBackpropFilter", "32,1,224,224,8;4;32,8,55,55,8;", "f32;i32;f32;",
                                 "NC1HWC0;NCHW;NC1HWC0;", "121,4,16,8;", "f32;", "FRACTAL_Z;"));
  const auto& pf = expect_op(bf, "Conv2DBackpropFilter");
  EXPECT_EQ(ints(pf, "filter_size"), (Shape{64, 8, 11, 11}));
  EXPECT_EQ(ints(pf, "strides"), (Shape{4, 4}));
}

TEST(ProfilePoints, MatmulsTakeTheirTransposesFromTheOutputAndABiasMakesAGemm) {
  const auto addmm = map_one(kernel("MatMulV2", "32,9216;4096,9216;4096;", "f32;f32;f32;", "", "32,4096;", "f32;"));
  const auto& g = expect_op(addmm, "Gemm");
  EXPECT_EQ(g.attrs.get_int("transB", 0), 1);
  EXPECT_EQ(g.inputs.size(), 3u);
  const auto mm = map_one(kernel("MatMulV2", "32,1000;1000,4096;", "f32;f32;", "", "32,4096;", "f32;"));
  expect_op(mm, "MatMul");
  const auto dw = map_one(kernel("MatMulV3", "32,4096;32,9216;", "f32;f32;", "", "4096,9216;", "f32;"));
  EXPECT_EQ(expect_op(dw, "Gemm").attrs.get_int("transA", 0), 1);
  const auto bmm =
      map_one(kernel("BatchMatMulV2", "16,2048,128;16,2048,128;", "f16;f16;", "", "16,2048,2048;", "f16;"));
  EXPECT_EQ(expect_op(bmm, "BatchMatMul").attrs.get_int("adj_y", 0), 1);
  EXPECT_NE(map_one(kernel("MatMulV2", "32,1000;33,4096;", "f32;f32;", "", "32,4096;", "f32;"))
                .reason()
                .find("no transposes take"),
            std::string::npos);
}

TEST(ProfilePoints, PoolsTakeTheirWindowFromTheMask) {
  const auto fwd = map_one(kernel("MaxPoolWithArgmaxV1", "32,4,55,55,16;", "f32;", "NC1HWC0:1;",
                                  "32,4,27,27,16;32,4,9,47,16;", "f32;UINT16;", "NC1HWC0:1;NC1HWC0:1;"));
  const auto& f = expect_op(fwd, "MaxPoolWithArgmax");
  EXPECT_EQ(f.inputs[0].shape, (Shape{32, 64, 55, 55}));
  EXPECT_EQ(ints(f, "kernel"), (Shape{3, 3}));
  EXPECT_EQ(ints(f, "strides"), (Shape{2, 2}));
  const auto bwd =
      map_one(kernel("MaxPoolGradWithArgmaxV1", "32,16,13,13,16;32,16,6,6,16;32,256,9,9,4,16;", "f32;f32;UINT16;",
                     "NC1HWC0:1;NC1HWC0:1;NC1HWC0;", "32,16,13,13,16;", "f32;", "NC1HWC0:1;"));
  EXPECT_EQ(ints(expect_op(bwd, "MaxPoolGradWithArgmax"), "input_size"), (Shape{32, 256, 13, 13}));
  const auto ap = map_one(kernel("AdaptiveAvgPool3d", "32,1,6,6,256;", "f32;", "ND;", "32,1,6,6,256;", "f32;"));
  EXPECT_EQ(expect_op(ap, "AdaptiveAvgPool2d").inputs[0].shape, (Shape{32, 256, 6, 6}));
  const auto apg =
      map_one(kernel("AdaptiveAvgPool3dGrad", "1,6,6,8192;32,256,1,6,6;", "f32;f32;", "", "1,6,6,8192;", "f32;"));
  EXPECT_EQ(ints(expect_op(apg, "AdaptiveAvgPool2dGrad"), "input_size"), (Shape{32, 256, 6, 6}));
}

TEST(ProfilePoints, ThreeDMaxPoolsGuessOrReadTheirWindow) {
  // aclnn (MaxPool3DWithArgmaxV2): NCDHW, int32 indices; the window guessed per axis.
  const auto v2 = map_one(kernel("MaxPool3DWithArgmaxV2", "2,64,16,56,56;", "f16;", "NCDHW;",
                                 "2,64,8,28,28;2,64,8,28,28;", "f16;i32;", "NCDHW;NCDHW;"));
  const auto& f = expect_op(v2, "MaxPool3DWithArgmax");
  EXPECT_EQ(input_shapes(f), (std::vector<Shape>{{2, 64, 16, 56, 56}}));
  EXPECT_EQ(ints(f, "kernel"), (Shape{2, 2, 2}));
  EXPECT_EQ(ints(f, "strides"), (Shape{2, 2, 2}));
  EXPECT_EQ(ints(f, "pads"), (Shape{0, 0, 0}));
  EXPECT_TRUE(timed(f));
  // An I3D-like (1, 3, 3) / (1, 2, 2) pool: D keeps its size (kernel 1), H and W halve (2 / 2).
  const auto i3d =
      map_one(kernel("MaxPool3DWithArgmaxV2", "2,64,8,112,112;", "f16;", "", "2,64,8,56,56;2,64,8,56,56;", "f16;i32;"));
  EXPECT_EQ(ints(expect_op(i3d, "MaxPool3DWithArgmax"), "kernel"), (Shape{1, 2, 2}));
  // No kernel = stride gives 7 -> 4: kernel 3, stride 2, pad 1.
  const auto odd =
      map_one(kernel("MaxPool3DWithArgmaxV2", "1,32,7,7,7;", "f32;", "", "1,32,4,4,4;1,32,4,4,4;", "f32;i32;"));
  const auto& o = expect_op(odd, "MaxPool3DWithArgmax");
  EXPECT_EQ(ints(o, "kernel"), (Shape{3, 3, 3}));
  EXPECT_EQ(ints(o, "pads"), (Shape{1, 1, 1}));
  EXPECT_TRUE(
      has(map_one(kernel("MaxPool3DWithArgmaxV2", "2,64,16;", "f16;", "", "2,64,8;2,64,8;", "f16;i32;")).reason(),
          "expected NCDHW"));

  // TBE (MaxPool3DWithArgmax): NDC1HWC0, the window's volume from the bitmask [N, Do, C1*k, ceil(Ho*Wo/16), 16].
  const auto tbe = map_one(kernel("MaxPool3DWithArgmax", "2,17,4,57,57,16;", "f16;", "NDC1HWC0;",
                                  "2,8,4,28,28,16;2,8,108,49,16;", "f16;UINT16;", "NDC1HWC0;NC1HWC0;"));
  const auto& t = expect_op(tbe, "MaxPool3DWithArgmax");
  EXPECT_EQ(input_shapes(t), (std::vector<Shape>{{2, 64, 17, 57, 57}}));
  EXPECT_EQ(ints(t, "kernel"), (Shape{3, 3, 3}));  // 27 taps, the most cubic split
  EXPECT_EQ(ints(t, "strides"), (Shape{2, 2, 2}));
  EXPECT_TRUE(timed(t));
  EXPECT_TRUE(has(map_one(kernel("MaxPool3DWithArgmax", "2,17,4,57,57,16;", "f16;", "", "2,8,4,28,28,16;2,8,108,49;",
                                 "f16;UINT16;"))
                      .reason(),
                  "expected NDC1HWC0"));
  EXPECT_TRUE(has(map_one(kernel("MaxPool3DWithArgmax", "2,17,4,57,57,16;", "f16;", "", "2,8,4,28,28,16;2,8,110,49,16;",
                                 "f16;UINT16;"))
                      .reason(),
                  "C1 * taps"));

  // MaxPool3DGradWithArgmax (x, grad, argmax as REG_OP orders them): x's shape as input_size.
  const auto g = map_one(kernel("MaxPool3DGradWithArgmax", "2,64,16,56,56;2,64,8,28,28;2,64,8,28,28;", "f16;f16;i32;",
                                "NCDHW;NCDHW;NCDHW;", "2,64,16,56,56;", "f16;", "NCDHW;"));
  const auto& gp = expect_op(g, "MaxPool3DGradWithArgmax");
  EXPECT_EQ(input_shapes(gp), (std::vector<Shape>{{2, 64, 8, 28, 28}, {2, 64, 8, 28, 28}}));
  EXPECT_EQ(gp.inputs.size() > 1 ? gp.inputs[1].dtype : npuscope::DType::kF32, npuscope::DType::kI32);
  EXPECT_EQ(ints(gp, "input_size"), (Shape{2, 64, 16, 56, 56}));
  EXPECT_EQ(ints(gp, "kernel"), (Shape{2, 2, 2}));
  EXPECT_TRUE(timed(gp));
  // In aclnn's order (grad, x, indices) the same point.
  const auto ga = map_one(kernel("MaxPool3DGradWithArgmax", "2,64,8,28,28;2,64,16,56,56;2,64,8,28,28;", "f16;f16;i32;",
                                 "", "2,64,16,56,56;", "f16;"));
  EXPECT_EQ(ints(expect_op(ga, "MaxPool3DGradWithArgmax"), "input_size"), (Shape{2, 64, 16, 56, 56}));
  EXPECT_TRUE(has(map_one(kernel("MaxPool3DGradWithArgmax", "2,64,8,28,28;2,64,16,56,56;", "f16;f16;", "",
                                 "2,64,16,56,56;", "f16;"))
                      .reason(),
                  "expected 3 inputs"));
}

TEST(ProfilePoints, DeformableOffsetsSplitTheirOffsetsAndReadTheKernelFromTheShapes) {
  // A 3x3 DCNv2 layer: NHWC x, offsets [N, Ho, Wo, 3 * 9] (x, y, mask blocks), y [N, Ho*3, Wo*3, C].
  const auto fwd = map_one(kernel("DeformableOffsets", "4,64,64,256;4,64,64,27;", "f32;f32;", "NHWC;NHWC;",
                                  "4,192,192,256;", "f32;", "NHWC;"));
  const auto& f = expect_op(fwd, "DeformableOffsets");
  EXPECT_EQ(input_shapes(f), (std::vector<Shape>{{4, 256, 64, 64}, {4, 18, 64, 64}, {4, 9, 64, 64}}));
  EXPECT_EQ(ints(f, "ksize"), (Shape{3, 3}));
  EXPECT_EQ(ints(f, "strides"), (Shape{1, 1}));
  EXPECT_EQ(ints(f, "pads"), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(f.attrs.get_int("deformable_groups", 0), 1);
  EXPECT_TRUE(timed(f));
  // Stride 2 and two deformable groups: 3 * 2 * 9 = 54 channels.
  const auto s2 = map_one(
      kernel("DeformableOffsets", "2,32,32,64;2,16,16,54;", "f16;f16;", "NHWC;NHWC;", "2,48,48,64;", "f16;", "NHWC;"));
  const auto& p2 = expect_op(s2, "DeformableOffsets");
  EXPECT_EQ(ints(p2, "strides"), (Shape{2, 2}));
  EXPECT_EQ(p2.attrs.get_int("deformable_groups", 0), 2);
  EXPECT_TRUE(has(map_one(kernel("DeformableOffsets", "4,64,64,256;4,64,64,20;", "f32;f32;", "NHWC;NHWC;",
                                 "4,192,192,256;", "f32;", "NHWC;"))
                      .reason(),
                  "offsets' channels"));
  EXPECT_TRUE(has(
      map_one(kernel("DeformableOffsets", "64,64,256;4,64,64,27;", "f32;f32;", "", "4,192,192,256;", "f32;")).reason(),
      "expected a 4-D x"));

  // The gradient: (grad, x, offsets) -> (grad_x, grad_offsets); the emulator's gives dx, doffsets, dmask.
  const auto bwd = map_one(kernel("DeformableOffsetsGrad", "4,192,192,256;4,64,64,256;4,64,64,27;", "f32;f32;f32;",
                                  "NHWC;NHWC;NHWC;", "4,64,64,256;4,64,64,27;", "f32;f32;", "NHWC;NHWC;"));
  const auto& b = expect_op(bwd, "DeformableOffsetsGrad");
  EXPECT_EQ(input_shapes(b),
            (std::vector<Shape>{{4, 256, 192, 192}, {4, 256, 64, 64}, {4, 18, 64, 64}, {4, 9, 64, 64}}));
  EXPECT_EQ(ints(b, "ksize"), (Shape{3, 3}));
  EXPECT_TRUE(timed(b));
  EXPECT_TRUE(has(map_one(kernel("DeformableOffsetsGrad", "4,192,192,256;4,64,64,256;", "f32;f32;", "NHWC;NHWC;",
                                 "4,64,64,256;4,64,64,27;", "f32;f32;"))
                      .reason(),
                  "expected 3 inputs"));
}

TEST(ProfilePoints, RoiPoolsSplitTheirRoisIntoBoxesAndBatchIndices) {
  // Faster R-CNN's RoiPoolingWithArgMax: x 5HD (C 256), 256 rois as [R, 5], 7x7 bins.
  const auto fwd = map_one(kernel("RoiPoolingWithArgMax", "2,16,38,50,16;256,5;2;", "f16;f16;i32;", "NC1HWC0;ND;ND;",
                                  "256,16,7,7,16;256,16,7,7,16;", "f16;i32;", "NC1HWC0;NC1HWC0;"));
  const auto& f = expect_op(fwd, "RoiPoolingWithArgMax");
  EXPECT_EQ(input_shapes(f), (std::vector<Shape>{{2, 256, 38, 50}, {256, 4}, {256}}));
  EXPECT_EQ(f.inputs.size() > 2 ? f.inputs[2].dtype : npuscope::DType::kF32, npuscope::DType::kI32);
  EXPECT_EQ(f.attrs.get_int("pooled_h", 0), 7);
  EXPECT_EQ(f.attrs.get_int("pooled_w", 0), 7);
  EXPECT_DOUBLE_EQ(f.attrs.get_float("spatial_scale", 0), 1.0);
  EXPECT_TRUE(timed(f));
  const auto batched = map_one(kernel("RoiPoolingWithArgMax", "2,256,38,50;2,5,128;", "f32;f32;", "NCHW;ND;",
                                      "256,256,7,7;256,256,7,7;", "f32;i32;", "NCHW;NCHW;"));
  EXPECT_EQ(input_shapes(expect_op(batched, "RoiPoolingWithArgMax")),
            (std::vector<Shape>{{2, 256, 38, 50}, {256, 4}, {256}}));
  EXPECT_TRUE(has(map_one(kernel("RoiPoolingWithArgMax", "2,256,38,50;256,4;", "f32;f32;", "",
                                 "256,256,7,7;256,256,7,7;", "f32;i32;"))
                      .reason(),
                  "rois [256, 4] are not"));

  // The gradient (grad, x, rois, roi_actual_num, argmax) -> dx of x's shape, with or without roi_actual_num.
  const auto bwd =
      map_one(kernel("RoiPoolingGradWithArgMax", "256,16,7,7,16;2,16,38,50,16;256,5;2;256,16,7,7,16;",
                     "f16;f16;f16;i32;i32;", "NC1HWC0;NC1HWC0;ND;ND;NC1HWC0;", "2,16,38,50,16;", "f16;", "NC1HWC0;"));
  const auto& b = expect_op(bwd, "RoiPoolingGradWithArgMax");
  EXPECT_EQ(input_shapes(b), (std::vector<Shape>{{256, 256, 7, 7}, {256, 4}, {256}, {256, 256, 7, 7}}));
  EXPECT_EQ(ints(b, "xdiff_shape"), (Shape{2, 256, 38, 50}));
  EXPECT_TRUE(timed(b));
  expect_op(map_one(kernel("RoiPoolingGradWithArgMax", "256,256,7,7;2,256,38,50;256,5;256,256,7,7;", "f32;f32;f32;i32;",
                           "", "2,256,38,50;", "f32;")),
            "RoiPoolingGradWithArgMax");
  EXPECT_TRUE(has(map_one(kernel("RoiPoolingGradWithArgMax", "256,256,7,7;2,256,38,50;256,5;", "f32;f32;f32;", "",
                                 "2,256,38,50;", "f32;"))
                      .reason(),
                  "expected 4 inputs"));
}

TEST(ProfilePoints, PsRoiPoolsTakeTheirGroupSizeFromTheOutput) {
  // R-FCN: output_dim 21 padded to 32 (C0 16), group_size 7: x's C = 32 * 49 = 1568 (C1 98);
  // rois [B, 5, 304] (a multiple of 16 a batch).
  const auto fwd = map_one(kernel("PSROIPoolingV2", "1,98,38,50,16;1,5,304;", "f16;f16;", "NC1HWC0;ND;",
                                  "304,2,7,7,16;", "f16;", "NC1HWC0;"));
  const auto& f = expect_op(fwd, "PSROIPoolingV2");
  EXPECT_EQ(input_shapes(f), (std::vector<Shape>{{1, 1568, 38, 50}, {304, 4}, {304}}));
  EXPECT_EQ(f.attrs.get_int("output_height", 0), 7);
  EXPECT_EQ(f.attrs.get_int("output_width", 0), 7);
  EXPECT_EQ(f.attrs.get_int("sampling_ratio", -1), 0);
  EXPECT_TRUE(timed(f));
  EXPECT_TRUE(has(map_one(kernel("PSROIPoolingV2", "1,98,38,50,16;1,4,304;", "f16;f16;", "NC1HWC0;ND;", "304,2,7,7,16;",
                                 "f16;", "NC1HWC0;"))
                      .reason(),
                  "are not [R, 5]"));

  // The gradient (dy, rois) -> dx: dx's shape as xdiff_shape, channel_mapping an i32 input of dy's shape.
  const auto bwd = map_one(kernel("PSROIPoolingGradV2D", "304,2,7,7,16;1,5,304;", "f32;f32;", "NC1HWC0;ND;",
                                  "1,98,38,50,16;", "f32;", "NC1HWC0;"));
  const auto& b = expect_op(bwd, "PSROIPoolingGradV2D");
  EXPECT_EQ(input_shapes(b), (std::vector<Shape>{{304, 32, 7, 7}, {304, 4}, {304}, {304, 32, 7, 7}}));
  EXPECT_EQ(b.inputs.size() > 3 ? b.inputs[3].dtype : npuscope::DType::kF32, npuscope::DType::kI32);
  EXPECT_EQ(ints(b, "xdiff_shape"), (Shape{1, 1568, 38, 50}));
  EXPECT_TRUE(timed(b));
  EXPECT_TRUE(has(
      map_one(kernel("PSROIPoolingGradV2D", "304,32,49;1,5,304;", "f32;f32;", "", "1,1568,38,50;", "f32;")).reason(),
      "expected a 4-D grad"));
}

TEST(ProfilePoints, RoiAlignsSplitTheirRoisAndTakeTheirOutputSizeFromY) {
  // Mask R-CNN's box head through torch_npu's aclop ROIAlign: features 5HD (C 256), 512 rois as [R, 5], 7x7.
  const auto fwd = map_one(
      kernel("ROIAlign", "2,16,200,304,16;512,5;", "f32;f32;", "NC1HWC0;ND;", "512,16,7,7,16;", "f32;", "NC1HWC0;"));
  const auto& f = expect_op(fwd, "RoiAlign");
  EXPECT_EQ(input_shapes(f), (std::vector<Shape>{{2, 256, 200, 304}, {512, 4}, {512}}));
  EXPECT_EQ(f.attrs.get_int("output_height", 0), 7);
  EXPECT_EQ(f.attrs.get_int("output_width", 0), 7);
  EXPECT_EQ(f.attrs.get_int("sampling_ratio", -1), 2);
  EXPECT_TRUE(timed(f));
  // aclnnROIAlign: NCHW in and out, the mask head's 14x14.
  const auto mask_head =
      map_one(kernel("ROIAlign", "2,256,200,304;100,5;", "f32;f32;", "ND;ND;", "100,256,14,14;", "f32;", "ND;"));
  const auto& nd = expect_op(mask_head, "RoiAlign");
  EXPECT_EQ(nd.attrs.get_int("output_height", 0), 14);
  EXPECT_TRUE(timed(nd));
  EXPECT_TRUE(has(map_one(kernel("ROIAlign", "2,256,200,304;512,4;", "f32;f32;", "", "512,256,7,7;", "f32;")).reason(),
                  "rois [512, 4] are not"));

  // The gradient (ydiff, rois) -> xdiff of the features' shape.
  const auto bwd = map_one(kernel("ROIAlignGrad", "512,16,7,7,16;512,5;", "f32;f32;", "NC1HWC0;ND;", "2,16,200,304,16;",
                                  "f32;", "NC1HWC0;"));
  const auto& b = expect_op(bwd, "ROIAlignGrad");
  EXPECT_EQ(input_shapes(b), (std::vector<Shape>{{512, 256, 7, 7}, {512, 4}, {512}}));
  EXPECT_EQ(ints(b, "xdiff_shape"), (Shape{2, 256, 200, 304}));
  EXPECT_TRUE(timed(b));
  EXPECT_TRUE(has(map_one(kernel("ROIAlignGrad", "512,256,7,7;", "f32;", "", "2,256,200,304;", "f32;")).reason(),
                  "expected 2 inputs"));
}

TEST(ProfilePoints, SmoothL1LossesTakeTheirReductionFromTheShapes) {
  // Faster R-CNN's box regression: 512 proposals x 4 deltas, mean (a scalar loss) or none.
  const auto mean = map_one(kernel("SmoothL1LossV2", "512,4;512,4;", "f32;f32;", "ND;ND;", ";", "f32;"));
  EXPECT_EQ(expect_op(mean, "SmoothL1LossV2").attrs.get_int("reduction", -1), 1);
  EXPECT_TRUE(timed(expect_op(mean, "SmoothL1LossV2")));
  const auto none = map_one(kernel("SmoothL1LossV2", "512,4;512,4;", "f16;f16;", "", "512,4;", "f16;"));
  EXPECT_EQ(expect_op(none, "SmoothL1LossV2").attrs.get_int("reduction", -1), 0);
  EXPECT_TRUE(has(map_one(kernel("SmoothL1LossV2", "512,4;", "f32;", "", ";", "f32;")).reason(), "expected 2 inputs"));

  // The gradient (predict, label, dout) -> the emulator's (dloss, x, y).
  const auto grad =
      map_one(kernel("SmoothL1LossGradV2", "512,4;512,4;;", "f32;f32;f32;", "ND;ND;ND;", "512,4;", "f32;", "ND;"));
  const auto& g = expect_op(grad, "SmoothL1LossGradV2");
  EXPECT_EQ(input_shapes(g), (std::vector<Shape>{{}, {512, 4}, {512, 4}}));
  EXPECT_EQ(g.attrs.get_int("reduction", -1), 1);
  EXPECT_TRUE(timed(g));
  const auto grad_none =
      map_one(kernel("SmoothL1LossGradV2", "512,4;512,4;512,4;", "f32;f32;f32;", "", "512,4;", "f32;"));
  EXPECT_EQ(expect_op(grad_none, "SmoothL1LossGradV2").attrs.get_int("reduction", -1), 0);
  EXPECT_TRUE(
      has(map_one(kernel("SmoothL1LossGradV2", "512,4;512,4;8;", "f32;f32;f32;", "", "512,4;", "f32;")).reason(),
          "the emulator refuses it"));
}

TEST(ProfilePoints, NmsIsOneClassOfTheEmulatorsWithItsOutputLengthAsTheCount) {
  // torchvision_npu's nms over an RPN's 1000 proposals: the output has a slot for every box.
  const auto v3 = map_one(
      kernel("NonMaxSuppressionV3", "1000,4;1000;;;;", "f32;f32;i32;f32;f32;", "ND;ND;ND;ND;ND;", "1000;", "i32;"));
  const auto& p = expect_op(v3, "NonMaxSuppression");
  EXPECT_EQ(input_shapes(p), (std::vector<Shape>{{1, 1000, 4}, {1, 1, 1000}}));
  EXPECT_EQ(p.attrs.get_int("count", -1), 1000);
  EXPECT_EQ(p.attrs.get_int("max_output_boxes_per_class", -1), 1000);
  EXPECT_TRUE(timed(p));
  // torch_npu.npu_nms_v4 asking for at most 300 (YOLO's max_det), and for more slots than boxes.
  const auto v4 =
      map_one(kernel("NonMaxSuppressionV4", "6300,4;6300;;;;", "f16;f16;i32;f16;f16;", "", "300;;", "i32;i32;"));
  EXPECT_EQ(expect_op(v4, "NonMaxSuppression").attrs.get_int("count", -1), 300);
  EXPECT_TRUE(timed(expect_op(v4, "NonMaxSuppression")));
  const auto few =
      map_one(kernel("NonMaxSuppressionV4", "20,4;20;;;;", "f32;f32;i32;f32;f32;", "", "300;;", "i32;i32;"));
  EXPECT_EQ(expect_op(few, "NonMaxSuppression").attrs.get_int("count", -1), 20);
  EXPECT_TRUE(
      has(map_one(kernel("NonMaxSuppressionV3", "1,1000,4;1,1,1000;;;;", "f32;f32;i32;f32;f32;", "", "1000;", "i32;"))
              .reason(),
          "expected boxes [N, 4]"));
  auto aicpu = kernel("NonMaxSuppressionV3", "1000,4;1000;;;;", "f32;f32;i32;f32;f32;", "", "1000;", "i32;");
  aicpu.task_type = "AI_CPU";
  EXPECT_TRUE(has(map_one(aicpu).reason(), "AI CPU"));
}

TEST(ProfilePoints, VectorOpsTurnTheirTensorArgumentsIntoAttributes) {
  const auto rs = map_one(kernel("ReduceSum", "32,256,169;2;", "f32;i64;", "", "256;", "f32;"));
  const auto& r = expect_op(rs, "ReduceSum");
  EXPECT_EQ(ints(r, "axes"), (Shape{0, 2}));
  EXPECT_EQ(r.attrs.get_int("keepdims", 1), 0);
  const auto rk = map_one(kernel("ReduceSum", "32,1000;1;", "f32;i64;", "", "1,1000;", "f32;"));
  EXPECT_EQ(ints(expect_op(rk, "ReduceSum"), "axes"), (Shape{0}));
  const auto tr = map_one(kernel("Transpose", "32,256,1,6,6;5;", "f32;i64;", "", "32,1,6,6,256;", "f32;"));
  EXPECT_EQ(ints(expect_op(tr, "Transpose"), "perm"), (Shape{0, 2, 3, 4, 1}));
  const auto tm = map_one(kernel("TensorMove", "4096,9216;", "f32;", "", "4096,9216;", "f32;"));
  EXPECT_EQ(ints(expect_op(tm, "ViewCopy"), "stride"), (Shape{9216, 1}));
  expect_op(map_one(kernel("BroadcastTo", "1,32;2;", "i64;i64;", "", "5,32;", "i64;")), "Expand");
  expect_op(map_one(kernel("OnesLike", "1000;", "f32;", "", "1000;", "f32;")), "Fill");
  expect_op(map_one(kernel("Fill", "1;;", "i64;f32;", "", "1;", "f32;")), "Fill");
  EXPECT_EQ(expect_op(map_one(kernel("Cast", "32,5;", "i32;", "", "32,5;", "i64;")), "Cast").attrs.get_int("to", 0),
            static_cast<std::int64_t>(npuscope::DType::kI64));
  expect_op(map_one(kernel("Mul", "4096,9216;;", "f32;f32;", "", "4096,9216;", "f32;")), "Muls");
  expect_op(map_one(kernel("Mul", ";;", "f32;f32;", "", "", "f32;")), "Mul");  // two scalars: no output shape
  expect_op(map_one(kernel("Add", ";;", "f32;f32;", "", "", "f32;")), "Add");
  expect_op(map_one(kernel("RealDiv", ";;", "f32;f32;", "", "", "f32;")), "Div");
  expect_op(map_one(kernel("Equal", "5,32;5,32;", "i64;i64;", "", "5,32;", "bool;")), "Equal");
  expect_op(map_one(kernel("Relu", "32,64,55,55;", "f32;", "NCHW;", "32,64,55,55;", "f32;", "NCHW;")), "Relu");
  expect_op(map_one(kernel("ReluGrad", "32,4096;32,4096;", "f32;f32;", "", "32,4096;", "f32;")), "ThresholdGrad");
  expect_op(map_one(kernel("DropOutDoMask", "32,9216;36864;1;", "f32;u8;f32;", "", "32,9216;", "f32;")),
            "DropoutDoMask");
  expect_op(map_one(kernel("LogSoftmaxV2", "32,1000;", "f32;", "", "32,1000;", "f32;")), "LogSoftmax");
  expect_op(map_one(kernel("LogSoftmaxGrad", "32,1000;32,1000;", "f32;f32;", "", "32,1000;", "f32;")),
            "LogSoftmaxGrad");
  expect_op(map_one(kernel("NLLLoss", "32,1000;32;1000;", "f32;i64;f32;", "", ";;", "f32;f32;")), "NLLLoss");
  expect_op(map_one(kernel("NLLLossGrad", "32,1000;;32;1000;;", "f32;f32;i32;f32;f32;", "", "32,1000;", "f32;")),
            "NLLLossGrad");
  EXPECT_EQ(expect_op(map_one(kernel("TopKV2", "32,1000;;", "f32;i32;", "", "32,5;32,5;", "f32;i32;")), "TopK")
                .attrs.get_int("k", 0),
            5);
}

TEST(ProfilePoints, TransDataFollowsTheFormatsContract) {
  const auto t = map_one(kernel("TransData", "32,64,27,27;", "f32;", "NCHW;", "32,8,27,27,8;", "f32;", "NC1HWC0;"));
  if (em::OpRegistry::instance().find_schema("TransData") == nullptr) {
    EXPECT_EQ(t.reason(), "op TransData not in this build");
    return;
  }
  const auto& p = expect_op(t, "TransData");
  EXPECT_EQ(p.attrs.get_string("src_format", ""), "NCHW");
  EXPECT_EQ(p.attrs.get_string("dst_format", ""), "NC1HWC0");
  EXPECT_EQ(ints(p, "base_shape"), (Shape{32, 64, 27, 27}));
  EXPECT_EQ(p.attrs.get_int("c0", 0), 8);
}

TEST(ProfilePoints, KernelsThatCannotBeModelledKeepTheirReason) {
  const auto reason = [](const cal::ProfileKernel& k) { return map_one(k).reason(); };
  EXPECT_EQ(reason(kernel("DSAGenBitMask", "", "", "", "36864;", "u8;")), "no emulator op for CANN type DSAGenBitMask");
  EXPECT_EQ(reason(kernel("Relu", "N/A;", "N/A;", "", "N/A;", "N/A;")), "shapes not recorded");
  EXPECT_EQ(reason(kernel("Relu", "", "", "", "", "")), "shapes not recorded");
  EXPECT_NE(reason(kernel("Relu", "32,abc;", "f32;", "", "32,4;", "f32;")).find("is not a list of sizes"),
            std::string::npos);
  EXPECT_NE(reason(kernel("Relu", "-3;", "f32;", "", "3;", "f32;")).find("is not a list of sizes"), std::string::npos);
  EXPECT_NE(reason(kernel("Relu", "99999999999999999999;", "f32;", "", "3;", "f32;")).find("is not a list of sizes"),
            std::string::npos);
  EXPECT_NE(reason(kernel("Relu", "32,4;8;", "f32;", "", "32,4;", "f32;")).find("different numbers"),
            std::string::npos);
  EXPECT_EQ(reason(kernel("Relu", "32,4;", "f32;", "", "32,5;", "f32;")),
            "inferred output [32, 4] differs from recorded [32, 5]");
  EXPECT_NE(reason(kernel("Add", "32,4;3,5;", "f32;f32;", "", "32,4;", "f32;")).find("the emulator refuses it"),
            std::string::npos);
  EXPECT_NE(reason(kernel("Relu", "32,4;", "UINT16;", "", "32,4;", "UINT16;")).find("dtype UINT16 not modelled"),
            std::string::npos);
  EXPECT_NE(reason(kernel("Conv2D", "32,1,224,224,8;121,4,16,8;", "f32;f32;", "NCHW;NCHW;", "32,8,55,55,8;", "f32;"))
                .find("expected an NC1HWC0 input"),
            std::string::npos);
  auto aicpu = kernel("Relu", "32,4;", "f32;", "", "32,4;", "f32;");
  aicpu.task_type = "AI_CPU";
  EXPECT_NE(reason(aicpu).find("AI CPU"), std::string::npos);
  auto instant = kernel("Relu", "32,4;", "f32;", "", "32,4;", "f32;");
  instant.dur_ns = 0;
  EXPECT_EQ(reason(instant), "no duration recorded");
}

TEST(ProfilePoints, TheSummaryCountsEveryKernelAndTheCoveredTime) {
  std::vector<cal::ProfileKernel> ks = {
      kernel("Relu", "32,4096;", "f32;", "", "32,4096;", "f32;"),
      kernel("Relu", "32,4096;", "f32;", "", "32,4096;", "f32;"),
      kernel("DSAGenBitMask", "", "", "", "36864;", "u8;"),
      kernel("MemSet", "", "", "", "", ""),
  };
  ks[3].dur_ns = 20000;
  const em::DeviceSpec spec = em::load_spec("ascend910b");
  const cal::ProfileMapping m = cal::map_profile(ks, spec);
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.points[1].id, "Relu#2");
  const std::vector<cal::Row> rows = cal::model_rows(m.points, &spec);
  const cal::ProfileSummary s = cal::summarize_profile(ks, m, rows, {{"HCCL", 4, 1000000}});
  EXPECT_EQ(s.overall.kernels, 4);
  EXPECT_EQ(s.overall.modelled, 2);
  EXPECT_DOUBLE_EQ(s.covered_pct, 40);  // 20 of 50 us
  ASSERT_EQ(s.reasons.size(), 2u);
  EXPECT_EQ(s.reasons[0].reason, "shapes not recorded");  // the larger time first
  EXPECT_FALSE(s.coverage_met);
  const std::string text = cal::profile_text(s);
  EXPECT_NE(text.find("covered device time: 40.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("HCCL"), std::string::npos) << text;
  const auto tables = cal::profile_tables(s);
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[1].rows.size(), 2u);  // kernels
  EXPECT_EQ(tables[2].rows.size(), 2u);  // unmodelled
}

TEST(ProfilePoints, TheDocsShowTheOpTypeTable) {
  // docs/calibration_from_profile.md holds the table between these markers (docs/calibration.md is
  // generated whole by `npuscope calibrate --markdown`).
  const auto path = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" /
                    "calibration_from_profile.md";
  std::ifstream in(path);
  const std::string doc{std::istreambuf_iterator<char>(in), {}};
  const std::string begin = "<!-- cann-op-types: generated from runtime_hooks/cann_op_types.h -->\n";
  const std::size_t from = doc.find(begin), to = doc.find("<!-- cann-op-types end -->");
  ASSERT_NE(from, std::string::npos) << path;
  ASSERT_NE(to, std::string::npos) << path;
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), cal::cann_op_types_markdown())
      << "the table of " << path << " is out of date: paste this between the markers:\n"
      << cal::cann_op_types_markdown();
}
