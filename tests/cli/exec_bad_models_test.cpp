// `npuscope exec` on models with bad attributes, operands and input dims, called as a user would:
// each is a clear `npuscope: error:` naming the node and the bad value, with a non-zero exit, never
// a crash, a std::bad_alloc or a silently wrong result (issue 15's bad-input campaign).
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

void int64_initializer(ModelBuilder& b, const std::string& name, std::vector<std::int64_t> dims,
                       std::vector<std::int64_t> values) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
}

// Runs the model on both devices; expects exit 1 and an error containing every one of `parts`.
void expect_error(const std::string& model, std::initializer_list<const char*> parts) {
  for (const char* device : {"cpu", "npu"}) {
    const auto dir = fs::path(model).parent_path() / (std::string("out_") + device);
    const auto r =
        run_command(npuscope_cmd("exec --model " + model + " --device " + device + " --output-dir " + dir.string()));
    EXPECT_EQ(r.status, 1) << device << ": " << r.output;
    EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << device << ": " << r.output;
    for (const char* p : parts)
      EXPECT_NE(r.output.find(p), std::string::npos) << device << ", '" << p << "': " << r.output;
  }
}

}  // namespace

TEST(ExecBadModels, HugeBlocksizeIsAnErrorNotACrash) {
  const auto dir = temp_dir("exec_bad_blocksize");
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    ModelBuilder b(17);
    b.input("x", onnx::TensorProto::FLOAT, {1, 4, 2, 2}).output("y", onnx::TensorProto::FLOAT);
    auto& n = b.node(op, {"x"}, {"y"}, "block");
    auto* a = n.add_attribute();
    a->set_name("blocksize");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(std::int64_t{1} << 40);  // blocksize² overflowed to 0: SIGFPE
    expect_error(b.save(dir / (std::string(op) + ".onnx")),
                 {"node 'block'", op, "blocksize 1099511627776", "[1, 2147483647]"});
  }
}

TEST(ExecBadModels, OutOfRangeGatherIndexIsAnError) {
  const auto dir = temp_dir("exec_bad_gather");
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {3, 2}).output("y", onnx::TensorProto::FLOAT);
  int64_initializer(b, "i", {2}, {0, 7});
  b.node("Gather", {"x", "i"}, {"y"}, "lookup");
  expect_error(b.save(dir / "gather.onnx"), {"'lookup'", "Gather", "index 7", "[-3, 2]"});
}

TEST(ExecBadModels, Int64MaxPadsAreAnError) {
  const auto dir = temp_dir("exec_bad_pads");
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {2, 3}).output("y", onnx::TensorProto::FLOAT);
  int64_initializer(b, "p", {4}, {0, kMax, 0, 0});
  auto& n = b.node("Pad", {"x", "p"}, {"y"}, "pad");
  auto* a = n.add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("reflect");
  expect_error(b.save(dir / "pad.onnx"), {"node 'pad'", "Pad", "9223372036854775807", "overflows int64"});
}

TEST(ExecBadModels, HugeInputDimIsAnErrorBeforeAllocating) {
  const auto dir = temp_dir("exec_bad_dim");
  ModelBuilder b(17);
  b.input("x", onnx::TensorProto::FLOAT, {std::int64_t{1} << 40, 3}).output("y", onnx::TensorProto::FLOAT);
  b.node("Relu", {"x"}, {"y"}, "relu");
  expect_error(b.save(dir / "big.onnx"), {"[1099511627776, 3]", "too large", "the limit is 1099511627776 bytes"});
  // An integer input: exec generates its values in a buffer of its own (this was std::bad_alloc).
  ModelBuilder i(17);
  i.input("ids", onnx::TensorProto::INT64, {std::int64_t{1} << 40, 3}).output("y", onnx::TensorProto::INT64);
  i.node("Neg", {"ids"}, {"y"}, "neg");
  expect_error(i.save(dir / "big_int.onnx"), {"input 'ids'", "[1099511627776, 3]", "too large"});
}

TEST(ExecBadModels, RangeWhoseCountOverflowsIsAnError) {
  const auto dir = temp_dir("exec_bad_range");
  ModelBuilder b(17);
  b.output("y", onnx::TensorProto::INT64);
  int64_initializer(b, "s", {}, {std::numeric_limits<std::int64_t>::min()});
  int64_initializer(b, "l", {}, {kMax});
  int64_initializer(b, "d", {}, {1});
  b.node("Range", {"s", "l", "d"}, {"y"}, "range");
  expect_error(b.save(dir / "range.onnx"), {"node 'range'", "Range", "more than int64 can count"});
}
