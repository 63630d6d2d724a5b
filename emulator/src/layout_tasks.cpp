// See layout_tasks.h (Note [TransData tasks]).
#include "layout_tasks.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "launch_names.h"
#include "npuscope/emulator/formats.h"
#include "npuscope/emulator/l2_residency.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::emulator {
namespace {

// A tensor's key in the L2 (Note [L2 residency]): where its data starts on the device.
std::uint64_t l2_key(const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.raw_data()); }

// The bytes of `m`'s data laid out in `format`.
std::uint64_t storage_bytes(const TensorMeta& m, Format format, int c0) {
  return static_cast<std::uint64_t>(shape_numel(storage_shape(format, m.shape, m.dtype, c0))) * dtype_size(m.dtype);
}

// The name of a conversion: the plan's, or "trans_TransData_<n>" as aclop numbers them (built once).
const char* transdata_name(const FormatPlan& plan, const FormatSlot& slot) {
  if (plan.transdata_name != nullptr) return plan.transdata_name;
  static const std::array<const char*, 256> kNames = [] {
    std::array<const char*, 256> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = intern("trans_TransData_" + std::to_string(i));
    return names;
  }();
  return kNames[slot.number];
}

}  // namespace

double l2_hot_bytes(Device& dev, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
  SharedL2Residency* l2 = dev.l2();
  if (l2 == nullptr) return 0;
  return l2->with([&](L2Residency& cache) {
    double hot = 0;
    for (const Tensor& t : inputs) {
      if (t.defined() && cache.resident(l2_key(t), t.nbytes())) hot += static_cast<double>(t.nbytes());
    }
    for (const std::vector<Tensor>* side : {&inputs, &outputs}) {
      for (const Tensor& t : *side) {
        if (t.defined() && t.nbytes() > 0) cache.touch(l2_key(t), t.nbytes());
      }
    }
    return hot;
  });
}

void noop_kernel(KernelContext&) {}

void LayoutTasks::launch(std::string_view name, const char* op_type, KernelCost cost, DType dtype, const TensorMeta* in,
                         const TensorMeta* out) {
  InstanceName& instance = instance_name(name, CallOptions{});
  KernelLaunch l;
  l.name = instance.name;
  l.op_type = op_type;
  l.call_index = instance.calls.fetch_add(1, std::memory_order_relaxed);
  l.cost = cost;
  l.fn = noop_kernel;
  l.compute_dtype = dtype;
  l.task_type = TaskType::kAiVectorCore;
  l.golden = dev.golden();
  l.backend = l.golden ? Backend::kCpu : Backend::kNpu;
  l.overflow_mode = dev.overflow_mode();
  if (listener) [[unlikely]] {
    if (in != nullptr) l.input_signature = signature({in, 1});
    if (out != nullptr) l.output_signature = signature({out, 1});
  }
  dev.launch(std::move(l), stream, connection);
}

void LayoutTasks::trans_data(std::string_view name, TensorMeta& m, const Tensor& t, Format to, int c0) {
  static const char* const kType = intern("TransData");
  const Format from = is_private(m.format) ? m.format : base_format(m.shape.size());
  const Format dst = is_private(to) ? to : base_format(m.shape.size());
  const int cost_c0 = is_private(to) ? c0 : m.c0;
  TensorMeta out{m.shape, m.dtype, true, to, static_cast<std::uint8_t>(is_private(to) ? c0 : 0)};
  KernelCost cost = trans_data_cost(m.shape, m.dtype, from, dst, cost_c0, dev.spec());
  // The copy in `to` stands under the tensor's own key: the op after it reads it hot.
  if (SharedL2Residency* l2 = dev.l2(); l2 != nullptr) {
    const std::uint64_t key = l2_key(t), read = storage_bytes(m, from, cost_c0);
    const bool hot = l2->with([&](L2Residency& cache) {
      const bool resident = cache.resident(key, read);
      cache.touch(key, read);
      cache.touch(key, storage_bytes(m, dst, cost_c0));
      return resident;
    });
    if (hot) cost.hot_bytes = cost.bytes - cost.bytes_written;
  }
  launch(name, kType, cost, m.dtype, &m, &out);
  m.format = out.format;
  m.c0 = out.c0;
}

void LayoutTasks::to_base(TensorMeta& m, const Tensor& t) {
  trans_data("trans_TransData_base", m, t, Format::kND, 0);
  t.set_format(Format::kND);
}

void read_format_tags(const std::vector<Tensor>& inputs, std::vector<TensorMeta>& in_meta,
                      const std::vector<Tensor>& outputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!in_meta[i].present) continue;
    in_meta[i].format = inputs[i].format();
    if (is_private(in_meta[i].format)) in_meta[i].c0 = static_cast<std::uint8_t>(inputs[i].format_c0());
  }
  for (const Tensor& t : outputs) t.set_format(Format::kND);
}

bool plan_fits(const FormatPlan& plan, std::span<const TensorMeta> in) {
  for (std::size_t i = 0; i < in.size() && i < kMaxPlannedInputs; ++i) {
    if (is_private(plan.inputs[i].format) && (!in[i].present || in[i].shape.size() != 4)) return false;
  }
  return true;
}

void inputs_to_base(LayoutTasks& tasks, std::vector<Tensor>& inputs, std::vector<TensorMeta>& in_meta,
                    std::size_t from) {
  for (std::size_t i = from; i < in_meta.size(); ++i) {
    if (in_meta[i].present && is_private(in_meta[i].format)) tasks.to_base(in_meta[i], inputs[i]);
  }
}

void convert_inputs(LayoutTasks& tasks, const FormatPlan& plan, const char* op_name, std::vector<Tensor>& inputs,
                    std::vector<TensorMeta>& in_meta, const std::vector<Tensor>& outputs) {
  const bool keep = allow_internal_format() && !plan.inside_api;
  std::array<std::size_t, kMaxPlannedInputs> order{};
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return plan.inputs[a].number < plan.inputs[b].number; });
  for (const std::size_t i : order) {
    if (i >= in_meta.size() || !in_meta[i].present) continue;
    const FormatSlot& slot = plan.inputs[i];
    TensorMeta& m = in_meta[i];
    if (!is_private(slot.format)) {
      if (is_private(m.format)) tasks.to_base(m, inputs[i]);
      continue;
    }
    if (!slot.convert) {  // in the op's own layout already (the pool's mask)
      m.format = slot.format;
      m.c0 = slot.c0;
      continue;
    }
    if (!keep && is_private(m.format)) tasks.to_base(m, inputs[i]);
    if (m.format == slot.format && m.c0 == slot.c0) continue;  // kept from an earlier op
    tasks.trans_data(transdata_name(plan, slot), m, inputs[i], slot.format, slot.c0);
    if (keep) inputs[i].set_format(slot.format, slot.c0);
  }
  inputs_to_base(tasks, inputs, in_meta, kMaxPlannedInputs);
  if (plan.memset_output && !outputs.empty()) {
    static const char* const kType = intern("MemSet");
    const FormatSlot& slot = plan.outputs[0];
    const Tensor& out = outputs[0];
    const Shape storage = storage_shape(slot.format, out.shape(), out.dtype(), slot.c0);
    tasks.launch(std::string(op_name) + "_MemSet", kType,
                 memset_cost(static_cast<double>(shape_numel(storage) * dtype_size(out.dtype()))), out.dtype(), nullptr,
                 nullptr);
  }
}

const char* planned_output_signature(const FormatPlan& plan, const std::vector<Tensor>& outputs) {
  thread_local std::vector<TensorMeta> metas;
  fill_metas(outputs, metas);
  for (std::size_t j = 0; j < metas.size() && j < kMaxPlannedOutputs; ++j) {
    if (!is_private(plan.outputs[j].format)) continue;
    metas[j].format = plan.outputs[j].format;
    metas[j].c0 = plan.outputs[j].c0;
  }
  return signature(metas);
}

void convert_outputs(LayoutTasks& tasks, const FormatPlan& plan, std::vector<Tensor>& outputs) {
  const bool keep = allow_internal_format() && !plan.inside_api;
  for (std::size_t j = 0; j < outputs.size() && j < kMaxPlannedOutputs; ++j) {
    const FormatSlot& slot = plan.outputs[j];
    if (!is_private(slot.format) || !slot.convert) continue;
    if (keep) {
      outputs[j].set_format(slot.format, slot.c0);
      continue;
    }
    TensorMeta m{outputs[j].shape(), outputs[j].dtype(), true, slot.format, slot.c0};
    tasks.trans_data(transdata_name(plan, slot), m, outputs[j], Format::kND, 0);
  }
}

}  // namespace npuscope::emulator
