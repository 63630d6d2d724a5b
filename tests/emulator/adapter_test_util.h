// One-node ONNX models for the adapter tests: a node with attributes, int64 operands as
// initializers, run through the importer on cpu and npu:0.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/onnx_model.h"
#include "onnx_test_util.h"

namespace npuscope::emulator::testing {

class OneNodeModel {
 public:
  OneNodeModel(const std::string& op_type, std::int64_t opset) : builder_(opset), op_type_(op_type) {}

  // A graph input (fed at run time).
  OneNodeModel& input(const std::string& name, const Tensor& value) {
    builder_.input(name, onnx_from_dtype(value.dtype()), value.shape());
    feeds_[name] = value;
    inputs_.push_back(name);
    return *this;
  }
  // An int64 (or float) initializer operand.
  OneNodeModel& ints(const std::string& name, const std::vector<std::int64_t>& values, Shape dims = {-1}) {
    auto* t = builder_.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (dims == Shape{-1}) dims = {static_cast<std::int64_t>(values.size())};
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    inputs_.push_back(name);
    return *this;
  }
  OneNodeModel& floats(const std::string& name, const std::vector<float>& values, Shape dims) {
    builder_.initializer(name, dims, values);
    inputs_.push_back(name);
    return *this;
  }
  OneNodeModel& empty_input() {
    inputs_.emplace_back();
    return *this;
  }
  OneNodeModel& attr(const std::string& name, std::int64_t v) {
    add(name, onnx::AttributeProto::INT).set_i(v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, float v) {
    add(name, onnx::AttributeProto::FLOAT).set_f(v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, const std::string& v) {
    add(name, onnx::AttributeProto::STRING).set_s(v);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, const std::vector<std::int64_t>& v) {
    auto& a = add(name, onnx::AttributeProto::INTS);
    for (auto e : v) a.add_ints(e);
    return *this;
  }

  // Runs with `outputs` graph outputs (y0, y1, ...) on `device`.
  std::vector<Tensor> run(int outputs = 1, DeviceRef device = DeviceRef::cpu()) {
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) {
      names.push_back(std::string(1, 'y').append(std::to_string(i)));  // "y" + ... trips GCC 12's -Wrestrict
      builder_.output(names.back(), onnx::TensorProto::FLOAT);
    }
    auto& node = builder_.node(op_type_, inputs_, names, "n");
    for (const auto& a : attrs_) *node.add_attribute() = a;
    const auto dir = npuscope::testing::temp_dir("adapter_" + op_type_);
    const auto model = OnnxModel::load(builder_.save(dir / "m.onnx"));
    std::vector<Tensor> out;
    for (const Tensor& t : model.run(feeds_, {.device = device})) out.push_back(t.cpu());
    return out;
  }

 private:
  onnx::AttributeProto& add(const std::string& name, onnx::AttributeProto::AttributeType type) {
    attrs_.emplace_back();
    attrs_.back().set_name(name);
    attrs_.back().set_type(type);
    return attrs_.back();
  }

  npuscope::testing::ModelBuilder builder_;
  std::string op_type_;
  std::vector<std::string> inputs_;
  std::vector<onnx::AttributeProto> attrs_;
  std::map<std::string, Tensor> feeds_;
};

}  // namespace npuscope::emulator::testing
