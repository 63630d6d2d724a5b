// Shape nodes of an npu run compute on the host (Note [Shape nodes on the host] in host_nodes.h):
// the same results as the cpu run, no copy back from the device, integer data left on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/onnx_model.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "onnx_test_util.h"

using namespace npuscope::emulator;
using npuscope::testing::ints_attribute;
using npuscope::testing::ModelBuilder;
using npuscope::testing::temp_dir;
using onnx::TensorProto;

namespace {

class HostNodesTest : public npuscope::emulator::testing::OpTest {};

// y = Reshape(x · 2, [Shape(x)[0:1], -1]); `shape` is the computed target; ids + Shape(ids) stays on
// the device (ids is an input: integer data, not a host value).
std::string shape_model(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 3, 4}).input("ids", TensorProto::INT64, {1});
  b.output("y", TensorProto::FLOAT, {2, 12}).output("shape", TensorProto::INT64, {2});
  b.output("ids_plus", TensorProto::INT64, {1});
  b.initializer("two", {}, {2.0f});
  b.node("Mul", {"x", "two"}, {"x2"}, "double");
  b.node("Shape", {"x"}, {"s"}, "shape_of");
  ints_attribute(b.node("Constant", {}, {"zero"}, "zero"), "value_ints", {0});
  ints_attribute(b.node("Constant", {}, {"one"}, "one"), "value_ints", {1});
  ints_attribute(b.node("Constant", {}, {"rest"}, "rest"), "value_ints", {-1});
  b.node("Slice", {"s", "zero", "one"}, {"first"}, "first_dim");
  auto* axis = b.node("Concat", {"first", "rest"}, {"shape"}, "target").add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  b.node("Reshape", {"x2", "shape"}, {"y"}, "reshape");
  b.node("Shape", {"ids"}, {"ids_shape"}, "ids_shape");
  b.node("Add", {"ids", "ids_shape"}, {"ids_plus"}, "ids_add");
  return b.save(dir / "shape.onnx");
}

struct Seen {
  int copies_back = 0;
  std::vector<std::string> npu_ops, host_ops;
};
Seen seen;

void on_task(void*, const npuscope::hooks::TaskRecord& r) {
  if (r.phase != npuscope::hooks::TaskPhase::kEnd) return;
  (r.device_id >= 0 ? seen.npu_ops : seen.host_ops).emplace_back(r.op_type);
}
void on_memcpy(void*, const npuscope::hooks::MemcpyRecord& r) {
  if (r.kind == npuscope::CopyKind::kDeviceToHost) seen.copies_back++;
}

bool has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

TEST_F(HostNodesTest, ShapeNodesRunOnTheHostWithTheCpuResults) {
  const auto model = OnnxModel::load(shape_model(temp_dir("host_nodes")));
  std::vector<float> xs(24);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 7.5f;
  const Tensor x = Tensor::from_floats(xs, {2, 3, 4}, DType::kF32);
  const Tensor ids = Tensor::from_ints(std::vector<std::int64_t>{40}, {1}, DType::kI64);
  const std::vector<Tensor> want = model.run({{"x", x}, {"ids", ids}});

  seen = {};
  npuscope::hooks::SubscriberTable table;
  table.on_task = on_task;
  table.on_memcpy = on_memcpy;
  npuscope::hooks::subscribe(&table);
  const std::vector<Tensor> got =
      model.run({{"x", x.to(DeviceRef::npu())}, {"ids", ids.to(DeviceRef::npu())}}, {.device = DeviceRef::npu()});
  Runtime::get().synchronize_all();
  npuscope::hooks::subscribe(nullptr);

  EXPECT_EQ(seen.copies_back, 0);  // nothing read back to run the graph
  EXPECT_TRUE(has(seen.host_ops, "Slice") && has(seen.host_ops, "Concat"));
  EXPECT_FALSE(has(seen.npu_ops, "Slice") || has(seen.npu_ops, "Concat"));
  EXPECT_TRUE(has(seen.npu_ops, "Mul"));  // floating-point work stays on the device
  EXPECT_TRUE(has(seen.npu_ops, "Add"));  // so does integer data from an input

  ASSERT_EQ(got.size(), 3u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].device().is_npu()) << "output " << i;  // host values come back uploaded
    EXPECT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
  }
  EXPECT_EQ(got[0].to_floats(), want[0].to_floats());
  EXPECT_EQ(got[1].to_ints(), (std::vector<std::int64_t>{2, -1}));
  EXPECT_EQ(got[2].to_ints(), (std::vector<std::int64_t>{41}));
}

}  // namespace
