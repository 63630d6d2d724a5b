// An emulated trace says what a real profile says of a kernel's tensors (Note [Input signature] in
// hook_api.h): TASK's input shapes, dtypes and formats, and its output shapes, dtypes and formats,
// for NPU tasks and cpu-device tasks alike, an absent optional input left empty.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "inject_test_util.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope;
using namespace npuscope::emulator;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::TempDir;

namespace {

struct Columns {
  std::string in_shapes, in_dtypes, in_formats, out_shapes, out_dtypes, out_formats;
  std::int32_t device = 0;
};

std::map<std::string, Columns> columns_by_op(const std::string& db) {
  auto trace = open_trace(db);
  std::map<std::string, Columns> out;
  for (const auto& t : trace->rows<collector::TaskRow>()) {
    const auto s = [&](collector::StringId id) { return id == 0 ? std::string("<none>") : trace->string(id); };
    const std::string key = trace->string(t.op_type_id) + (t.device_id < 0 ? "@cpu" : "");
    out[key] = {s(t.input_shapes_id),
                s(t.input_dtypes_id),
                s(t.input_formats_id),
                s(t.output_shapes_id),
                s(t.output_dtypes_id),
                s(t.output_formats_id),
                t.device_id};
  }
  return out;
}

}  // namespace

TEST(TaskSignature, TasksRecordTheirInputsAndOutputsWithFormats) {
  TempDir dir;
  const std::string db = dir.file("trace.db");
  {
    Profiled p(db, "{}");
    ASSERT_EQ(p.rc(), 0);
    const DeviceRef npu = DeviceRef::npu();
    Tensor a = Tensor::zeros({2, 3}, DType::kF32, npu), b = Tensor::zeros({3, 4}, DType::kF16, npu);
    ops::matmul(a, ops::cast(b, DType::kF32));
    Tensor x = Tensor::zeros({1, 2, 5, 5}, DType::kF32, npu), w = Tensor::zeros({4, 2, 3, 3}, DType::kF32, npu);
    ops::relu(ops::conv2d(x, w, Tensor()));  // no bias: the third input is left empty
    ops::relu(Tensor::zeros({3}, DType::kF32));
    p.stop();
  }
  const auto ops = columns_by_op(db);
  const Columns& mm = ops.at("MatMul");
  EXPECT_EQ(mm.in_shapes, "2,3;3,4");
  EXPECT_EQ(mm.in_dtypes, "f32;f32");
  EXPECT_EQ(mm.in_formats, "FORMAT_ND;FORMAT_ND");
  EXPECT_EQ(mm.out_shapes, "2,4");
  EXPECT_EQ(mm.out_dtypes, "f32");
  EXPECT_EQ(mm.out_formats, "FORMAT_ND");
  const Columns& conv = ops.at("Conv2d");  // the tiny spec keeps base formats (no TransData)
  EXPECT_EQ(conv.in_shapes, "1,2,5,5;4,2,3,3;");
  EXPECT_EQ(conv.in_formats, "NCHW;NCHW;");
  EXPECT_EQ(conv.out_shapes, "1,4,3,3");
  EXPECT_EQ(conv.out_formats, "NCHW");
  EXPECT_EQ(ops.at("Cast").out_dtypes, "f32");
  const Columns& host = ops.at("Relu@cpu");
  EXPECT_EQ(host.device, -1);
  EXPECT_EQ(host.in_shapes, "3");
  EXPECT_EQ(host.out_shapes, "3");
  EXPECT_EQ(host.out_formats, "FORMAT_ND");
}
