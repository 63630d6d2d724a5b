// Loading an ONNX model and running its graph node by node. See onnx_model.h.
#include "npuscope/emulator/onnx_model.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "host_nodes.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/runtime.h"
#include "onnx_adapter.h"
#include "version_converter.h"

namespace npuscope::emulator {

using onnx_import::NodeContext;

struct OnnxModel::Impl {
  std::string path;
  onnx::ModelProto proto;
  std::int64_t opset = 0, declared_opset = 0;
  std::vector<OnnxValueInfo> inputs, outputs;
  std::vector<std::string> node_names;                // instance names, one per node
  std::unordered_map<std::string, Tensor> constants;  // initializers, on the cpu
  // Initializers uploaded to a device once, on its first run there (weights stay resident).
  mutable std::mutex device_constants_mutex;
  // Keyed by the device object, so a reconfigured runtime (new devices) gets fresh uploads.
  mutable std::map<const Device*, std::unordered_map<std::string, Tensor>> device_constants;

  const std::unordered_map<std::string, Tensor>& constants_on(DeviceRef device) const;
};

const std::unordered_map<std::string, Tensor>& OnnxModel::Impl::constants_on(DeviceRef device) const {
  if (!device.is_npu()) return constants;
  std::lock_guard lock(device_constants_mutex);
  auto& cached = device_constants[&Runtime::get().device(device.index)];
  if (cached.empty()) {
    for (const auto& [name, t] : constants) cached.emplace(name, t.to(device));
  }
  return cached;
}

namespace {

// Opsets 7-18 run as they are; older models are brought forward to opset 7 first (Note [Bringing old
// opsets forward]).
constexpr std::int64_t kMinOpset = 1, kMaxOpset = 18;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

OnnxValueInfo value_info(const onnx::ValueInfoProto& v, const std::string& path) {
  OnnxValueInfo info;
  info.name = v.name();
  if (!v.type().has_tensor_type()) {
    throw ModelError(path + ": graph value '" + v.name() +
                     "' is not a tensor (sequences, maps and optionals are not supported)");
  }
  const auto& tt = v.type().tensor_type();
  info.dtype = dtype_from_onnx(tt.elem_type(), path + ": graph value '" + v.name() + "'");
  if (tt.has_shape()) {
    info.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return info;
}

// Emulator ops with no ONNX op of that name (ONNX reaches them through adapters).
const std::set<std::string> kEmulatorOnlyOps = {"AvgPool",   "BatchMatMul", "BatchNorm",
                                                "Conv2d",    "FastGelu",    "GlobalAvgPool",
                                                "LayerNorm", "RMSNorm",     "RotaryEmbedding"};

// Every op type that can run: adapters plus emulator ops of the same name.
bool op_supported(const std::string& type) {
  if (onnx_import::find_adapter(type) != nullptr) return true;
  return !kEmulatorOnlyOps.count(type) && OpRegistry::instance().find_schema(type) != nullptr;
}

Attrs convert_attributes(const onnx::NodeProto& node) {
  Attrs attrs;
  for (const auto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.set(a.name(), static_cast<std::int64_t>(a.i())); break;
      case onnx::AttributeProto::FLOAT: attrs.set(a.name(), static_cast<double>(a.f())); break;
      case onnx::AttributeProto::STRING: attrs.set(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS:
        attrs.set(a.name(), std::vector<std::int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case onnx::AttributeProto::FLOATS:
        attrs.set(a.name(), std::vector<double>(a.floats().begin(), a.floats().end()));
        break;
      default: break;  // TENSOR, GRAPH...: read by the adapters that need them
    }
  }
  return attrs;
}

void check_input(const OnnxValueInfo& decl, const Tensor& given, std::map<std::string, std::int64_t>& bound,
                 const std::string& path) {
  const std::string what = path + ": input '" + decl.name + "'";
  if (given.dtype() != decl.dtype) {
    throw ModelError(what + " must be " + std::string(dtype_name(decl.dtype)) + ", got " +
                     std::string(dtype_name(given.dtype())));
  }
  if (!decl.has_shape) return;
  if (given.shape().size() != decl.shape.size()) {
    throw ModelError(what + " must have rank " + std::to_string(decl.shape.size()) + ", got shape " +
                     shape_str(given.shape()));
  }
  for (std::size_t i = 0; i < decl.shape.size(); ++i) {
    const std::int64_t have = given.shape()[i];
    if (decl.shape[i] >= 0 && decl.shape[i] != have) {
      throw ModelError(what + " dim " + std::to_string(i) + " must be " + std::to_string(decl.shape[i]) +
                       ", got shape " + shape_str(given.shape()));
    }
    const std::string& param = decl.dim_params[i];
    if (param.empty()) continue;
    auto [it, fresh] = bound.emplace(param, have);
    if (!fresh && it->second != have) {
      throw ModelError(what + " dim " + std::to_string(i) + " is '" + param + "' = " + std::to_string(have) +
                       ", but another input bound '" + param + "' to " + std::to_string(it->second));
    }
  }
}

}  // namespace

OnnxModel::OnnxModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnnxModel::~OnnxModel() = default;
OnnxModel::OnnxModel(OnnxModel&&) noexcept = default;
OnnxModel& OnnxModel::operator=(OnnxModel&&) noexcept = default;

OnnxModel OnnxModel::load(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open ONNX model '" + path + "': no such file or not readable");
  if (!impl->proto.ParseFromIstream(&in)) {
    throw ModelError("'" + path + "' is not a valid ONNX model (truncated or not an ONNX protobuf file)");
  }
  const auto& graph = impl->proto.graph();
  for (const auto& op : impl->proto.opset_import()) {
    if (is_default_domain(op.domain())) impl->opset = op.version();
  }
  if (impl->opset == 0 && impl->proto.opset_import_size() == 0) impl->opset = 1;
  // A model with no default-domain opset uses only other domains: the op check below reports them.
  const bool uses_default_domain = impl->opset != 0;
  if (uses_default_domain && (impl->opset < kMinOpset || impl->opset > kMaxOpset)) {
    throw ModelError(path + ": opset " + std::to_string(impl->opset) + " is not supported (supported: " +
                     std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  }
  if (graph.node_size() == 0 && graph.output_size() == 0) {
    throw ModelError("'" + path + "' has an empty graph (is it an ONNX model?)");
  }

  // Unsupported ops: all of them, before anything runs.
  std::set<std::string> unsupported;
  for (const auto& node : graph.node()) {
    const std::string type = is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
    if (!is_default_domain(node.domain()) || !op_supported(node.op_type())) unsupported.insert(type);
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const auto& t : unsupported) list += (list.empty() ? "" : ", ") + t;
    throw ModelError(path + ": unsupported op type" + (unsupported.size() > 1 ? "s" : "") + ": " + list +
                     " (see docs/onnx_ops.md for the supported ones)");
  }
  impl->declared_opset = impl->opset;
  if (uses_default_domain && impl->opset < onnx_import::kOldestNativeOpset) {
    onnx_import::bring_forward(impl->proto, impl->opset, path);
    impl->opset = onnx_import::kOldestNativeOpset;
  }

  for (const auto& init : graph.initializer()) {
    impl->constants.emplace(init.name(), onnx_import::tensor_from_proto(init, path));
  }
  for (const auto& v : graph.input()) {
    if (!impl->constants.count(v.name())) impl->inputs.push_back(value_info(v, path));
  }
  for (const auto& v : graph.output()) impl->outputs.push_back(value_info(v, path));

  std::set<std::string> used_names;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    // Built with append: g++ 12 misreports a -Wrestrict overlap on `a + "_" + b` here.
    std::string name = node.name();
    if (name.empty()) name.append(node.op_type()).append("_").append(std::to_string(i));
    if (!used_names.insert(name).second) name.append("_").append(std::to_string(i));  // keep names unique
    impl->node_names.push_back(std::move(name));
  }
  return OnnxModel(std::move(impl));
}

const std::string& OnnxModel::path() const { return impl_->path; }
std::int64_t OnnxModel::opset() const { return impl_->opset; }
std::int64_t OnnxModel::declared_opset() const { return impl_->declared_opset; }
const std::vector<OnnxValueInfo>& OnnxModel::inputs() const { return impl_->inputs; }
const std::vector<OnnxValueInfo>& OnnxModel::outputs() const { return impl_->outputs; }
std::size_t OnnxModel::node_count() const { return static_cast<std::size_t>(impl_->proto.graph().node_size()); }

namespace {
std::string input_shapes(const onnx_import::NodeContext& ctx) {
  std::string s;
  for (const auto& t : ctx.inputs) s += (s.empty() ? "" : ", ") + (t.defined() ? shape_str(t.shape()) : "-");
  return s;
}
}  // namespace

std::vector<Tensor> OnnxModel::run(const std::map<std::string, Tensor>& given, const OnnxRunOptions& options) const {
  const Impl& m = *impl_;
  const DeviceRef device = options.device;
  onnx_import::RunValues values(device, m.constants_on(device), m.constants);

  std::map<std::string, std::int64_t> bound;
  for (const auto& decl : m.inputs) {
    auto it = given.find(decl.name);
    if (it == given.end() || !it->second.defined()) {
      throw ModelError(m.path + ": input '" + decl.name + "' (" + std::string(dtype_name(decl.dtype)) + " " +
                       shape_str(decl.shape) + ") was not given");
    }
    check_input(decl, it->second, bound, m.path);
    values.set_input(decl.name, it->second.device() == device ? it->second : it->second.to(device));
  }
  for (const auto& entry : given) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    const bool known = std::any_of(m.inputs.begin(), m.inputs.end(), [&](const auto& d) { return d.name == name; });
    if (!known) {
      std::string names;
      for (const auto& d : m.inputs) names += (names.empty() ? "" : ", ") + d.name;
      throw ModelError(m.path + ": the model has no input '" + name + "' (its inputs: " + names + ")");
    }
  }

  const auto& graph = m.proto.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    NodeContext ctx;
    ctx.node = &node;
    ctx.name = m.node_names[static_cast<std::size_t>(i)];
    ctx.op_type = node.op_type();
    ctx.opset = m.opset;
    ctx.model_path = m.path;
    ctx.attrs = convert_attributes(node);
    ctx.num_outputs = node.output_size();
    const bool on_host = values.bind(node, ctx);  // Note [Shape nodes on the host]

    std::vector<Tensor> outs;
    try {
      const onnx_import::AdapterFn adapter = onnx_import::find_adapter(ctx.op_type);
      outs = adapter != nullptr ? adapter(ctx) : onnx_import::run_default(ctx, ctx.op_type.c_str());
    } catch (const ModelError&) {
      throw;
    } catch (const EmulatorError& e) {
      ctx.fail(e.what());
    } catch (const std::bad_alloc&) {
      // Sizes are checked before allocating (Note [Sizes from user input]); this is a host that
      // cannot hold a tensor within the limit, or a kernel's working copy of one.
      ctx.fail("out of host memory running the node (inputs " + input_shapes(ctx) + ")");
    }
    for (int o = 0; o < node.output_size(); ++o) {
      if (node.output(o).empty()) continue;
      if (static_cast<std::size_t>(o) >= outs.size() || !outs[static_cast<std::size_t>(o)].defined()) {
        ctx.fail("output " + std::to_string(o) + " ('" + node.output(o) + "') is not supported");
      }
      values.set_output(node.output(o), outs[static_cast<std::size_t>(o)], on_host);
    }
  }

  std::vector<Tensor> results;
  for (const auto& out : m.outputs) {
    Tensor value = values.result(out.name);
    if (!value.defined()) throw ModelError(m.path + ": graph output '" + out.name + "' is never produced");
    results.push_back(std::move(value));
  }
  return results;
}

void OnnxModel::upload_weights(DeviceRef device) const { impl_->constants_on(device); }

std::vector<std::string> supported_onnx_ops() {
  std::set<std::string> ops;
  for (const auto& t : onnx_import::adapter_op_types()) ops.insert(t);
  for (const auto& t : OpRegistry::instance().op_types()) {
    if (op_supported(t)) ops.insert(t);
  }
  return {ops.begin(), ops.end()};
}

Tensor load_tensor_proto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("cannot open tensor file '" + path + "'");
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in)) throw ModelError("'" + path + "' is not a serialized ONNX TensorProto");
  return onnx_import::tensor_from_proto(proto, path);
}

}  // namespace npuscope::emulator
