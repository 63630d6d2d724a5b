// NodeContext helpers, the adapter registry and TensorProto conversion. See Note [ONNX adapters].
#include "onnx_adapter.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator {

DType dtype_from_onnx(int onnx_type, const std::string& context) {
  using TP = onnx::TensorProto;
  switch (onnx_type) {
    case TP::FLOAT: return DType::kF32;
    case TP::FLOAT16: return DType::kF16;
    case TP::BFLOAT16: return DType::kBF16;
    case TP::DOUBLE: return DType::kF64;
    case TP::INT8: return DType::kI8;
    case TP::UINT8: return DType::kU8;
    case TP::INT32: return DType::kI32;
    case TP::INT64: return DType::kI64;
    case TP::BOOL: return DType::kBool;
    default: break;
  }
  const std::string name = onnx::TensorProto_DataType_IsValid(onnx_type)
                               ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(onnx_type))
                               : std::to_string(onnx_type);
  throw ModelError(context + ": data type " + name +
                   " is not supported by the emulator (it has float, float16, bfloat16, double, int8, uint8, int32, "
                   "int64 and bool)");
}

int onnx_from_dtype(DType dtype) {
  using TP = onnx::TensorProto;
  switch (dtype) {
    case DType::kF32: return TP::FLOAT;
    case DType::kF16: return TP::FLOAT16;
    case DType::kBF16: return TP::BFLOAT16;
    case DType::kF64: return TP::DOUBLE;
    case DType::kI8: return TP::INT8;
    case DType::kU8: return TP::UINT8;
    case DType::kI32: return TP::INT32;
    case DType::kI64: return TP::INT64;
    case DType::kBool: return TP::BOOL;
  }
  return TP::UNDEFINED;
}

namespace onnx_import {
namespace {

struct AdapterEntry {
  AdapterFn fn;
  const char* file;
  int line;
};

std::map<std::string, AdapterEntry>& adapters() {
  static std::map<std::string, AdapterEntry> table;
  return table;
}

// Typed repeated fields -> bytes of `dtype`.
template <class Field, class Out>
void copy_field(const Field& field, std::byte* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const Out v = static_cast<Out>(field.Get(static_cast<int>(i)));
    std::memcpy(dst + i * static_cast<std::int64_t>(sizeof(Out)), &v, sizeof(Out));
  }
}

}  // namespace

const Tensor& NodeContext::input(std::size_t i) const {
  static const Tensor kUndefined;
  if (i >= inputs.size()) return kUndefined;
  Tensor& t = inputs[i];
  if (t.defined() && device.is_npu() && !t.device().is_npu()) t = upload(i);  // a host value
  return t;
}

const std::vector<Tensor>& NodeContext::device_inputs() const {
  for (std::size_t i = 0; i < inputs.size(); ++i) input(i);
  return inputs;
}

// The host copy of input i when there is one: reading it needs no copy back from the device.
const Tensor& NodeContext::readable_input(std::size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  return i < host_inputs.size() && host_inputs[i].defined() ? host_inputs[i] : inputs[i];
}

std::vector<std::int64_t> NodeContext::input_ints(std::size_t i) const { return readable_input(i).to_ints(); }

std::vector<double> NodeContext::input_floats(std::size_t i) const { return readable_input(i).to_doubles(); }

const onnx::TensorProto* NodeContext::tensor_attr(const char* attr_name) const {
  for (const auto& a : node->attribute()) {
    if (a.name() == attr_name && a.type() == onnx::AttributeProto::TENSOR) return &a.t();
  }
  return nullptr;
}

void NodeContext::fail(const std::string& what) const {
  throw ModelError(model_path + ": node '" + name + "' (" + op_type + "): " + what);
}

AdapterFn find_adapter(const std::string& op_type) {
  auto it = adapters().find(op_type);
  return it == adapters().end() ? nullptr : it->second.fn;
}

std::vector<std::string> adapter_op_types() {
  std::vector<std::string> out;
  for (const auto& [type, entry] : adapters()) out.push_back(type);
  return out;
}

bool register_adapter(const char* op_type, AdapterFn fn, const char* file, int line) {
  auto [it, inserted] = adapters().emplace(op_type, AdapterEntry{fn, file, line});
  if (!inserted) {
    std::fprintf(stderr, "npuscope: internal error: ONNX adapter for '%s' registered twice: at %s:%d and %s:%d\n",
                 op_type, it->second.file, it->second.line, file, line);
    std::abort();
  }
  return true;
}

std::vector<Tensor> run_default(NodeContext& ctx, const char* type) {
  return call_op(type, ctx.device_inputs(), ctx.attrs, ctx.call());
}

int onnx_type_attr(const NodeContext& ctx, const char* name, std::int64_t fallback) {
  const std::int64_t v = ctx.attrs.get_int(name, fallback);
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    ctx.fail(std::string("'") + name + "' = " + std::to_string(v) + " is not an ONNX data type");
  }
  return static_cast<int>(v);
}

Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& context) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    throw ModelError(context + ": tensor '" + p.name() +
                     "' keeps its data in an external file, which is not supported");
  }
  const DType dtype = dtype_from_onnx(p.data_type(), context + ": tensor '" + p.name() + "'");
  Shape shape(p.dims().begin(), p.dims().end());
  // The dims are checked and matched against the data present before anything is allocated: a
  // tensor declaring 2^40 elements with ten values is an error, not a 4 TiB allocation.
  try {
    check_tensor_shape(shape, dtype, "");
  } catch (const InvalidArgument& e) {
    throw ModelError(context + ": tensor '" + p.name() + "': " + e.what());
  }
  const std::int64_t n = shape_numel(shape);
  const std::uint64_t nbytes = static_cast<std::uint64_t>(n) * dtype_size(dtype);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != nbytes) {
      throw ModelError(context + ": tensor '" + p.name() + "' has " + std::to_string(p.raw_data().size()) +
                       " bytes of data, expected " + std::to_string(nbytes) + " for shape " + shape_str(shape));
    }
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.raw_data(), p.raw_data().data(), nbytes);
    return t;
  }
  const std::int64_t have = dtype == DType::kF32   ? p.float_data_size()
                            : dtype == DType::kF64 ? p.double_data_size()
                            : dtype == DType::kI64 ? p.int64_data_size()
                                                   : p.int32_data_size();  // f16/bf16 bits, small ints
  if (have != n) {
    throw ModelError(context + ": tensor '" + p.name() + "' has " + std::to_string(have) + " values, expected " +
                     std::to_string(n) + " for shape " + shape_str(shape));
  }
  Tensor t = Tensor::empty(shape, dtype);
  std::byte* dst = t.raw_data();
  switch (dtype) {
    case DType::kF32: copy_field<decltype(p.float_data()), float>(p.float_data(), dst, n); break;
    case DType::kF64: copy_field<decltype(p.double_data()), double>(p.double_data(), dst, n); break;
    case DType::kI64: copy_field<decltype(p.int64_data()), std::int64_t>(p.int64_data(), dst, n); break;
    // f16/bf16 bit patterns, and the small integer types, live in int32_data.
    case DType::kF16:
    case DType::kBF16: copy_field<decltype(p.int32_data()), std::uint16_t>(p.int32_data(), dst, n); break;
    case DType::kI32: copy_field<decltype(p.int32_data()), std::int32_t>(p.int32_data(), dst, n); break;
    case DType::kI8: copy_field<decltype(p.int32_data()), std::int8_t>(p.int32_data(), dst, n); break;
    case DType::kU8:
    case DType::kBool: copy_field<decltype(p.int32_data()), std::uint8_t>(p.int32_data(), dst, n); break;
  }
  return t;
}

}  // namespace onnx_import
}  // namespace npuscope::emulator
