// The vector-op adapters of profile_adapters.h: CANN passes as tensors what the emulator's ops take
// as attributes (a perm, a shape, reduced axes, k), and a few ops differ in their operands.
#include <algorithm>
#include <functional>
#include <utility>

#include "profile_adapters.h"

namespace npuscope::calibration::profile {
namespace {

using emulator::Shape;
using emulator::shape_str;
using emulator::TensorMeta;

std::string first_input(const KernelTensors& k, std::size_t outputs, TensorMeta& x) {
  if (auto e = need(k, 1, outputs); !e.empty()) return e;
  return as_input(k.inputs[0], x);
}

// Axes whose removal from `in` leaves `out` (keepdims 0), the first such set in order.
bool removed_axes(const Shape& in, const Shape& out, std::size_t i, std::size_t j, std::vector<std::int64_t>& axes) {
  if (j == out.size()) {
    for (std::size_t r = i; r < in.size(); ++r) axes.push_back(static_cast<std::int64_t>(r));
    return true;
  }
  if (i == in.size() || in.size() - i < out.size() - j) return false;
  if (in[i] == out[j] && removed_axes(in, out, i + 1, j + 1, axes)) return true;
  axes.push_back(static_cast<std::int64_t>(i));
  if (removed_axes(in, out, i + 1, j, axes)) return true;
  axes.pop_back();
  return false;
}

}  // namespace

std::string generic(const KernelTensors& k, Adapted& a) {
  for (const KernelTensor& t : k.inputs) {
    TensorMeta m;
    if (auto e = as_input(t, m); !e.empty()) return e;
    a.inputs.push_back(std::move(m));
  }
  for (const KernelTensor& t : k.outputs) {
    const auto shape = logical_shape(t);
    if (!shape) return t.format + " output " + shape_str(t.shape) + " is not 5-D";
    a.outputs.push_back(*shape);
  }
  return {};
}

std::string tensor_move(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  std::vector<std::int64_t> stride(x.shape.size(), 1);
  for (std::size_t d = x.shape.size(); d > 1; --d) stride[d - 2] = stride[d - 1] * x.shape[d - 1];
  a.inputs = {meta({x.numel()}, x.dtype), x};
  a.attrs.set("size", std::vector<std::int64_t>(x.shape)).set("stride", stride).set("storage_offset", std::int64_t{0});
  a.outputs = {{x.numel()}};
  return {};
}

std::string transpose(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  const Shape& y = k.outputs[0].shape;
  if (y.size() != x.shape.size())
    return "input " + shape_str(x.shape) + " and output " + shape_str(y) + " differ in rank";
  std::vector<std::int64_t> perm;
  std::vector<bool> used(x.shape.size(), false);
  for (std::int64_t d : y) {  // the first unused input axis of that size (equal sizes move the same bytes)
    std::size_t i = 0;
    while (i < x.shape.size() && (used[i] || x.shape[i] != d)) ++i;
    if (i == x.shape.size()) return "output " + shape_str(y) + " is no permutation of " + shape_str(x.shape);
    used[i] = true;
    perm.push_back(static_cast<std::int64_t>(i));
  }
  a.inputs = {x};
  a.attrs.set("perm", perm);
  a.outputs = {y};
  return {};
}

std::string broadcast_to(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  a.inputs = {x};
  a.attrs.set("shape", std::vector<std::int64_t>(k.outputs[0].shape));
  a.outputs = {k.outputs[0].shape};
  return {};
}

std::string fill(const KernelTensors& k, Adapted& a) {
  if (auto e = need(k, 0, 1); !e.empty()) return e;
  const KernelTensor& y = k.outputs[0];
  if (!y.dtype) return "dtype " + y.dtype_name + " not modelled";
  a.inputs = {meta(y.shape, *y.dtype)};
  a.attrs.set("value", 1.0);
  a.outputs = {y.shape};
  return {};
}

std::string cast(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  if (!k.outputs[0].dtype) return "dtype " + k.outputs[0].dtype_name + " not modelled";
  a.inputs = {x};
  a.attrs.set("to", static_cast<std::int64_t>(*k.outputs[0].dtype));
  a.outputs = {k.outputs[0].shape};
  return {};
}

std::string scalar_binary(const KernelTensors& k, Adapted& a) {
  if (auto e = generic(k, a); !e.empty()) return e;
  if (a.inputs.size() == 2 && !a.inputs[0].shape.empty() && a.inputs[1].shape.empty()) {
    if (a.op == "Mul" || a.op == "Add") {  // aclnnMuls / aclnnAdds
      a.op += 's';
      a.inputs.pop_back();
      a.attrs.set("value", 1.0);
    }
  }
  return {};
}

std::string dropout_do_mask(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  a.inputs = {x, meta(x.shape, DType::kBool)};  // CANN's mask is bits; the emulator's one bool per element
  a.outputs = {k.outputs[0].shape};
  return {};
}

std::string nll_loss(const KernelTensors& k, Adapted& a) {
  if (auto e = generic(k, a); !e.empty()) return e;
  const bool per_sample = !a.outputs.empty() && !a.outputs[0].empty();
  a.attrs.set("reduction", std::int64_t{per_sample ? 0 : 1});
  for (std::size_t i = 1; i < a.inputs.size() && i < 2; ++i) a.inputs[i].dtype = DType::kI64;  // target
  a.outputs.resize(std::min<std::size_t>(a.outputs.size(), 1));
  return {};
}

// CANN (x, dloss, target, weight, total_weight) -> the emulator's (dloss, x, target, weight, total_weight).
std::string nll_loss_grad(const KernelTensors& k, Adapted& a) {
  if (auto e = generic(k, a); !e.empty()) return e;
  if (a.inputs.size() < 5) return "expected 5 inputs (x, dloss, target, weight, total_weight)";
  std::swap(a.inputs[0], a.inputs[1]);
  a.inputs[2].dtype = DType::kI64;
  a.attrs.set("reduction", std::int64_t{a.inputs[0].shape.empty() ? 1 : 0});
  return {};
}

std::string top_k(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  const Shape& y = k.outputs[0].shape;
  if (y.empty()) return "output is a scalar";
  a.inputs = {x};
  a.attrs.set("k", y.back()).set("axis", std::int64_t{-1});
  for (const KernelTensor& t : k.outputs) a.outputs.push_back(t.shape);
  return {};
}

std::string reduce(const KernelTensors& k, Adapted& a) {
  TensorMeta x;
  if (auto e = first_input(k, 1, x); !e.empty()) return e;
  const Shape& y = k.outputs[0].shape;
  std::vector<std::int64_t> axes;
  const bool keep = y.size() == x.shape.size();
  if (keep) {
    for (std::size_t d = 0; d < y.size(); ++d) {
      if (y[d] != x.shape[d]) axes.push_back(static_cast<std::int64_t>(d));
    }
  } else if (!removed_axes(x.shape, y, 0, 0, axes)) {
    return "output " + shape_str(y) + " is no reduction of " + shape_str(x.shape);
  }
  if (axes.empty()) axes.push_back(0);  // [1] -> [1]: nothing to tell apart
  a.inputs = {x};
  a.attrs.set("axes", axes).set("keepdims", std::int64_t{keep});
  a.outputs = {y};
  return {};
}

std::string foreach (const KernelTensors& k, Adapted & a) {
  if (auto e = generic(k, a); !e.empty()) return e;
  // CANN records the scalar operand (ForeachAddList's alpha, ForeachMulScalar's scalar) after the
  // lists, as a tensor of one element; the emulator's ops take it as an attribute.
  const bool add_list = a.op == "ForeachAddList";
  if (a.inputs.size() > 1 && (add_list ? a.inputs.size() % 2 == 1 : a.inputs.back().numel() <= 1)) a.inputs.pop_back();
  a.numel_only = true;
  return {};
}

}  // namespace npuscope::calibration::profile
