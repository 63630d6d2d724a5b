// See profile_points.h (Note [Kernels as data points]).
#include "npuscope/calibration/profile_points.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>

#include "npuscope/calibration/errors.h"
#include "npuscope/calibration/model.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/l2_residency.h"
#include "npuscope/runtime_hooks/cann_op_types.h"
#include "profile_adapters.h"

namespace npuscope::calibration {
namespace {

using emulator::Shape;
using emulator::shape_str;
using profile::Adapted;
using profile::KernelTensor;
using profile::KernelTensors;

// The rows of the CANN op-type table whose kernels need their own adapter; the others take the
// generic one (inputs as recorded).
struct AdapterRow {
  std::string_view cann;
  profile::Adapter adapt;
};
constexpr AdapterRow kAdapters[] = {
    {"Conv2D", profile::conv2d},
    {"Conv2DBackpropInput", profile::conv2d_backprop_input},
    {"Conv2DBackpropFilter", profile::conv2d_backprop_filter},
    {"MatMul", profile::matmul},
    {"MatMulV2", profile::matmul},
    {"MatMulV3", profile::matmul},
    {"BatchMatMul", profile::matmul},
    {"BatchMatMulV2", profile::matmul},
    {"BatchMatMulV3", profile::matmul},
    {"TransData", profile::trans_data},
    {"TensorMove", profile::tensor_move},
    {"Transpose", profile::transpose},
    {"BroadcastTo", profile::broadcast_to},
    {"Expand", profile::broadcast_to},
    {"Fill", profile::fill},
    {"OnesLike", profile::fill},
    {"ZerosLike", profile::fill},
    {"Cast", profile::cast},
    {"Mul", profile::scalar_binary},
    {"Add", profile::scalar_binary},
    {"DropOutDoMask", profile::dropout_do_mask},
    {"DropOutDoMaskV3", profile::dropout_do_mask},
    {"NLLLoss", profile::nll_loss},
    {"NLLLossGrad", profile::nll_loss_grad},
    {"TopKV2", profile::top_k},
    {"TopK", profile::top_k},
    {"ReduceSum", profile::reduce},
    {"ReduceMean", profile::reduce},
    {"ReduceMax", profile::reduce},
    {"ReduceMin", profile::reduce},
    {"ReduceProd", profile::reduce},
    {"MaxPoolWithArgmaxV1", profile::max_pool_argmax},
    {"MaxPoolGradWithArgmaxV1", profile::max_pool_grad_argmax},
    {"MaxPool3DWithArgmaxV2", profile::max_pool3d_argmax},
    {"MaxPool3DWithArgmax", profile::max_pool3d_argmax_6hd},
    {"MaxPool3DGradWithArgmax", profile::max_pool3d_grad_argmax},
    {"DeformableOffsets", profile::deformable_offsets},
    {"DeformableOffsetsGrad", profile::deformable_offsets_grad},
    {"RoiPoolingWithArgMax", profile::roi_pool},
    {"RoiPoolingGradWithArgMax", profile::roi_pool_grad},
    {"PSROIPoolingV2", profile::ps_roi_pool},
    {"PSROIPoolingGradV2D", profile::ps_roi_pool_grad},
    {"ROIAlign", profile::roi_align},
    {"ROIAlignGrad", profile::roi_align_grad},
    {"SmoothL1LossV2", profile::smooth_l1_loss},
    {"SmoothL1LossGradV2", profile::smooth_l1_loss_grad},
    {"NonMaxSuppressionV3", profile::non_max_suppression},
    {"NonMaxSuppressionV4", profile::non_max_suppression},
    {"AdaptiveAvgPool3d", profile::adaptive_avg_pool3d},
    {"AdaptiveAvgPool3dGrad", profile::adaptive_avg_pool3d_grad},
    {"ForeachAddList", profile::foreach},
    {"ForeachMulScalar", profile::foreach},
};

profile::Adapter adapter_of(std::string_view cann) {
  for (const AdapterRow& row : kAdapters) {
    if (row.cann == cann) return row.adapt;
  }
  return profile::generic;
}

// The entries of a ';'-ended list ("32,3;;" -> "32,3", ""). nullopt for "N/A" or no list.
std::optional<std::vector<std::string_view>> entries(std::string_view list) {
  if (list.empty() || list.rfind("N/A", 0) == 0) return std::nullopt;
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const std::size_t end = list.find(';');
    out.push_back(list.substr(0, end));
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return out;
}

// "32,3,224,224" -> dims; "" -> a scalar. nullopt for anything else.
std::optional<Shape> parse_shape(std::string_view text) {
  constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;  // Note [Sizes from user input]
  Shape shape;
  while (!text.empty()) {
    std::int64_t d = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || d < 0 || d > kMaxDim || shape.size() >= 16) return std::nullopt;
    shape.push_back(d);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (!text.empty() && text.front() != ',') return std::nullopt;
    if (!text.empty()) text.remove_prefix(1);
  }
  return shape;
}

// One side's tensors; "" when read, else why not. The dtype list says how many tensors there are
// (a list of scalars only is recorded as no shapes: "Mul" of two scalars writes "" for its output).
std::string read_tensors(const std::string& shapes, const std::string& dtypes, const std::string& formats,
                         std::vector<KernelTensor>& out) {
  const auto d = entries(dtypes);
  auto s = entries(shapes);
  if (!d || (!s && !shapes.empty())) return "shapes not recorded";
  if (!s) s = std::vector<std::string_view>(d->size());
  if (s->size() != d->size()) {
    return "shapes '" + shapes + "' and dtypes '" + dtypes + "' list different numbers of tensors";
  }
  const auto f = entries(formats);
  for (std::size_t i = 0; i < s->size(); ++i) {
    const auto shape = parse_shape((*s)[i]);
    if (!shape) return "shape '" + std::string((*s)[i]) + "' is not a list of sizes";
    std::uint64_t elements = 1;  // the non-zero dims, bounded as a tensor's bytes (Note [Sizes from user input])
    for (const std::int64_t dim : *shape) {
      const auto u = static_cast<std::uint64_t>(dim);
      constexpr std::uint64_t kOver = emulator::kMaxTensorBytes + 1;
      elements = u == 0 ? elements : elements > kOver / u ? kOver : elements * u;  // zeros skipped: C1*C0 of [0,..]
    }
    if (elements > emulator::kMaxTensorBytes) return "shape '" + std::string((*s)[i]) + "' is too large";
    KernelTensor t{.shape = *shape, .dtype = find_dtype((*d)[i]), .dtype_name = std::string((*d)[i])};
    if (f && i < f->size()) t.format = profile::normal_format((*f)[i]);
    out.push_back(std::move(t));
  }
  return {};
}

// "[32, 64] [32, 64]"
std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& shape : shapes) {
    if (!s.empty()) s += ' ';
    s += shape_str(shape);
  }
  return s;
}

// Whether infer()'s outputs are the adapter's (the first ones; an op may give more, as indices).
std::string check_outputs(const std::vector<emulator::TensorMeta>& got, const Adapted& a) {
  bool same = got.size() >= a.outputs.size();
  for (std::size_t i = 0; same && i < a.outputs.size(); ++i) {
    same = a.numel_only ? got[i].numel() == emulator::shape_numel(a.outputs[i]) : got[i].shape == a.outputs[i];
  }
  if (same) return {};
  std::vector<Shape> inferred;
  for (std::size_t i = 0; i < got.size() && i < a.outputs.size(); ++i) inferred.push_back(got[i].shape);
  return "inferred output " + shapes_text(inferred) + " differs from recorded " + shapes_text(a.outputs);
}

// The data point of one kernel, or why there is none.
std::string adapt(const ProfileKernel& kernel, const emulator::DeviceSpec& spec, DataPoint& point) {
  if (kernel.task_type == "AI_CPU") return "ran on the AI CPU (the cost model times NPU kernels)";
  const std::string_view op = emulator_op_of(kernel.op_type);
  if (op.empty()) return "no emulator op for CANN type " + kernel.op_type;
  KernelTensors k;
  if (auto e = read_tensors(kernel.input_shapes, kernel.input_dtypes, kernel.input_formats, k.inputs); !e.empty()) {
    return e;
  }
  if (auto e = read_tensors(kernel.output_shapes, kernel.output_dtypes, kernel.output_formats, k.outputs); !e.empty()) {
    return e;
  }
  if (emulator::OpRegistry::instance().find_schema(op) == nullptr)
    return "op " + std::string(op) + " not in this build";
  Adapted a{.op = std::string(op)};
  if (auto e = adapter_of(kernel.op_type)(k, a); !e.empty()) return e;
  const emulator::OpSchema* schema = emulator::OpRegistry::instance().find_schema(a.op);
  if (schema == nullptr) return "op " + a.op + " not in this build";
  point.op = a.op;
  point.inputs = std::move(a.inputs);
  point.attrs = std::move(a.attrs);
  try {
    emulator::check_input_count(*schema, point.inputs.size());
    if (auto e = check_outputs(schema->infer(point.inputs, point.attrs), a); !e.empty()) return e;
    modelled_us(spec, point);
  } catch (const emulator::EmulatorError& e) {
    return std::string("the emulator refuses it: ") + e.what();
  } catch (const CalibrationError& e) {
    return std::string("the cost model refuses it: ") + e.what();
  }
  return {};
}

// Note [L2 residency] over a profile: kernels record no addresses, so a tensor is known by its
// shape, dtype and format as recorded, and a kernel's input is hot when a kernel shortly before it
// on the same device (in start order) read or wrote a tensor of that description. Two tensors of
// one description are one (a second weight of a layer's shape reads hot): what an address-less
// trace allows. Returns each kernel's hot input bytes; a kernel whose lists cannot be read touches
// nothing.
std::vector<double> hot_input_bytes(const std::vector<ProfileKernel>& kernels, std::uint64_t l2_bytes) {
  std::vector<double> hot(kernels.size(), 0.0);
  if (l2_bytes == 0) return hot;
  std::vector<std::size_t> order(kernels.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(kernels[a].device_id, kernels[a].start_ns) < std::tie(kernels[b].device_id, kernels[b].start_ns);
  });
  std::map<int, emulator::L2Residency> l2;  // per device
  struct Access {
    std::uint64_t key, bytes;
  };
  std::vector<Access> reads, writes;
  const auto accesses = [](const std::string& shapes, const std::string& dtypes, const std::string& formats,
                           std::vector<Access>& out) {
    out.clear();
    std::vector<KernelTensor> tensors;
    if (!read_tensors(shapes, dtypes, formats, tensors).empty()) return;
    for (const KernelTensor& t : tensors) {
      const auto bytes = static_cast<std::uint64_t>(emulator::shape_numel(t.shape)) *
                         (t.dtype ? emulator::dtype_size(*t.dtype) : std::size_t{4});
      if (bytes == 0) continue;
      const std::string key = shape_str(t.shape) + '|' + t.dtype_name + '|' + t.format;
      out.push_back({std::hash<std::string>{}(key), bytes});
    }
  };
  for (const std::size_t i : order) {
    const ProfileKernel& k = kernels[i];
    emulator::L2Residency& cache = l2.try_emplace(k.device_id, l2_bytes).first->second;
    accesses(k.input_shapes, k.input_dtypes, k.input_formats, reads);
    accesses(k.output_shapes, k.output_dtypes, k.output_formats, writes);
    for (const Access& a : reads) {
      if (cache.resident(a.key, a.bytes)) hot[i] += static_cast<double>(a.bytes);
    }
    for (const Access& a : reads) cache.touch(a.key, a.bytes);
    for (const Access& a : writes) cache.touch(a.key, a.bytes);
  }
  return hot;
}

}  // namespace

ProfileMapping map_profile(const std::vector<ProfileKernel>& kernels, const emulator::DeviceSpec& spec) {
  ProfileMapping m;
  std::map<std::string, int> seen;  // kernels of each CANN type so far
  const std::vector<double> hot = hot_input_bytes(kernels, spec.l2_bandwidth > 0 ? spec.l2_bytes : 0);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const ProfileKernel& kernel = kernels[i];
    DataPoint p;
    p.id = kernel.op_type + "#" + std::to_string(++seen[kernel.op_type]);
    p.preset = spec.name;
    p.block_dim = kernel.block_dim;
    p.method = Method::kDevice;
    p.measured_us = static_cast<double>(kernel.dur_ns) / 1e3;
    p.what = kernel.name;
    p.source = "profile kernel " + kernel.name;
    p.hot_input_bytes = hot[i];
    std::string why = kernel.dur_ns > 0 ? adapt(kernel, spec, p) : "no duration recorded";
    if (!why.empty()) {
      m.unmodelled.push_back({i, std::move(why)});
      continue;
    }
    m.points.push_back(std::move(p));
    m.kernels.push_back(i);
  }
  return m;
}

}  // namespace npuscope::calibration
