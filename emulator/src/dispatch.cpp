// See dispatch.h.
#include "npuscope/emulator/dispatch.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <string>

#include "api_scope.h"
#include "format_plans.h"
#include "launch_names.h"
#include "layout_tasks.h"
#include "name_scope.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/host_ops.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"
#include "task.h"

namespace npuscope::emulator {
namespace {

// Note [Per-op allocations]
// A small op's host time is mostly the dispatcher's own (Note [Virtual time] leaves it out of the
// modelled time, but not out of a run's wall time). An npu Add of 16 floats made 20.6 allocations
// (counted with an LD_PRELOAD malloc counter): the inputs' metas and their shapes, the outputs'
// metas, each output's tensor and storage, the task, the worker's tensor views, the retired tasks'
// list. The buffers that live for one call are now kept per thread and reused (the inputs' metas
// here, one per nesting depth since an op may call ops; the worker's views in device.cpp), and the
// output shapes move into their tensors: 14.7 remain (the caller's input list, the infer function's
// result, the outputs, their tensors, storages and device-memory map nodes, the task, its copy of the
// output list, the retired tasks' list). The worker also takes its lock twice per task instead of
// four times. Measured side by side (10 alternating runs of 102,400 ops, medians): 20.6 -> 14.7
// allocations, host-thread CPU 3.98 -> 3.68 us per op (8 of the 10 pairs faster). What is left is
// mostly the hand-over to the worker thread (futex wake-ups, the task's cache lines moving between
// cores and back to be freed), which is what a device queue costs.

// This thread's input-meta buffers, one per nesting depth of call_op. Reached through a plain pointer
// that the owner below clears when the thread's thread_locals are destroyed: an op called after that
// (from a static destructor at exit) then uses a buffer of its own instead of a destroyed one.
struct MetaBuffers {
  std::deque<std::vector<TensorMeta>> by_depth;  // a deque: outer depths' buffers stay put
  std::size_t depth = 0;
};
thread_local MetaBuffers* t_meta_buffers = nullptr;
thread_local bool t_meta_buffers_gone = false;
struct MetaBuffersOwner {
  ~MetaBuffersOwner() {
    delete t_meta_buffers;
    t_meta_buffers = nullptr;
    t_meta_buffers_gone = true;
  }
};
thread_local MetaBuffersOwner t_meta_buffers_owner;

class InputMetas {
 public:
  InputMetas() {
    if (t_meta_buffers == nullptr && !t_meta_buffers_gone) {
      (void)&t_meta_buffers_owner;  // constructs it, so that it frees the buffers at thread exit
      t_meta_buffers = new MetaBuffers();
    }
    buffers_ = t_meta_buffers;
    if (buffers_ == nullptr) return;
    depth_ = buffers_->depth++;
    if (buffers_->by_depth.size() <= depth_) buffers_->by_depth.emplace_back();
  }
  ~InputMetas() {
    if (buffers_ != nullptr) --buffers_->depth;
  }
  InputMetas(const InputMetas&) = delete;
  InputMetas& operator=(const InputMetas&) = delete;

  std::vector<TensorMeta>& of(const std::vector<Tensor>& tensors) {
    std::vector<TensorMeta>& buffer = buffers_ != nullptr ? buffers_->by_depth[depth_] : own_;
    fill_metas(tensors, buffer);
    return buffer;
  }

 private:
  MetaBuffers* buffers_ = nullptr;
  std::size_t depth_ = 0;
  std::vector<TensorMeta> own_;
};

// The storage dtype that decides the compute precision: the first floating input, else the first.
DType storage_dtype(std::span<const TensorMeta> in, std::span<const TensorMeta> out) {
  for (const auto& m : in) {
    if (m.present && is_floating(m.dtype)) return m.dtype;
  }
  if (!out.empty()) return out[0].dtype;
  return in.empty() ? DType::kF32 : in[0].dtype;
}

DeviceRef common_device(std::string_view op_type, const std::vector<Tensor>& inputs) {
  std::optional<DeviceRef> device;
  for (const auto& t : inputs) {
    if (!t.defined()) continue;
    if (!device) {
      device = t.device();
    } else if (!(*device == t.device())) {
      throw InvalidArgument(std::string(op_type) + ": inputs are on different devices (" + device->str() + " and " +
                            t.device().str() + "); move them to one device first");
    }
  }
  if (!device) throw InvalidArgument(std::string(op_type) + ": needs at least one defined input");
  return *device;
}

void emit_cpu_task(const hooks::SubscriberTable* s, const hooks::TaskRecord& base, hooks::TaskPhase phase) {
  if (s->on_task == nullptr) return;
  hooks::TaskRecord r = base;
  r.phase = phase;
  s->on_task(s->user, r);
}

// Runs a CPU golden kernel inline: the `cpu` device has no queue and no modelled time.
void run_on_cpu(const OpSchema& schema, const KernelEntry& kernel, const char* name, std::uint32_t call_index,
                std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const Attrs& attrs,
                std::uint64_t connection_id, const KernelCost& cost, const std::vector<TensorMeta>& in_meta) {
  std::vector<TensorView> in(inputs.size()), out(outputs.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (inputs[i].defined()) in[i] = {inputs[i].raw_data(), inputs[i].dtype(), &inputs[i].shape(), inputs[i].numel()};
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = {outputs[i].raw_data(), outputs[i].dtype(), &outputs[i].shape(), outputs[i].numel()};
  }
  KernelContext ctx{
      in, out, attrs, Backend::kCpu, outputs.empty() ? DType::kF32 : outputs[0].dtype(), OverflowMode::kInfNan};
  const auto* s = hooks::subscriber();
  hooks::TaskRecord rec{};
  if (s != nullptr) [[unlikely]] {
    rec.task_id = next_task_id();
    rec.connection_id = connection_id;
    rec.name = name;
    rec.op_type = schema.type;
    rec.queued_ns = rec.start_ns = vclock::host_now_ns();
    rec.flops = static_cast<std::uint64_t>(cost.flops);
    rec.bytes = static_cast<std::uint64_t>(cost.bytes);
    rec.device_id = -1;
    rec.block_dim = 1;
    rec.call_index = call_index;
    rec.launch_thread = vclock::thread_index();
    rec.task_type = TaskType::kHostCpu;
    rec.compute_dtype = static_cast<std::uint8_t>(ctx.compute_dtype);
    rec.input_signature = signature(in_meta);
    rec.output_signature = signature_of(outputs);
    rec.host_op_id = current_host_op();
    if (s->wants_task_queued) emit_cpu_task(s, rec, hooks::TaskPhase::kQueued);
    if (s->wants_task_begin) emit_cpu_task(s, rec, hooks::TaskPhase::kBegin);
  }
  kernel.fn(ctx);
  if (s != nullptr) [[unlikely]] {
    rec.end_ns = vclock::host_now_ns();
    rec.emulation_ns = rec.end_ns - rec.start_ns;
    rec.overflow = ctx.overflow ? 1 : 0;
    rec.underflow = static_cast<std::uint32_t>(std::min<std::int64_t>(ctx.underflow, UINT32_MAX));
    rec.subnormal = static_cast<std::uint32_t>(std::min<std::int64_t>(ctx.subnormal, UINT32_MAX));
    if (s->wants_tensors && s->on_tensor) {
      emit_tensor_records(s, rec.task_id, inputs, TensorRole::kInput);
      emit_tensor_records(s, rec.task_id, outputs, TensorRole::kOutput);
    }
    emit_cpu_task(s, rec, hooks::TaskPhase::kEnd);
  }
  if (!ctx.fault.empty()) [[unlikely]]
    throw InvalidArgument(ctx.fault);  // Note [Kernel faults]
}

// Note [In-place kernels]
// PyTorch's out= and in-place ops hand the dispatcher their outputs (CallOptions::outputs), and an
// in-place op's output is its input's memory. Every kernel therefore loads what it reads before it
// stores what it writes, element by element in the same order or through its own buffers: element-
// wise kernels tolerate an output that is an input; kernels with several passes keep their inputs
// in their f32/f64 working buffers before the first store.
void check_given_outputs(const char* op, std::span<const Tensor> given, const std::vector<TensorMeta>& meta,
                         DeviceRef device) {
  if (given.size() != meta.size()) {
    throw InvalidArgument(std::string(op) + ": " + std::to_string(given.size()) + " outputs given, the op has " +
                          std::to_string(meta.size()));
  }
  for (std::size_t i = 0; i < meta.size(); ++i) {
    const Tensor& t = given[i];
    if (!t.defined() || t.shape() != meta[i].shape || t.dtype() != meta[i].dtype || !(t.device() == device)) {
      throw InvalidArgument(
          std::string(op) + ": output " + std::to_string(i) + " must be a " + std::string(dtype_name(meta[i].dtype)) +
          " tensor of shape " + shape_str(meta[i].shape) + " on " + device.str() + ", got " +
          (t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) + " on " + t.device().str()
                       : std::string("an undefined tensor")));
    }
  }
}

// A golden run's launch (Note [Golden run] in runtime.h): the task the NPU would have run (name, call
// index, op type, task type, fallback flag, cost) computing what the cpu device computes.
void make_golden(KernelLaunch& launch, const OpSchema& schema, const std::vector<Tensor>& outputs) {
  const KernelEntry* cpu = OpRegistry::instance().kernel(schema.type, Backend::kCpu);
  if (cpu == nullptr) {
    throw OpRegistrationError(std::string(schema.type) +
                              " has no cpu kernel, so a golden run (NPUSCOPE_GOLDEN=1) cannot compute it");
  }
  launch.fn = cpu->fn;
  launch.backend = Backend::kCpu;
  launch.compute_dtype = outputs.empty() ? DType::kF32 : outputs[0].dtype();  // as run_on_cpu
  launch.overflow_mode = OverflowMode::kInfNan;
  launch.golden = true;
}

}  // namespace

void record_host_task(std::string_view op_type, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                      const std::vector<Tensor>& sources, const CallOptions& options) {
  if (sources.size() != outputs.size()) throw InvalidArgument(std::string(op_type) + ": one source per output");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].nbytes() != outputs[i].nbytes() || sources[i].device().is_npu()) {
      throw InvalidArgument(std::string(op_type) + ": source " + std::to_string(i) +
                            " must be a host tensor of the output's size");
    }
  }
  std::vector<Tensor> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  const DeviceRef device = common_device(op_type, all);
  if (!device.is_npu()) throw InvalidArgument(std::string(op_type) + ": a host task is recorded on an npu only");
  vclock::BlockedScope emulating;
  InstanceName& instance = instance_name(op_type, options);
  const char* type = intern(op_type);
  ApiScope api(type, ApiKind::kLaunch);
  Device& dev = Runtime::get().device(device.index);
  KernelLaunch launch;
  launch.name = instance.name;
  launch.op_type = type;
  launch.call_index = instance.calls.fetch_add(1, std::memory_order_relaxed);
  double bytes = 0, elements = 0;
  for (const auto& t : all) {
    if (!t.defined()) continue;
    bytes += static_cast<double>(t.nbytes());
    elements += static_cast<double>(t.numel());
  }
  launch.cost = KernelCost{.unit = ComputeUnit::kAiCpu, .flops = elements, .bytes = bytes};
  launch.fn = noop_kernel;
  launch.backend = Backend::kCpu;
  launch.fallback = true;
  launch.task_type = TaskType::kAiCpu;
  launch.overflow_mode = dev.golden() ? OverflowMode::kInfNan : dev.overflow_mode();
  launch.golden = dev.golden();
  launch.inputs = inputs;
  launch.outputs = outputs;
  launch.sources = sources;
  if (hooks::subscriber() != nullptr) [[unlikely]] {
    launch.input_signature = signature_of(inputs);
    launch.output_signature = signature_of(outputs);
  }
  const Stream stream = options.stream != nullptr ? *options.stream : dev.default_stream();
  if (stream.device != &dev) throw InvalidArgument(std::string(op_type) + ": the stream belongs to another device");
  dev.launch(std::move(launch), stream, api.connection_id());
}

void check_input_count(const OpSchema& schema, std::size_t count) {
  const auto n = static_cast<std::int64_t>(count);
  if (n < schema.min_inputs || (schema.max_inputs >= 0 && n > schema.max_inputs)) {
    throw InvalidArgument(std::string(schema.type) + ": expected " + std::to_string(schema.min_inputs) +
                          (schema.max_inputs == schema.min_inputs ? ""
                           : schema.max_inputs < 0                ? " or more"
                                                                  : " to " + std::to_string(schema.max_inputs)) +
                          " inputs, got " + std::to_string(n));
  }
}

LaunchPlan plan_npu_launch(const OpSchema& schema, std::span<const TensorMeta> inputs,
                           std::span<const TensorMeta> outputs, const Attrs& attrs, const KernelCost& cost,
                           PrecisionMode mode, const DeviceSpec& spec) {
  const OpRegistry& registry = OpRegistry::instance();
  const DType storage = storage_dtype(inputs, outputs);
  const ComputeChoice choice = choose_compute_dtype(schema.category, storage, mode, spec);
  const KernelEntry* npu = registry.kernel(schema.type, Backend::kNpu);
  if (npu != nullptr && choice.npu_capable && (npu->supports == nullptr || npu->supports(inputs, attrs))) {
    return {npu, false, choice.dtype, cost};
  }
  // Note: the one generic fallback rule: no NPU kernel for this op/dtype -> the CPU kernel as AI CPU.
  const KernelEntry* cpu = registry.kernel(schema.type, Backend::kCpu);
  if (cpu == nullptr) throw OpRegistrationError(std::string(schema.type) + " has neither an npu nor a cpu kernel");
  LaunchPlan plan{cpu, true, storage, cost};
  plan.cost.unit = ComputeUnit::kAiCpu;
  return plan;
}

ComputeChoice choose_compute_dtype(OpCategory category, DType storage, PrecisionMode mode, const DeviceSpec& spec) {
  if (category == OpCategory::kDataMovement || !is_floating(storage)) return {storage, true};
  if (storage == DType::kF64) return {DType::kF64, false};  // no f64 on the NPU: AI CPU
  if (storage == DType::kBF16) return {DType::kBF16, spec.bf16};
  if (storage == DType::kF16) return {DType::kF16, true};
  // f32 storage: the precision mode decides.
  switch (category) {
    case OpCategory::kCube:
      switch (mode) {
        case PrecisionMode::kForceFp16:
        case PrecisionMode::kAllowMixPrecision: return {DType::kF16, true};
        case PrecisionMode::kAllowFp32ToFp16: return {spec.cube_fp32 ? DType::kF32 : DType::kF16, true};
        case PrecisionMode::kMustKeepOriginDtype: return {DType::kF32, spec.cube_fp32};
      }
      break;
    case OpCategory::kVector:
      return {
          mode == PrecisionMode::kForceFp16 || mode == PrecisionMode::kAllowMixPrecision ? DType::kF16 : DType::kF32,
          true};
    case OpCategory::kPrecisionSensitive: return {mode == PrecisionMode::kForceFp16 ? DType::kF16 : DType::kF32, true};
    case OpCategory::kDataMovement: break;
  }
  return {storage, true};
}

std::vector<Tensor> call_op(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs,
                            const CallOptions& options) {
  const OpRegistry& registry = OpRegistry::instance();
  const OpSchema& schema = registry.schema(op_type);
  check_input_count(schema, inputs.size());
  const DeviceRef device = common_device(schema.type, inputs);
  // On an NPU the emulator's own host-side work (inference, allocation, queueing) is not what a real
  // launch costs: it is excluded from host time and replaced by the spec's host_launch_ns
  // (Note [Virtual time]). On the cpu device the kernel is the host's real work and counts.
  std::optional<vclock::BlockedScope> emulating;
  if (device.is_npu()) emulating.emplace();

  InputMetas scratch;  // Note [Per-op allocations]
  std::vector<TensorMeta>& in_meta = scratch.of(inputs);
  InstanceName& instance = instance_name(schema.type, options);
  const char* name = instance.name;
  std::vector<TensorMeta> out_meta = schema.infer(in_meta, attrs);
  for (const auto& m : out_meta)
    check_tensor_shape(m.shape, m.dtype, schema.type);  // before the cost and any allocation
  KernelCost cost = schema.cost(in_meta, out_meta, attrs);
  const std::uint32_t call_index = instance.calls.fetch_add(1, std::memory_order_relaxed);

  ApiScope api(schema.api_name, ApiKind::kLaunch);
  if (schema.is_view && options.outputs.empty() && out_meta.size() == 1 && out_meta[0].dtype == inputs[0].dtype()) {
    return {inputs[0].view(out_meta[0].shape)};  // see OpSchema::is_view: no task, no copy
  }
  Device* dev = device.is_npu() ? &Runtime::get().device(device.index) : nullptr;
  const OpDeviceRules* rules = dev != nullptr ? schema.device : nullptr;  // null for nearly every op
  if (rules != nullptr && rules->device_cost != nullptr) [[unlikely]]
    cost = rules->device_cost(in_meta, out_meta, attrs, dev->spec());
  const FormatPlan* formats = rules != nullptr && rules->formats != nullptr && dev->spec().private_formats &&
                                      plan_fits(*rules->formats, in_meta)
                                  ? rules->formats
                                  : nullptr;
  std::optional<LaunchPlan> plan;  // before the outputs take their shapes from out_meta
  if (dev != nullptr)
    plan.emplace(plan_npu_launch(schema, in_meta, out_meta, attrs, cost, dev->precision_mode(), dev->spec()));
  std::vector<Tensor> outputs;
  if (options.outputs.empty()) {
    outputs.reserve(out_meta.size());
    for (auto& m : out_meta) outputs.push_back(Tensor::empty(std::move(m.shape), m.dtype, device));
  } else {
    check_given_outputs(schema.type, options.outputs, out_meta, device);
    outputs.assign(options.outputs.begin(), options.outputs.end());
  }

  if (dev == nullptr) {
    const KernelEntry* kernel = registry.kernel(schema.type, Backend::kCpu);
    if (kernel == nullptr) throw OpRegistrationError(std::string(schema.type) + " has no cpu kernel");
    run_on_cpu(schema, *kernel, name, call_index, inputs, outputs, attrs, api.connection_id(), cost, in_meta);
    return outputs;
  }

  const Stream stream = options.stream != nullptr ? *options.stream : dev->default_stream();
  if (stream.device != dev) throw InvalidArgument(std::string(schema.type) + ": the stream belongs to another device");
  std::optional<LayoutTasks> layout;  // Note [TransData tasks]
  if (formats != nullptr || allow_internal_format()) [[unlikely]] {
    layout.emplace(LayoutTasks{*dev, stream, api.connection_id(), hooks::subscriber() != nullptr});
    if (allow_internal_format()) read_format_tags(inputs, in_meta, outputs);
    if (formats != nullptr)
      convert_inputs(*layout, *formats, name, inputs, in_meta, outputs);
    else
      inputs_to_base(*layout, inputs, in_meta);
  }

  KernelLaunch launch;
  launch.name = name;
  launch.op_type = schema.type;
  launch.call_index = call_index;
  launch.cost = plan->cost;
  launch.attrs = attrs;
  launch.overflow_mode = dev->overflow_mode();
  if (hooks::subscriber() != nullptr) [[unlikely]] {
    launch.input_signature = signature(in_meta);
    launch.output_signature = formats != nullptr ? planned_output_signature(*formats, outputs) : signature_of(outputs);
  }
  launch.fn = plan->kernel->fn;
  launch.compute_dtype = plan->compute_dtype;
  launch.fallback = plan->fallback;
  launch.backend = plan->fallback ? Backend::kCpu : Backend::kNpu;
  launch.task_type = plan->fallback                          ? TaskType::kAiCpu
                     : plan->cost.unit == ComputeUnit::kCube ? TaskType::kAiCore
                                                             : TaskType::kAiVectorCore;
  if (dev->golden()) [[unlikely]]
    make_golden(launch, schema, outputs);
  launch.inputs = std::move(inputs);
  launch.outputs = outputs;
  launch.cost.hot_bytes = l2_hot_bytes(*dev, launch.inputs, outputs);
  vclock::advance_by(dev->spec().op_issue_ns);  // preparing the op on the host (workspace, tiling)
  dev->launch(std::move(launch), stream, api.connection_id());
  if (formats != nullptr) [[unlikely]]
    convert_outputs(*layout, *formats, outputs);
  return outputs;
}

Tensor call_op1(std::string_view op_type, std::vector<Tensor> inputs, const Attrs& attrs, const CallOptions& options) {
  auto outputs = call_op(op_type, std::move(inputs), attrs, options);
  return std::move(outputs.at(0));
}

std::string& thread_name_scope() noexcept {
  thread_local std::string scope;
  return scope;
}

NameScope::NameScope(std::string_view name) : previous_size_(thread_name_scope().size()) {
  std::string& scope = thread_name_scope();
  if (!scope.empty()) scope += '/';
  scope += name;
}

NameScope::~NameScope() { thread_name_scope().resize(previous_size_); }

}  // namespace npuscope::emulator
