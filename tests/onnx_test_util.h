// Builds small ONNX models in tests (no Python needed).
#pragma once

#include <unistd.h>

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace npuscope::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  // dims: >= 0 fixed, -1 symbolic named by `params` (same index) or unnamed.
  ModelBuilder& input(const std::string& name, int elem_type, std::vector<std::int64_t> dims,
                      std::vector<std::string> params = {}) {
    value(model_.mutable_graph()->add_input(), name, elem_type, dims, params);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem_type, std::vector<std::int64_t> dims = {}) {
    value(model_.mutable_graph()->add_output(), name, elem_type, dims, {});
    return *this;
  }
  onnx::NodeProto& node(const std::string& op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  ModelBuilder& initializer(const std::string& name, std::vector<std::int64_t> dims, std::vector<float> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_float_data(v);
    return *this;
  }
  std::string save(const std::filesystem::path& path) const {
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return path.string();
  }
  onnx::ModelProto& proto() { return model_; }

 private:
  static void value(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                    const std::vector<std::int64_t>& dims, const std::vector<std::string>& params) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (std::size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0) {
        d->set_dim_value(dims[i]);
      } else if (i < params.size() && !params[i].empty()) {
        d->set_dim_param(params[i]);
      }
    }
  }
  onnx::ModelProto model_;
};

// Adds attribute `name` = the integers `values` (AttributeProto INTS) to `node`.
inline void ints_attribute(onnx::NodeProto& node, const std::string& name, const std::vector<std::int64_t>& values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const std::int64_t v : values) a->add_ints(v);
}

// A fresh, empty temporary directory for one test. The process id keeps two suites running at once
// (make test beside make test-asan, two build trees) out of each other's files.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("npuscope_test_" + name + "." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace npuscope::testing
