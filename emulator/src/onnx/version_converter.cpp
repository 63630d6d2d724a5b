// Old opsets brought forward, one step per version. See Note [Bringing old opsets forward].
#include "version_converter.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <vector>

#include "npuscope/emulator/onnx_model.h"
#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

onnx::AttributeProto* find_attr(onnx::NodeProto& node, const char* name) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void remove_attr(onnx::NodeProto& node, const char* name) {
  auto* attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
  }
}

onnx::AttributeProto& set_attr(onnx::NodeProto& node, const char* name, onnx::AttributeProto::AttributeType type) {
  remove_attr(node, name);
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}

// The model being converted and what its steps share: ranks from ONNX's shape inference, fresh value
// names, the nodes a rule inserts before the node it rewrites.
class Conversion {
 public:
  // Infers the ranks of the model as given: the steps ask only for values of the original graph.
  Conversion(onnx::ModelProto& model, std::int64_t opset, const std::string& path)
      : model_(model), path_(path), opset_(opset), step_from_(opset) {
    infer_ranks();
  }

  // Runs `rule` on every default-domain node, as the step from opset `from` to from + 1.
  void apply(std::int64_t from, void (*rule)(Conversion&, onnx::NodeProto&));

  [[noreturn]] void fail(const onnx::NodeProto& node, const std::string& what) const;
  // The rank of the node's input `i`; fails if shape inference cannot tell it.
  int rank(const onnx::NodeProto& node, int i) const;
  // The int64 values of a constant input (an initializer or a Constant node's output), or fails.
  std::vector<std::int64_t> constant_ints(const onnx::NodeProto& node, int i) const;
  // Adds an int64 initializer, returns its (fresh) name.
  std::string add_ints(const std::string& base, const std::vector<std::int64_t>& values, bool scalar = false);
  // Replaces the node's input `i` by Unsqueeze(input, axes), inserted before the node.
  void unsqueeze_input(onnx::NodeProto& node, int i, const std::vector<std::int64_t>& axes);

 private:
  std::string fresh_name(const std::string& base);
  void infer_ranks();

  onnx::ModelProto& model_;
  const std::string& path_;
  const std::int64_t opset_;  // the model's
  std::int64_t step_from_;
  int node_index_ = 0;
  std::vector<onnx::NodeProto> inserted_;
  std::unordered_map<std::string, int> ranks_;  // of the original graph's values
  std::set<std::string> names_;                 // every value name (filled on first need)
};

void Conversion::apply(std::int64_t from, void (*rule)(Conversion&, onnx::NodeProto&)) {
  step_from_ = from;
  auto* nodes = model_.mutable_graph()->mutable_node();
  // The rules run on the graph in place (constant_ints reads earlier nodes); the nodes they insert
  // go in afterwards.
  std::vector<std::pair<int, onnx::NodeProto>> inserted;
  for (int i = 0; i < nodes->size(); ++i) {
    node_index_ = i;
    if (is_default_domain(nodes->Get(i).domain())) rule(*this, *nodes->Mutable(i));
    for (auto& n : inserted_) inserted.emplace_back(i, std::move(n));
    inserted_.clear();
  }
  if (inserted.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  auto next = inserted.begin();
  for (int i = 0; i < nodes->size(); ++i) {
    for (; next != inserted.end() && next->first == i; ++next) *out.Add() = std::move(next->second);
    *out.Add() = std::move(*nodes->Mutable(i));
  }
  nodes->Swap(&out);
}

void Conversion::fail(const onnx::NodeProto& node, const std::string& what) const {
  std::string name = node.name();
  if (name.empty()) name.append(node.op_type()).append("_").append(std::to_string(node_index_));
  std::string step;
  if (step_from_ != opset_)
    step = " (at the step " + std::to_string(step_from_) + " -> " + std::to_string(step_from_ + 1) + ")";
  throw ModelError(path_ + ": node '" + name + "' (" + node.op_type() + ", opset " + std::to_string(opset_) +
                   ") cannot be brought forward to opset " + std::to_string(kOldestNativeOpset) + step + ": " + what);
}

// Shape inference on a copy without the initializers' data (only their dims and types count; the
// small int64 ones stay: inference reads Reshape's shape input), and without the declared shapes of
// the outputs and intermediate values: inference stops at the first declaration that contradicts
// what it infers (an output declared as a scalar...), and tells nothing then.
void Conversion::infer_ranks() {
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  inits.Swap(model_.mutable_graph()->mutable_initializer());
  onnx::ModelProto copy = model_;  // without the weights
  inits.Swap(model_.mutable_graph()->mutable_initializer());
  auto& g = *copy.mutable_graph();
  for (const auto& init : model_.graph().initializer()) {
    auto* t = g.add_initializer();
    t->set_name(init.name());
    t->set_data_type(init.data_type());
    *t->mutable_dims() = init.dims();
    if (init.data_type() == onnx::TensorProto::INT64 && init.raw_data().size() + init.int64_data_size() * 8 <= 1024) {
      *t->mutable_int64_data() = init.int64_data();
      t->set_raw_data(init.raw_data());
    }
  }
  g.clear_value_info();
  for (auto& out : *g.mutable_output()) {
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    // What inference could not tell stays unknown: rank() names the input that needed it.
  }
  for (const auto& init : g.initializer()) ranks_[init.name()] = init.dims_size();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const auto& v : *list) {
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
        ranks_.emplace(v.name(), v.type().tensor_type().shape().dim_size());
    }
  }
}

int Conversion::rank(const onnx::NodeProto& node, int i) const {
  const std::string& name = node.input(i);
  auto it = ranks_.find(name);
  if (it == ranks_.end()) {
    fail(node, "the rank of input '" + name +
                   "' is unknown (ONNX shape inference cannot tell it); declare the shapes of the graph inputs");
  }
  return it->second;
}

std::vector<std::int64_t> Conversion::constant_ints(const onnx::NodeProto& node, int i) const {
  const std::string& name = node.input(i);
  const onnx::TensorProto* proto = nullptr;
  for (const auto& init : model_.graph().initializer()) {
    if (init.name() == name) proto = &init;
  }
  for (const auto& n : model_.graph().node()) {
    if (n.op_type() != "Constant" || n.output_size() != 1 || n.output(0) != name) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) proto = &a.t();
    }
  }
  if (proto == nullptr) fail(node, "input '" + name + "' must be a constant (an initializer or a Constant)");
  return tensor_from_proto(*proto, path_).to_ints();
}

std::string Conversion::fresh_name(const std::string& base) {
  if (names_.empty()) {
    const auto& g = model_.graph();
    for (const auto& init : g.initializer()) names_.insert(init.name());
    for (const auto& v : g.input()) names_.insert(v.name());
    for (const auto& n : g.node()) names_.insert(n.output().begin(), n.output().end());
  }
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

std::string Conversion::add_ints(const std::string& base, const std::vector<std::int64_t>& values, bool scalar) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(fresh_name(base));
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<std::int64_t>(values.size()));
  for (const auto v : values) t->add_int64_data(v);
  return t->name();
}

void Conversion::unsqueeze_input(onnx::NodeProto& node, int i, const std::vector<std::int64_t>& axes) {
  onnx::NodeProto u;
  u.set_op_type("Unsqueeze");
  if (!node.name().empty()) u.set_name(node.name() + "/Unsqueeze");
  u.add_input(node.input(i));
  u.add_output(fresh_name(node.input(i) + "_unsqueezed"));
  auto& a = set_attr(u, "axes", onnx::AttributeProto::INTS);
  for (const auto axis : axes) a.add_ints(axis);
  node.set_input(i, u.output(0));
  inserted_.push_back(std::move(u));
}

// ---- 1 -> 2: Pad's `paddings` became `pads`; Split's sizes left the inputs; LpPool's p became an int.

void split_1_2(Conversion& c, onnx::NodeProto& node) {
  if (node.input_size() < 2 || node.input(1).empty()) return;
  const auto sizes = c.constant_ints(node, 1);
  auto& a = set_attr(node, "split", onnx::AttributeProto::INTS);
  for (const auto s : sizes) a.add_ints(s);
  node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
}

void step_1_2(Conversion& c, onnx::NodeProto& node) {
  if (node.op_type() == "Pad") {
    if (auto* a = find_attr(node, "paddings")) a->set_name("pads");
  } else if (node.op_type() == "Split") {
    split_1_2(c, node);
  } else if (node.op_type() == "LpPool" || node.op_type() == "GlobalLpPool") {
    if (auto* a = find_attr(node, "p"); a != nullptr && a->type() == onnx::AttributeProto::FLOAT) {
      const auto p = static_cast<std::int64_t>(a->f());
      set_attr(node, "p", onnx::AttributeProto::INT).set_i(p);
    }
  }
}

// ---- 3 -> 4: Concat's axis became required (it was 1 by default).

void step_3_4(Conversion&, onnx::NodeProto& node) {
  if (node.op_type() == "Concat" && find_attr(node, "axis") == nullptr) {
    set_attr(node, "axis", onnx::AttributeProto::INT).set_i(1);
  }
}

// ---- 4 -> 5: Reshape's `shape` attribute became its second input.

void step_4_5(Conversion& c, onnx::NodeProto& node) {
  if (node.op_type() != "Reshape") return;
  const auto* a = find_attr(node, "shape");
  if (a == nullptr) c.fail(node, "Reshape has no `shape` attribute");
  const std::vector<std::int64_t> shape(a->ints().begin(), a->ints().end());
  node.add_input(c.add_ints(node.input(0) + "_shape", shape));
  remove_attr(node, "shape");
  remove_attr(node, "consumed_inputs");
}

// ---- 5 -> 6: `consumed_inputs` went away; Cast's `to` became an int; Tile's tiles/axis became repeats.

void tile_5_6(Conversion& c, onnx::NodeProto& node) {
  if (node.input_size() != 3) return;
  const auto tiles = c.constant_ints(node, 1), axis = c.constant_ints(node, 2);
  const int rank = c.rank(node, 0);
  if (tiles.size() != 1 || axis.size() != 1 || axis[0] < 0 || axis[0] >= rank) {
    c.fail(node, "Tile-1 needs one tile count and one axis in [0, rank)");
  }
  std::vector<std::int64_t> repeats(static_cast<std::size_t>(rank), 1);
  repeats[static_cast<std::size_t>(axis[0])] = tiles[0];
  node.mutable_input()->DeleteSubrange(1, 2);
  node.add_input(c.add_ints(node.input(0) + "_repeats", repeats));
}

void step_5_6(Conversion& c, onnx::NodeProto& node) {
  remove_attr(node, "consumed_inputs");
  if (node.op_type() == "Cast") {
    auto* a = find_attr(node, "to");
    if (a == nullptr || a->type() != onnx::AttributeProto::STRING) return;
    onnx::TensorProto::DataType type{};
    if (!onnx::TensorProto::DataType_Parse(a->s(), &type)) c.fail(node, "unknown Cast type '" + a->s() + "'");
    set_attr(node, "to", onnx::AttributeProto::INT).set_i(type);
  } else if (node.op_type() == "Tile") {
    tile_5_6(c, node);
  }
}

// ---- 6 -> 7: numpy broadcasting; PRelu's per-channel slope; is_test went away; Upsample's scales.

const std::set<std::string> kBroadcastOps = {"Add", "Sub", "Mul",   "Div",     "Pow", "And",
                                             "Or",  "Xor", "Equal", "Greater", "Less"};

// B aligned at dimension `axis` of A becomes B with trailing 1s (rank(A) - axis - rank(B) of them).
void broadcast_6_7(Conversion& c, onnx::NodeProto& node) {
  const auto* b = find_attr(node, "broadcast");
  const auto* axis_attr = find_attr(node, "axis");
  if (b != nullptr && b->i() != 0 && axis_attr != nullptr && node.input_size() == 2) {
    const int ra = c.rank(node, 0), rb = c.rank(node, 1);
    const std::int64_t axis = axis_attr->i() < 0 ? axis_attr->i() + ra : axis_attr->i();
    const std::int64_t trailing = ra - axis - rb;
    if (axis < 0 || trailing < 0) {
      c.fail(node, "axis " + std::to_string(axis_attr->i()) + " does not fit B (rank " + std::to_string(rb) +
                       ") into A (rank " + std::to_string(ra) + ")");
    }
    std::vector<std::int64_t> axes;
    for (std::int64_t k = 0; k < trailing; ++k) axes.push_back(rb + k);
    if (!axes.empty()) c.unsqueeze_input(node, 1, axes);
  }
  remove_attr(node, "broadcast");
  remove_attr(node, "axis");
}

// A slope [C] meant one slope per channel (dimension 1): it becomes [C, 1, ..., 1].
void prelu_6_7(Conversion& c, onnx::NodeProto& node) {
  if (node.input_size() != 2) return;
  const int rx = c.rank(node, 0);
  if (c.rank(node, 1) != 1 || rx <= 2) return;
  std::vector<std::int64_t> axes;
  for (std::int64_t k = 1; k <= rx - 2; ++k) axes.push_back(k);
  c.unsqueeze_input(node, 1, axes);
}

// As ONNX's RemoveAttributeNotEq(is_test, 0): an explicit training mode cannot be brought forward.
void remove_is_test(Conversion& c, onnx::NodeProto& node) {
  if (const auto* a = find_attr(node, "is_test"); a != nullptr && a->i() == 0) {
    c.fail(node, "is_test = 0 (training mode) has no opset-7 form; export the model in eval mode");
  }
  remove_attr(node, "is_test");
}

// Upsample-1's height_scale/width_scale (NCHW) become scales; its "bilinear" is Upsample-7's "linear".
void upsample_6_7(Conversion&, onnx::NodeProto& node) {
  const auto* h = find_attr(node, "height_scale");
  const auto* w = find_attr(node, "width_scale");
  if (h == nullptr && w == nullptr) return;
  const float hs = h != nullptr ? h->f() : 1.0f, ws = w != nullptr ? w->f() : 1.0f;
  auto& scales = set_attr(node, "scales", onnx::AttributeProto::FLOATS);
  for (const float s : {1.0f, 1.0f, hs, ws}) scales.add_floats(s);
  remove_attr(node, "height_scale");
  remove_attr(node, "width_scale");
  if (auto* mode = find_attr(node, "mode"); mode != nullptr && mode->s() == "bilinear") mode->set_s("linear");
}

void step_6_7(Conversion& c, onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (kBroadcastOps.count(type)) {
    broadcast_6_7(c, node);
  } else if (type == "Gemm") {
    remove_attr(node, "broadcast");  // C broadcasts unidirectionally from 7 on; a full C is still valid
  } else if (type == "PRelu") {
    prelu_6_7(c, node);
  } else if (type == "BatchNormalization" || type == "Dropout") {
    remove_is_test(c, node);
  } else if (type == "Upsample") {
    upsample_6_7(c, node);
  }
}

// The steps, by the opset they convert from (versions that changed nothing we run have none).
struct Step {
  std::int64_t from;
  void (*rule)(Conversion&, onnx::NodeProto&);
};
constexpr Step kSteps[] = {{1, step_1_2}, {3, step_3_4}, {4, step_4_5}, {5, step_5_6}, {6, step_6_7}};
static_assert(kSteps[std::size(kSteps) - 1].from + 1 == kOldestNativeOpset);

}  // namespace

void bring_forward(onnx::ModelProto& model, std::int64_t opset, const std::string& path) {
  Conversion conversion(model, opset, path);
  for (const Step& step : kSteps) {
    if (step.from >= opset) conversion.apply(step.from, step.rule);
  }
  bool declared = false;
  for (auto& op : *model.mutable_opset_import()) {
    if (!is_default_domain(op.domain())) continue;
    op.set_version(kOldestNativeOpset);
    declared = true;
  }
  if (!declared) model.add_opset_import()->set_version(kOldestNativeOpset);  // opset 1 by omission
}

}  // namespace npuscope::emulator::onnx_import
