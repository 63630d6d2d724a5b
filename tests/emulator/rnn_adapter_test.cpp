// The ONNX adapter of LSTM, GRU and RNN (emulator/src/onnx/adapters_rnn.cpp): the node's STRINGS
// `activations` reach the op, optional outputs may be left out, and bad nodes are errors naming the
// node. The ONNX backend cases (tests/conformance) cover the rest.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "npuscope/emulator/onnx_model.h"
#include "onnx_test_util.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::testing::ModelBuilder;

namespace {

class RnnAdapterTest : public OpTest {};

const std::vector<float> kX = {0.5f, -1, 0.25f, 2, -0.5f, 1};  // [T 3, B 1, I 2]

std::vector<float> weights(std::size_t n, float scale) {
  std::vector<float> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(scale * static_cast<float>((i * 7 % 11)) / 11 - scale / 2);
  return v;
}

// A one-node model: X fed, W and R initializers, `outputs` as the node names them ("" left out);
// `edit` adds attributes. Returns the graph outputs (the named ones) run on `device`.
template <class Edit>
std::vector<Tensor> run_node(const std::string& op, std::int64_t gates, std::vector<std::string> inputs,
                             const std::vector<std::string>& outputs, Edit edit, DeviceRef device = DeviceRef::cpu()) {
  const std::int64_t D = 2, H = 3;
  ModelBuilder b(14);
  b.input("X", onnx::TensorProto::FLOAT, {3, 1, 2});
  b.initializer("W", {D, gates * H, 2}, weights(static_cast<std::size_t>(D * gates * H * 2), 1.5f));
  b.initializer("R", {D, gates * H, H}, weights(static_cast<std::size_t>(D * gates * H * H), 1.0f));
  for (const auto& o : outputs) {
    if (!o.empty()) b.output(o, onnx::TensorProto::FLOAT);
  }
  auto& node = b.node(op, std::move(inputs), outputs, "rnn0");
  auto* dir = node.add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s("bidirectional");
  edit(node);
  const auto path = npuscope::testing::temp_dir("rnn_adapter");
  const auto model = OnnxModel::load(b.save(path / (op + ".onnx")));
  std::vector<Tensor> out;
  for (const Tensor& t : model.run({{"X", floats(kX, {3, 1, 2})}}, {.device = device})) out.push_back(t.cpu());
  return out;
}

void add_strings(onnx::NodeProto& node, const char* name, std::initializer_list<const char*> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const char* v : values) a->add_strings(v);
}

void add_floats(onnx::NodeProto& node, const char* name, std::initializer_list<float> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}

}  // namespace

TEST_F(RnnAdapterTest, ActivationsReachTheOpAndYMayBeLeftOut) {
  const auto edit = [](onnx::NodeProto& n) {
    add_strings(n, "activations", {"HardSigmoid", "Tanh", "Softsign", "Sigmoid", "Elu", "ScaledTanh"});
    add_floats(n, "activation_alpha", {0.3f, 0.7f, 0.9f});
    add_floats(n, "activation_beta", {0.4f, 1.5f});
  };
  for (DeviceRef device : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const auto out = run_node("LSTM", 4, {"X", "W", "R"}, {"", "Y_h", "Y_c"}, edit, device);
    ASSERT_EQ(out.size(), 2u);
    // The same op called directly, the activations joined as the adapter joins them.
    const Attrs attrs{{"direction", std::string("bidirectional")},
                      {"activations", std::string("HardSigmoid,Tanh,Softsign,Sigmoid,Elu,ScaledTanh")},
                      {"activation_alpha", std::vector<double>{0.3f, 0.7f, 0.9f}},
                      {"activation_beta", std::vector<double>{0.4f, 1.5f}}};
    const std::vector<Tensor> in{floats(kX, {3, 1, 2}), floats(weights(48, 1.5f), {2, 12, 2}),
                                 floats(weights(72, 1.0f), {2, 12, 3})};
    const auto direct = call_op("LSTM", in, attrs);
    EXPECT_EQ(to_vec(out[0]), to_vec(direct[1]));
    EXPECT_EQ(to_vec(out[1]), to_vec(direct[2]));
    EXPECT_NE(to_vec(out[0]), to_vec(call_op("LSTM", in, {{"direction", std::string("bidirectional")}})[1]));
  }
}

TEST_F(RnnAdapterTest, GruAndRnnNodesRun) {
  const auto none = [](onnx::NodeProto&) {};
  const auto gru = run_node("GRU", 3, {"X", "W", "R"}, {"Y", "Y_h"}, none);
  ASSERT_EQ(gru.size(), 2u);
  EXPECT_EQ(gru[0].shape(), (Shape{3, 2, 1, 3}));
  const auto rnn = run_node("RNN", 1, {"X", "W", "R"}, {"", "Y_h"}, none);
  ASSERT_EQ(rnn.size(), 1u);
  EXPECT_EQ(rnn[0].shape(), (Shape{2, 1, 3}));
}

TEST_F(RnnAdapterTest, BadNodesNameTheNode) {
  const auto as_string = [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("Tanh");
  };
  EXPECT_TRUE(mentions(error_of([&] {
                         run_node("RNN", 1, {"X", "W", "R"}, {"Y"}, as_string);
                       }),
                       {"rnn0", "(RNN)", "'activations' must be a list of strings"}));
  const auto unknown = [](onnx::NodeProto& n) { add_strings(n, "activations", {"Tanh", "Swish"}); };
  EXPECT_TRUE(mentions(error_of([&] {
                         run_node("RNN", 1, {"X", "W", "R"}, {"Y"}, unknown);
                       }),
                       {"rnn0", "unknown activation 'Swish'"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         run_node("GRU", 3, {"X", "W", ""}, {"Y"}, [](onnx::NodeProto&) {});
                       }),
                       {"rnn0", "inputs X, W and R are required"}));
}
