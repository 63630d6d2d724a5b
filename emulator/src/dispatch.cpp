// See dispatch.h.
#include "npuscope/emulator/dispatch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>

#include "api_scope.h"
#include "format_plans.h"
#include "name_scope.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/host_ops.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"
#include "task.h"

namespace npuscope::emulator {
namespace {

// Note [Instance names without a lock]
// Every op has an instance name (scope + name, interned: records keep the pointer) and a call index
// (its n-th call in the process: what the comparator matches two runs by). Neither may take a
// global lock per op, profiled or not: host threads launching ops would queue on it. Each distinct
// instance name has one immortal InstanceName with an atomic call counter, created under the
// table's mutex the first time any thread sees the name; each thread caches name -> InstanceName*
// for itself, so a known name costs a thread-local hash lookup and one fetch_add. Indexes of one
// name are handed out in the order the fetch_adds happen, each once, as a mutex would hand them.
// The API name is the schema's, interned at registration (OpSchema::api_name). What the per-op path
// still locks is per device: the allocator for the outputs and the device's queue.
struct InstanceName {
  explicit InstanceName(const char* interned) : name(interned) {}
  const char* const name;
  std::atomic<std::uint32_t> calls{0};
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Every instance name seen in the process; its mutex is taken on a thread's first sight of a name
// and by reset_call_counters(), never on a cached name.
class InstanceNames {
 public:
  static InstanceNames& get() {
    static auto* names = new InstanceNames();  // immortal, like the interned strings records point to
    return *names;
  }
  InstanceName* find_or_add(std::string_view full) {
    std::lock_guard lock(mutex_);
    const auto it = by_name_.find(full);
    if (it != by_name_.end()) return it->second.get();
    const char* interned = intern(full);
    return by_name_.emplace(interned, std::make_unique<InstanceName>(interned)).first->second.get();
  }
  void reset_calls() {
    std::lock_guard lock(mutex_);
    for (auto& [name, entry] : by_name_) entry->calls.store(0, std::memory_order_relaxed);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string_view, std::unique_ptr<InstanceName>> by_name_;  // keys: the interned text
};

// This thread's view of InstanceNames, and the buffer it spells scoped names in.
struct ThreadNames {
  std::unordered_map<std::string, InstanceName*, StringHash, std::equal_to<>> cache;
  std::string full;
};
thread_local ThreadNames t_names;

InstanceName& instance_name(std::string_view op_type, const CallOptions& options) {
  const std::string_view base = options.name.empty() ? op_type : options.name;
  std::string_view full = base;
  if (const std::string& scope = thread_name_scope(); !scope.empty()) {
    t_names.full.assign(scope).append(1, '/').append(base);
    full = t_names.full;
  }
  if (const auto it = t_names.cache.find(full); it != t_names.cache.end()) [[likely]]
    return *it->second;
  InstanceName* entry = InstanceNames::get().find_or_add(full);
  t_names.cache.emplace(std::string(full), entry);
  return *entry;
}

// Tensors as "SHAPES|DTYPES|FORMATS" (Note [Input signature] in hook_api.h), interned: only built for
// a listener, and interned through the thread's cache (a training loop repeats a few hundred shapes).
// A tensor with a private format tag shows its storage shape (Note [Private formats] in formats.h).
const char* signature(std::span<const TensorMeta> metas) {
  thread_local std::string text;
  text.clear();
  const auto each = [&](auto&& write) {
    for (std::size_t i = 0; i < metas.size(); ++i) {
      if (i > 0) text += ';';
      if (metas[i].present) write(metas[i]);
    }
  };
  const auto dims = [&](const Shape& shape) {
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d > 0) text += ',';
      text += std::to_string(shape[d]);
    }
  };
  each([&](const TensorMeta& m) {
    if (is_private(m.format)) [[unlikely]]
      dims(storage_shape(m.format, m.shape, m.dtype, m.c0));
    else
      dims(m.shape);
  });
  text += '|';
  each([&](const TensorMeta& m) { text += dtype_name(m.dtype); });
  text += '|';
  each([&](const TensorMeta& m) {
    text += format_name(is_private(m.format) ? m.format : base_format(m.shape.size()));
    // A C0 other than the dtype's is what the profile marks with a sub-format: the pools' f32
    // "NC1HWC0:1" (C0 = 16), where the same pools' u16 mask (C0 = 16 too) is plain "NC1HWC0".
    if (m.c0 != 0 && m.c0 != c0_of(m.dtype)) text += ":1";
  });
  return intern_cached(text);
}

void fill_metas(const std::vector<Tensor>& tensors, std::vector<TensorMeta>& out) {
  out.resize(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    TensorMeta& m = out[i];
    m.present = tensors[i].defined();
    if (m.present) {
      m.shape.assign(tensors[i].shape().begin(), tensors[i].shape().end());  // keeps the buffer
      m.dtype = tensors[i].dtype();
    } else {
      m.shape.clear();
      m.dtype = DType::kF32;
    }
    m.format = Format::kND;  // tags are read where they matter (read_format_tags)
    m.c0 = 0;
  }
}

// signature() of tensors, through a buffer of this thread's (built for a listener only).
const char* signature_of(const std::vector<Tensor>& tensors) {
  thread_local std::vector<TensorMeta> metas;
  fill_metas(tensors, metas);
  return signature(metas);
}

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

void noop_kernel(KernelContext&) {}

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

// A tensor's key in the L2 (Note [L2 residency]): where its data starts on the device.
std::uint64_t l2_key(const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.raw_data()); }

// The bytes of `m`'s data laid out in `format`.
std::uint64_t storage_bytes(const TensorMeta& m, Format format, int c0) {
  return static_cast<std::uint64_t>(shape_numel(storage_shape(format, m.shape, m.dtype, c0))) * dtype_size(m.dtype);
}

// The bytes of the inputs the L2 holds, for cost.hot_bytes; the inputs and outputs are then its
// newest data (Note [L2 residency]). Undefined and empty tensors take no part.
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

// Note [TransData tasks]
// On a spec with private_formats, an op with a format plan (format_plans.cpp) runs as the shared
// 910B profile shows it: a TransData task for each input not in the format its kernel wants, a
// MemSet where the plan asks for one, the op itself with its operands' storage shapes and formats,
// then a TransData back to the base format for each private output. torch_npu keeps base formats
// between ops unless allow_internal_format is on (its default is off: npu_sys_ctrl.cpp); with it on
// (RuntimeOptions, NPUSCOPE_ALLOW_INTERNAL_FORMAT, npuscope.torch's config), a converted input and a
// private output keep their format tag (Tensor::format()), so a later op that wants that format
// converts nothing. An op without a plan that gets a tagged tensor converts it back to its base
// format first, in place (the tag goes), so each tensor is converted once each way at most: the
// model of what the option saves. (torch_npu's aclnn ops convert such an input into a temporary
// and leave the tensor private, so a real run may convert a tensor read by several base-format ops
// more often.) Conversions inside an aclnn op (MaxPool2dWithMask's TransDataSpecial) happen
// whatever the option says.
//
// These TransData and MemSet tasks are timed (trans_data_cost, memset_cost) and carry their shapes
// and formats for the trace, but move no data and hold no tensors: a format is metadata and the op
// computes on the logical tensor (Note [Private formats] in formats.h), so converting bytes only to
// convert them back would cost host time and change nothing. Having no tensors, they send no
// tensor records: a golden run (NPUSCOPE_GOLDEN=1) launches the same tasks under the same names and
// call indexes, the comparator pairs them 1:1 with the NPU run's and, finding no tensors on either
// side, skips them as it skips undumped ops. What is left out: the converted copies' device memory
// (a real TransData allocates its output), and views and host copies of a tagged tensor, which
// convert nothing here. Ops without a plan pay one test of OpSchema::device and one relaxed load of
// allow_internal_format() per launch.
struct LayoutTasks {
  Device& dev;
  Stream stream;
  std::uint64_t connection;
  bool listener;

  // A timed task that moves no data, its signatures built for a listener only.
  void launch(std::string_view name, const char* op_type, KernelCost cost, DType dtype, const TensorMeta* in,
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

  // A TransData of `m` (logical shape, its format and C0; `t`'s data) into `to`; `m` then says `to`.
  void trans_data(std::string_view name, TensorMeta& m, const Tensor& t, Format to, int c0) {
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

  // Back to the base format for an op that reads it, in place: the tensor loses its tag.
  void to_base(TensorMeta& m, const Tensor& t) {
    trans_data("trans_TransData_base", m, t, Format::kND, 0);
    t.set_format(Format::kND);
  }
};

// allow_internal_format: the inputs' tags into their metas, and the outputs' old tags gone (the
// op writes them; a planned op tags its own).
void read_format_tags(const std::vector<Tensor>& inputs, std::vector<TensorMeta>& in_meta,
                      const std::vector<Tensor>& outputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!in_meta[i].present) continue;
    in_meta[i].format = inputs[i].format();
    if (is_private(in_meta[i].format)) in_meta[i].c0 = static_cast<std::uint8_t>(inputs[i].format_c0());
  }
  for (const Tensor& t : outputs) t.set_format(Format::kND);
}

// The plan applies when every planned operand has the rank its format needs (a CHW pool has not).
bool plan_fits(const FormatPlan& plan, std::span<const TensorMeta> in) {
  for (std::size_t i = 0; i < in.size() && i < kMaxPlannedInputs; ++i) {
    if (is_private(plan.inputs[i].format) && (!in[i].present || in[i].shape.size() != 4)) return false;
  }
  return true;
}

std::string transdata_name(const FormatPlan& plan, const FormatSlot& slot) {
  if (plan.transdata_name != nullptr) return plan.transdata_name;
  return "trans_TransData_" + std::to_string(slot.number);
}

// Before a planned op: its inputs' conversions (in the order of their numbers) and its MemSet;
// in_meta then says what the kernel reads.
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
  for (std::size_t i = kMaxPlannedInputs; i < in_meta.size(); ++i) {
    if (in_meta[i].present && is_private(in_meta[i].format)) tasks.to_base(in_meta[i], inputs[i]);
  }
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

// The outputs as the planned op writes them (for its signature).
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

// After a planned op: its private outputs back to their base format, or tagged (allow_internal_format).
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
    if (formats != nullptr) {
      convert_inputs(*layout, *formats, name, inputs, in_meta, outputs);
    } else {
      for (std::size_t i = 0; i < in_meta.size(); ++i) {
        if (in_meta[i].present && is_private(in_meta[i].format)) layout->to_base(in_meta[i], inputs[i]);
      }
    }
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

void reset_call_counters() { InstanceNames::get().reset_calls(); }

}  // namespace npuscope::emulator
