// Private formats (Note [Private formats] in formats.h): storage shapes as the shared 910B profile
// shows them, the TransData op's layouts against layouts written out by hand for every pair, its
// cost, and the TransData / MemSet tasks the dispatcher launches around a convolution's training
// step and a pool (Note [TransData tasks] in dispatch.cpp), with allow_internal_format and without.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/formats.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "task_end_records.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

using Ints = std::vector<std::int64_t>;

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// ---- layouts written out by hand: for each storage element, the logical element it holds ----------

// NC1HWC0 storage [N, C1, H, W, C0] of an NCHW tensor; padding channels are 0.
std::vector<float> hand_5hd(const std::vector<float>& x, const Ints& s, std::int64_t c0) {
  const std::int64_t n = s[0], c = s[1], h = s[2], w = s[3], c1 = cdiv(c, c0);
  std::vector<float> out;
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c1; ++b)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < w; ++j)
          for (std::int64_t k = 0; k < c0; ++k) {
            const std::int64_t ch = b * c0 + k;
            out.push_back(ch < c ? x[((a * c + ch) * h + i) * w + j] : 0.0f);
          }
  return out;
}

// FRACTAL_Z storage [C1 * kh * kw, Co1, 16, C0] of a [Cout, Cin, kh, kw] weight.
std::vector<float> hand_fz(const std::vector<float>& x, const Ints& s, std::int64_t c0) {
  const std::int64_t co = s[0], ci = s[1], kh = s[2], kw = s[3], c1 = cdiv(ci, c0), co1 = cdiv(co, 16);
  std::vector<float> out;
  for (std::int64_t b = 0; b < c1; ++b)
    for (std::int64_t i = 0; i < kh; ++i)
      for (std::int64_t j = 0; j < kw; ++j)
        for (std::int64_t o1 = 0; o1 < co1; ++o1)
          for (std::int64_t o0 = 0; o0 < 16; ++o0)
            for (std::int64_t k = 0; k < c0; ++k) {
              const std::int64_t o = o1 * 16 + o0, cin = b * c0 + k;
              out.push_back(o < co && cin < ci ? x[((o * ci + cin) * kh + i) * kw + j] : 0.0f);
            }
  return out;
}

// FRACTAL_NZ storage [B, ceil(n/n0), ceil(m/16), 16, n0] of a [B, m, n] tensor.
std::vector<float> hand_nz(const std::vector<float>& x, const Ints& s, std::int64_t n0) {
  const std::int64_t bs = s[0], m = s[1], n = s[2];
  std::vector<float> out;
  for (std::int64_t b = 0; b < bs; ++b)
    for (std::int64_t n1 = 0; n1 < cdiv(n, n0); ++n1)
      for (std::int64_t m1 = 0; m1 < cdiv(m, 16); ++m1)
        for (std::int64_t m0 = 0; m0 < 16; ++m0)
          for (std::int64_t k = 0; k < n0; ++k) {
            const std::int64_t row = m1 * 16 + m0, col = n1 * n0 + k;
            out.push_back(row < m && col < n ? x[(b * m + row) * n + col] : 0.0f);
          }
  return out;
}

std::vector<float> iota_values(const Ints& shape) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

Tensor trans_data(const Tensor& x, const std::string& src, const std::string& dst, const Ints& base, int c0 = 0) {
  Attrs attrs{{"src_format", src}, {"dst_format", dst}, {"c0", std::int64_t{c0}}};
  if (!base.empty()) attrs.set("base_shape", base);
  return call_op1("TransData", {x}, attrs);
}

// ---- the tasks a run launched -------------------------------------------------------------------

struct SeenTask {
  std::string op_type, name, in_shapes, in_formats, out_shapes, out_formats;
};

std::string part(const char* signature, int index) {
  if (signature == nullptr) return "<none>";
  std::string s(signature);
  for (int i = 0; i < index; ++i) s = s.substr(s.find('|') + 1);
  return s.substr(0, s.find('|'));
}

// The kernels of the ops under test and their conversions (not the copies that made the operands).
std::vector<SeenTask> tasks_of(emulator::testing::EndRecords& records) {
  Runtime::get().synchronize_all();
  std::lock_guard lock(records.mutex);
  std::vector<SeenTask> out;
  for (const auto& r : records.ends) {
    const std::string type = r.op_type;
    if (type != "TransData" && type != "MemSet" && type.find("Conv2") != 0 && type.find("MaxPool") != 0 &&
        type != "Relu")
      continue;
    out.push_back({r.op_type, r.name, part(r.input_signature, 0), part(r.input_signature, 2),
                   part(r.output_signature, 0), part(r.output_signature, 2)});
  }
  return out;
}

int count_type(const std::vector<SeenTask>& tasks, const std::string& type) {
  int n = 0;
  for (const auto& t : tasks) n += t.op_type == type;
  return n;
}

const Attrs kConvAttrs{{"pads", Ints{1, 1, 1, 1}}};

// One convolution's training step (forward, input and filter gradients) on the current runtime.
std::vector<std::vector<float>> conv_step(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& dy) {
  Tensor y = ops::conv2d(x, w, b, {1, 1}, {1, 1, 1, 1});
  Attrs in_attrs = kConvAttrs, filter_attrs = kConvAttrs;
  in_attrs.set("input_size", x.shape());
  filter_attrs.set("filter_size", w.shape());
  Tensor dx = call_op1("Conv2DBackpropInput", {dy, w}, in_attrs);
  Tensor dw = call_op1("Conv2DBackpropFilter", {x, dy}, filter_attrs);
  return {y.to_floats(), dx.to_floats(), dw.to_floats()};
}

struct ConvOperands {
  Tensor x, w, b, dy;
  explicit ConvOperands(DeviceRef d)
      : x(Tensor::randn({2, 3, 8, 8}, DType::kF32, d, 1)),
        w(Tensor::randn({4, 3, 3, 3}, DType::kF32, d, 2)),
        b(Tensor::randn({4}, DType::kF32, d, 3)),
        dy(Tensor::randn({2, 4, 8, 8}, DType::kF32, d, 4)) {}
};

class PrivateFormats : public ::testing::Test {
 protected:
  void TearDown() override { Runtime::configure({.spec = "tiny"}); }
};

}  // namespace

TEST(Formats, StorageShapesAsTheProfileShowsThem) {
  // f32: C0 = 8 (the profile's Conv2D path); the pool's TransDataSpecial: C0 = 16 for f32.
  EXPECT_EQ(storage_shape(Format::kNC1HWC0, {32, 3, 224, 224}, DType::kF32), (Ints{32, 1, 224, 224, 8}));
  EXPECT_EQ(storage_shape(Format::kNC1HWC0, {32, 192, 27, 27}, DType::kF32), (Ints{32, 24, 27, 27, 8}));
  EXPECT_EQ(storage_shape(Format::kNC1HWC0, {32, 64, 55, 55}, DType::kF32, 16), (Ints{32, 4, 55, 55, 16}));
  EXPECT_EQ(storage_shape(Format::kFractalZ, {64, 3, 11, 11}, DType::kF32), (Ints{121, 4, 16, 8}));
  EXPECT_EQ(storage_shape(Format::kFractalZ, {192, 64, 5, 5}, DType::kF32), (Ints{200, 12, 16, 8}));
  EXPECT_EQ(storage_shape(Format::kFractalZ, {384, 192, 3, 3}, DType::kF32), (Ints{216, 24, 16, 8}));
  EXPECT_EQ(storage_shape(Format::kFractalZ, {256, 384, 3, 3}, DType::kF32), (Ints{432, 16, 16, 8}));
  // FRACTAL_NZ [..., n1, m1, 16, n0]; ATB writes the same storage as [b, n1, m1 * 16, n0]: [8, 2, 112, 16].
  EXPECT_EQ(storage_shape(Format::kFractalNZ, {8, 100, 30}, DType::kF16), (Ints{8, 2, 7, 16, 16}));
  EXPECT_EQ(shape_numel(storage_shape(Format::kFractalNZ, {8, 100, 30}, DType::kF16)), 8 * 2 * 112 * 16);
  EXPECT_EQ(storage_shape(Format::kNC1HWC0, {1, 17, 2, 2}, DType::kF16), (Ints{1, 2, 2, 2, 16}));
  EXPECT_EQ(storage_shape(Format::kNCHW, {2, 3}, DType::kF32), (Ints{2, 3}));
  EXPECT_EQ(c0_of(DType::kF16), 16);
  EXPECT_EQ(c0_of(DType::kBF16), 16);
  EXPECT_EQ(c0_of(DType::kF32), 8);
  EXPECT_EQ(c0_of(DType::kI8), 32);
  EXPECT_THROW(storage_shape(Format::kNC1HWC0, {3, 4, 5}, DType::kF32), InvalidArgument);
  EXPECT_THROW(storage_shape(Format::kFractalNZ, {7}, DType::kF32), InvalidArgument);
}

TEST(Formats, NamesAsKernelDetailsWritesThem) {
  for (const Format f : {Format::kND, Format::kNCHW, Format::kNC1HWC0, Format::kFractalZ, Format::kFractalNZ})
    EXPECT_EQ(parse_format(format_name(f)), f);
  EXPECT_EQ(format_name(Format::kND), "FORMAT_ND");
  EXPECT_EQ(parse_format("ND"), Format::kND);
  EXPECT_EQ(parse_format("NC1HWC0:1"), Format::kNC1HWC0);
  EXPECT_FALSE(is_private(Format::kNCHW));
  EXPECT_TRUE(is_private(Format::kFractalZ));
  for (const char* bad : {"", "nchw", "NHWC", "FRACTAL", ":1"}) {
    try {
      parse_format(bad);
      ADD_FAILURE() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("NC1HWC0"), std::string::npos) << e.what();
    }
  }
}

TEST(TransDataOp, ConvertsEveryPairAsTheHandLayout) {
  Runtime::configure({.spec = "tiny"});
  for (const DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Ints act{2, 11, 3, 2}, weight{18, 5, 2, 3}, mat{2, 20, 33};
    const auto xa = iota_values(act), xw = iota_values(weight), xm = iota_values(mat);
    const Tensor a = Tensor::from_floats(xa, act, DType::kF32, d), w = Tensor::from_floats(xw, weight, DType::kF32, d),
                 m = Tensor::from_floats(xm, mat, DType::kF32, d);
    // NCHW <-> NC1HWC0 (C0 8 and 16), NCHW <-> FRACTAL_Z, ND <-> FRACTAL_NZ, and each back.
    const Tensor a5 = trans_data(a, "NCHW", "NC1HWC0", {});
    EXPECT_EQ(a5.shape(), (Ints{2, 2, 3, 2, 8}));
    EXPECT_EQ(a5.to_floats(), hand_5hd(xa, act, 8));
    EXPECT_EQ(trans_data(a5, "NC1HWC0", "NCHW", act).to_floats(), xa);
    const Tensor a16 = trans_data(a, "NCHW", "NC1HWC0:1", {}, 16);
    EXPECT_EQ(a16.to_floats(), hand_5hd(xa, act, 16));
    EXPECT_EQ(trans_data(a16, "NC1HWC0:1", "NCHW", act, 16).to_floats(), xa);
    const Tensor wz = trans_data(w, "NCHW", "FRACTAL_Z", {});
    EXPECT_EQ(wz.shape(), (Ints{1 * 2 * 3, 2, 16, 8}));
    EXPECT_EQ(wz.to_floats(), hand_fz(xw, weight, 8));
    EXPECT_EQ(trans_data(wz, "FRACTAL_Z", "NCHW", weight).to_floats(), xw);
    const Tensor mz = trans_data(m, "ND", "FRACTAL_NZ", {});
    EXPECT_EQ(mz.shape(), (Ints{2, 5, 2, 16, 8}));
    EXPECT_EQ(mz.to_floats(), hand_nz(xm, mat, 8));
    EXPECT_EQ(trans_data(mz, "FRACTAL_NZ", "FORMAT_ND", mat).to_floats(), xm);
    // Private to private: NC1HWC0 -> FRACTAL_Z of one [Cout, Cin, kh, kw] tensor.
    const Tensor w5 = trans_data(w, "NCHW", "NC1HWC0", {});
    EXPECT_EQ(trans_data(w5, "NC1HWC0", "FRACTAL_Z", weight).to_floats(), hand_fz(xw, weight, 8));
    // f16: C0 = 16.
    const Tensor h = Tensor::from_floats(xa, act, DType::kF16, d);
    EXPECT_EQ(trans_data(h, "NCHW", "NC1HWC0", {}).to_floats(), hand_5hd(xa, act, 16));
  }
}

TEST(TransDataOp, BadAttributesAreErrorsNamingTheOp) {
  Runtime::configure({.spec = "tiny"});
  const Tensor x = Tensor::zeros({2, 3, 4, 4}, DType::kF32);
  const auto fails = [&](const Attrs& attrs, const std::string& says) {
    try {
      call_op1("TransData", {x}, attrs);
      ADD_FAILURE() << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  fails({{"src_format", "NCHW"}, {"dst_format", "NHWC"}}, "unknown format 'NHWC'");
  fails({{"src_format", "NC1HWC0"}, {"dst_format", "NCHW"}}, "needs the 'base_shape'");
  fails({{"src_format", "NC1HWC0"}, {"dst_format", "NCHW"}, {"base_shape", Ints{2, 3, 4, 4}}}, "is not the NC1HWC0");
  fails({{"src_format", "NCHW"}, {"dst_format", "NC1HWC0"}, {"c0", std::int64_t{-1}}}, "c0 must be");
  fails({{"src_format", "ND"}, {"dst_format", "FRACTAL_Z"}, {"base_shape", Ints{2, 3}}}, "TransData");
  const Tensor v = Tensor::zeros({5}, DType::kF32);
  EXPECT_THROW(call_op1("TransData", {v}, {{"src_format", "ND"}, {"dst_format", "NC1HWC0"}}), InvalidArgument);
}

TEST(TransDataOp, CostPaysShortRunsAWholeBurstAndTheFixedPart) {
  DeviceSpec spec;
  spec.transdata_burst_bytes = 512;
  spec.transdata_fixed_ns = 7000;
  const OpSchema& schema = OpRegistry::instance().schema("TransData");
  ASSERT_NE(schema.device, nullptr);  // its cost on a device follows the spec (OpDeviceRules::device_cost)
  const auto cost = [&](const Ints& shape, const char* src, const char* dst, const Ints& base) {
    const std::vector<TensorMeta> in{{shape, DType::kF32}};
    Attrs attrs{{"src_format", src}, {"dst_format", dst}};
    if (!base.empty()) attrs.set("base_shape", base);
    return schema.device->device_cost(in, {}, attrs, spec);
  };
  // 5HD of [1, 8, 2, 2] f32: runs of H * W * 4 = 16 bytes -> 32x the 2 * 128 bytes.
  const KernelCost c = cost({1, 8, 2, 2}, "NCHW", "NC1HWC0", {});
  EXPECT_DOUBLE_EQ(c.bytes, 2 * 128.0 * 32);
  EXPECT_DOUBLE_EQ(c.bytes_written, 128.0 * 32);  // the 5HD side is written
  EXPECT_DOUBLE_EQ(c.fixed_ns, 7000);
  // Runs beyond the burst: the bytes themselves.
  EXPECT_DOUBLE_EQ(cost({1, 1, 32, 32, 8}, "NC1HWC0", "NCHW", {1, 8, 32, 32}).bytes, 2 * 8 * 32 * 32 * 4.0);
  // FRACTAL_Z of [16, 8, 3, 3]: runs of one C0 block (8 * 4 = 32 bytes) whatever kh * kw, storage
  // [9, 1, 16, 8] as big as the weight; the same for 5x5.
  EXPECT_DOUBLE_EQ(cost({16, 8, 3, 3}, "NCHW", "FRACTAL_Z", {}).bytes, 2 * 1152 * 4.0 * 512 / 32);
  EXPECT_DOUBLE_EQ(cost({16, 8, 5, 5}, "NCHW", "FRACTAL_Z", {}).bytes, 2 * 3200 * 4.0 * 512 / 32);
  // No spec (the schema's CostFn): whole runs, no fixed part.
  const std::vector<TensorMeta> in{{{1, 8, 2, 2}, DType::kF32}};
  const std::vector<TensorMeta> out{{{1, 1, 2, 2, 8}, DType::kF32}};
  const KernelCost plain = schema.cost(in, out, {{"src_format", "NCHW"}, {"dst_format", "NC1HWC0"}});
  EXPECT_DOUBLE_EQ(plain.bytes, 2 * 128.0);
  EXPECT_DOUBLE_EQ(plain.fixed_ns, 0);
}

TEST(MemSetOp, ZeroesItsOutput) {
  Runtime::configure({.spec = "tiny"});
  const std::vector<float> ones(6, 1.0f);
  const Tensor x = Tensor::from_floats(ones, {2, 3}, DType::kF32, DeviceRef::npu());
  EXPECT_EQ(call_op1("MemSet", {x}).to_floats(), std::vector<float>(6, 0.0f));
}

TEST_F(PrivateFormats, AConvolutionStepConvertsAsTheProfileShows) {
  Runtime::configure({.spec = "ascend910b"});
  ASSERT_TRUE(Runtime::get().device().spec().private_formats);
  emulator::testing::EndRecords records;
  const ConvOperands o(DeviceRef::npu());
  conv_step(o.x, o.w, o.b, o.dy);
  const std::vector<SeenTask> tasks = tasks_of(records);
  std::vector<std::string> seen;
  for (const auto& t : tasks) seen.push_back(t.name + " " + t.in_formats + " -> " + t.out_formats);
  const std::vector<std::string> want{
      "trans_TransData_0 NCHW -> NC1HWC0",
      "trans_TransData_1 NCHW -> FRACTAL_Z",
      "Conv2d NC1HWC0;FRACTAL_Z;FORMAT_ND -> NC1HWC0",
      "trans_TransData_2 NC1HWC0 -> NCHW",
      "trans_TransData_12 NCHW -> FRACTAL_Z",
      "trans_TransData_13 NCHW -> NC1HWC0",
      "Conv2DBackpropInput NC1HWC0;FRACTAL_Z -> NC1HWC0",
      "trans_TransData_14 NC1HWC0 -> NCHW",
      "trans_TransData_15 NCHW -> NC1HWC0",
      "trans_TransData_16 NCHW -> NC1HWC0",
      "Conv2DBackpropFilter_MemSet <none> -> <none>",
      "Conv2DBackpropFilter NC1HWC0;NC1HWC0 -> FRACTAL_Z",
      "trans_TransData_17 FRACTAL_Z -> NCHW",
  };
  EXPECT_EQ(seen, want);
  // Storage shapes as kernel_details writes them (f32: C0 = 8).
  for (const auto& t : tasks) {
    if (t.op_type == "Conv2d") {
      EXPECT_EQ(t.in_shapes, "2,1,8,8,8;9,1,16,8;4");
      EXPECT_EQ(t.out_shapes, "2,1,8,8,8");
    }
    if (t.name == "trans_TransData_17") {
      EXPECT_EQ(t.in_shapes, "9,1,16,8");
      EXPECT_EQ(t.out_shapes, "4,3,3,3");
    }
  }
  EXPECT_EQ(count_type(tasks, "TransData"), 9);
  EXPECT_EQ(count_type(tasks, "MemSet"), 1);
}

TEST_F(PrivateFormats, NumericsDoNotDependOnFormats) {
  const std::string spec_file = "/tmp/npuscope_no_private_formats_" + std::to_string(getpid()) + ".json";
  std::ofstream(spec_file) << R"({"base": "ascend910b", "private_formats": false})";
  Runtime::configure({.spec = spec_file});
  std::vector<std::vector<float>> plain;
  {
    const ConvOperands o(DeviceRef::npu());
    plain = conv_step(o.x, o.w, o.b, o.dy);
  }
  std::remove(spec_file.c_str());
  for (const bool keep : {false, true}) {
    Runtime::configure({.spec = "ascend910b", .allow_internal_format = keep});
    const ConvOperands o(DeviceRef::npu());
    EXPECT_EQ(conv_step(o.x, o.w, o.b, o.dy), plain) << "allow_internal_format " << keep;
  }
}

TEST_F(PrivateFormats, AllowInternalFormatConvertsEachTensorOnce) {
  Runtime::configure({.spec = "ascend910b", .allow_internal_format = true});
  emulator::testing::EndRecords records;
  const ConvOperands o(DeviceRef::npu());
  conv_step(o.x, o.w, o.b, o.dy);
  Tensor y = ops::conv2d(o.x, o.w, o.b, {1, 1}, {1, 1, 1, 1});  // x and w already converted
  ops::relu(y);                                                 // no plan: y back to NCHW first
  const std::vector<SeenTask> tasks = tasks_of(records);
  std::vector<std::string> conversions;
  for (const auto& t : tasks) {
    if (t.op_type == "TransData") conversions.push_back(t.name + " " + t.in_formats + " -> " + t.out_formats);
  }
  // x, w and dy once each (the step's outputs stay private: .to_floats() reads logical bytes), and
  // the second forward's output once, for the Relu.
  EXPECT_EQ(conversions,
            (std::vector<std::string>{"trans_TransData_0 NCHW -> NC1HWC0", "trans_TransData_1 NCHW -> FRACTAL_Z",
                                      "trans_TransData_13 NCHW -> NC1HWC0", "trans_TransData_base NC1HWC0 -> NCHW"}));
  EXPECT_EQ(o.w.format(), Format::kFractalZ);
  EXPECT_EQ(y.format(), Format::kND);  // the Relu converted it back, in place
  EXPECT_EQ(o.x.format(), Format::kNC1HWC0);
  EXPECT_EQ(o.x.view({-1}).format(), Format::kND);  // a view of another shape has no tag
  set_allow_internal_format(false);
}

TEST_F(PrivateFormats, PoolsConvertInsideTheirApiWithC0Of16) {
  Runtime::configure({.spec = "ascend910b", .allow_internal_format = true});  // aclnn converts anyway
  emulator::testing::EndRecords records;
  const Tensor x = Tensor::randn({2, 20, 6, 6}, DType::kF32, DeviceRef::npu(), 5);
  const Attrs pool{{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}};
  const auto yi = call_op("MaxPoolWithArgmax", {x}, pool);
  Attrs grad{{"input_size", x.shape()}};
  call_op1("MaxPoolGradWithArgmax", {yi[0], yi[1]}, grad).to_floats();
  std::vector<std::string> seen;
  for (const auto& t : tasks_of(records)) {
    seen.push_back(t.name + " " + t.in_shapes + " " + t.in_formats + " -> " + t.out_shapes + " " + t.out_formats);
  }
  const std::string fwd = "aclnnMaxPool2dWithMask_TransDataSpecial_TransData ";
  const std::string bwd = "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData ";
  EXPECT_EQ(seen, (std::vector<std::string>{
                      fwd + "2,20,6,6 NCHW -> 2,2,6,6,16 NC1HWC0:1",
                      "MaxPoolWithArgmax 2,2,6,6,16 NC1HWC0:1 -> 2,2,2,2,16;2,2,2,2,16 NC1HWC0:1;NC1HWC0:1",
                      fwd + "2,2,2,2,16 NC1HWC0:1 -> 2,20,2,2 NCHW",
                      bwd + "2,20,2,2 NCHW -> 2,2,2,2,16 NC1HWC0:1",
                      "MaxPoolGradWithArgmax 2,2,2,2,16;2,2,2,2,16 NC1HWC0:1;NC1HWC0:1 -> 2,2,6,6,16 NC1HWC0:1",
                      bwd + "2,2,6,6,16 NC1HWC0:1 -> 2,20,6,6 NCHW",
                  }));
  set_allow_internal_format(false);
}

TEST_F(PrivateFormats, AGoldenRunLaunchesTheSameTasks) {
  std::vector<std::vector<std::string>> runs;
  for (const bool golden : {false, true}) {
    Runtime::configure({.spec = "ascend910b", .golden = golden});
    reset_call_counters();
    emulator::testing::EndRecords records;
    const ConvOperands o(DeviceRef::npu());
    conv_step(o.x, o.w, o.b, o.dy);
    std::vector<std::string> names;
    for (const auto& t : tasks_of(records)) names.push_back(t.op_type + " " + t.name);
    runs.push_back(names);
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST_F(PrivateFormats, TheTinySpecLaunchesNoConversions) {
  Runtime::configure({.spec = "tiny"});
  emulator::testing::EndRecords records;
  const ConvOperands o(DeviceRef::npu());
  conv_step(o.x, o.w, o.b, o.dy);
  const auto tasks = tasks_of(records);
  EXPECT_EQ(count_type(tasks, "TransData"), 0);
  EXPECT_EQ(count_type(tasks, "MemSet"), 0);
}
