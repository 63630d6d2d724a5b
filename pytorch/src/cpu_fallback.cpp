// See cpu_fallback.h.
//
// Note [CPU fallback]
// Cambricon's MLU->CPU fallback and Ascend's AI CPU ops, as one boxed kernel for the PrivateUse1 key
// (PyTorch's at::native::cpu_fallback does the same for other backends, without the rest of this):
//  1. every device tensor argument (lists and optional lists included) is copied to the host (D2H
//     memcpy tasks, which wait for the work queued before); a device argument (a factory op called
//     with device=privateuseone) becomes the CPU;
//  2. PyTorch's CPU kernel runs, in the emulator's blocked time (it stands for the AI CPU's work,
//     not the host's); where 1.13's CPU kernel has no float16/bfloat16 version, the arguments are
//     widened to float32, the kernel runs again, and the results are rounded back;
//  3. one AI CPU task named after the aten op is recorded on the current stream: it carries the
//     results into the device tensors (mutated arguments, or new outputs), so that the stream order,
//     the trace and the tensor dumps see them where a device op would have put them;
//  4. the op is counted (fallback_counts) and `npuscope analyze` lists its tasks as fallback.
// An op whose result is a view of an input cannot be served (its result would not alias the device
// tensor): those are native (view, as_strided, ...), and any other raises an error naming it.
#include "cpu_fallback.h"

#include "kernel_support.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "npu_device.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/virtual_clock.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {
namespace {

std::mutex g_counts_mutex;
std::unordered_map<std::string, std::int64_t> g_counts;

void count(const std::string& name) {
  std::lock_guard lock(g_counts_mutex);
  ++g_counts[name];
}

bool is_npu(const at::Tensor& t) { return t.defined() && t.device().type() == kNpu; }
bool is_half(const at::Tensor& t) {
  return t.defined() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

// A device tensor argument moved to the host, and where it came from.
struct Moved {
  std::size_t arg = 0;   // argument index
  std::size_t item = 0;  // element of a list argument (0 otherwise)
  at::Tensor device;     // the original
  at::Tensor host;       // its host copy, given to the CPU kernel
  bool written = false;  // the schema says the op writes it
};

class Fallback {
 public:
  Fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack)
      : op_(op), stack_(stack), schema_(op.schema()), name_(schema_.operator_name().name) {}

  void run() {
    const std::size_t n = schema_.arguments().size();
    begin_ = stack_->size() - n;
    for (const auto& r : schema_.returns()) {
      TORCH_CHECK(r.alias_info() == nullptr || r.alias_info()->isWrite(), name_,
                  " returns a view of its input and has no kernel on privateuseone (the emulated NPU); "
                  "please report it, or call it on a CPU tensor");
    }
    for (std::size_t i = 0; i < n; ++i) move_argument(i);
    TORCH_CHECK(device_ >= 0, name_, ": no privateuseone tensor or device among the arguments");
    std::vector<c10::IValue> host_args(stack_->begin() + static_cast<std::ptrdiff_t>(begin_), stack_->end());
    call_cpu(host_args);
    finish();
    count(name_);
  }

 private:
  void move_argument(std::size_t i) {
    c10::IValue& v = (*stack_)[begin_ + i];
    const auto& alias = schema_.arguments()[i].alias_info();
    const bool written = alias != nullptr && alias->isWrite();
    if (v.isTensor()) {
      if (is_npu(v.toTensor())) v = move(v.toTensor(), i, 0, written);
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list = v.toTensorList();
      c10::List<at::Tensor> host;
      for (std::size_t k = 0; k < list.size(); ++k) {
        const at::Tensor t = list.get(k);
        host.push_back(is_npu(t) ? move(t, i, k, written) : t);
      }
      v = host;
    } else if (v.isList()) {  // e.g. Tensor?[] (index.Tensor's indices)
      const c10::List<c10::IValue> list = v.toList();
      bool any = false;
      c10::impl::GenericList host(list.elementType());
      for (std::size_t k = 0; k < list.size(); ++k) {
        const c10::IValue e = list.get(k);
        const bool device = e.isTensor() && is_npu(e.toTensor());
        host.push_back(device ? c10::IValue(move(e.toTensor(), i, k, written)) : e);
        any = any || device;
      }
      if (any) v = host;
    } else if (v.isDevice() && v.toDevice().type() == kNpu) {
      device_ = v.toDevice().has_index() ? v.toDevice().index() : current_device();
      v = c10::IValue(c10::Device(c10::kCPU));
    }
  }

  at::Tensor move(const at::Tensor& t, std::size_t arg, std::size_t item, bool written) {
    if (device_ < 0) device_ = t.device().index();
    TORCH_CHECK(t.device().index() == device_, name_, ": its tensors are on privateuseone:", device_, " and ",
                t.device(), "; move them to one device first");
    at::Tensor host = t.to(at::kCPU);
    moved_.push_back({arg, item, t, host, written});
    return host;
  }

  // Runs the CPU kernel on `args`; on a float16/bfloat16 gap in 1.13's CPU kernels, again in float32.
  void call_cpu(const std::vector<c10::IValue>& args) {
    emulator::vclock::BlockedScope ai_cpu;  // the AI CPU's time, not the host's
    try {
      op_.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack_);
      return;
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      const bool half_gap = what.find("Half") != std::string::npos || what.find("BFloat16") != std::string::npos;
      if (!half_gap || !std::any_of(moved_.begin(), moved_.end(), [](const Moved& m) { return is_half(m.host); }))
        throw;
    }
    widened_ = true;
    stack_->resize(begin_);
    for (std::size_t i = 0; i < args.size(); ++i) stack_->push_back(widen(args[i], i));
    op_.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack_);
  }

  c10::IValue widen(const c10::IValue& v, std::size_t arg) {
    auto wide = [&](const at::Tensor& t, std::size_t item) {
      if (!is_half(t)) return t;
      half_type_ = t.scalar_type();
      at::Tensor w = t.to(at::kFloat);
      for (auto& m : moved_) {
        if (m.arg == arg && m.item == item) m.host = w;  // results are read from the widened copy
      }
      return w;
    };
    if (v.isTensor()) return wide(v.toTensor(), 0);
    if (v.isTensorList()) {
      c10::List<at::Tensor> list = v.toTensorList(), out;
      for (std::size_t k = 0; k < list.size(); ++k) out.push_back(wide(list.get(k), k));
      return out;
    }
    return v;
  }

  // Results to the device: one AI CPU task writes the written arguments and the new outputs.
  void finish() {
    std::vector<at::Tensor> inputs, targets, sources;
    std::vector<std::pair<at::Tensor, at::Tensor>> late;  // (device, host) for non-contiguous targets
    for (const auto& m : moved_) {
      if (m.device.is_contiguous() && !m.written) inputs.push_back(m.device);
      if (!m.written) continue;
      // An out= argument the CPU kernel resized is resized on the device too (_copy_from_and_resize).
      if (!m.device.sizes().equals(m.host.sizes())) m.device.resize_(m.host.sizes());
      add_result(m.device, m.host, targets, sources, late);
    }
    const std::size_t n_returns = schema_.returns().size();
    const std::size_t first = stack_->size() - n_returns;
    for (std::size_t j = 0; j < n_returns; ++j) {
      c10::IValue& r = (*stack_)[first + j];
      const auto& alias = schema_.returns()[j].alias_info();
      if (alias != nullptr && alias->isWrite()) {
        r = written_original(r);
      } else if (r.isTensor() && r.toTensor().defined() && r.toTensor().device().is_cpu()) {
        r = new_output(r.toTensor(), targets, sources, late);
      } else if (r.isTensorList()) {
        c10::List<at::Tensor> list = r.toTensorList(), out;
        for (std::size_t k = 0; k < list.size(); ++k) out.push_back(new_output(list.get(k), targets, sources, late));
        r = out;
      }
    }
    record(inputs, targets, sources);
    for (auto& [device, host] : late) device.copy_(host);
  }

  at::Tensor new_output(const at::Tensor& host, std::vector<at::Tensor>& targets, std::vector<at::Tensor>& sources,
                        std::vector<std::pair<at::Tensor, at::Tensor>>& late) {
    if (!host.defined()) return host;
    at::ScalarType type = host.scalar_type();
    if (widened_ && type == at::kFloat) type = half_type_;
    at::Tensor device = at::empty(host.sizes(), host.options().dtype(type).device(kNpu, device_));
    add_result(device, host, targets, sources, late);
    return device;
  }

  void add_result(const at::Tensor& device, const at::Tensor& host, std::vector<at::Tensor>& targets,
                  std::vector<at::Tensor>& sources, std::vector<std::pair<at::Tensor, at::Tensor>>& late) {
    if (device.numel() == 0) return;
    if (!device.is_contiguous() || !to_emulator_dtype(device.scalar_type())) {
      late.emplace_back(device, host);
      return;
    }
    targets.push_back(device);
    sources.push_back(host.to(device.scalar_type()).expand(device.sizes()).contiguous());
  }

  // The device tensor an in-place / out= op returns: the argument it wrote.
  c10::IValue written_original(const c10::IValue& result) {
    if (result.isTensor()) {
      for (const auto& m : moved_) {
        if (m.written && (m.host.is_same(result.toTensor()) || m.host.is_alias_of(result.toTensor()))) return m.device;
      }
      for (const auto& m : moved_) {
        if (m.written) return m.device;
      }
    }
    return result;
  }

  void record(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& targets,
              const std::vector<at::Tensor>& sources) {
    NPUSCOPE_TORCH_TRY
    std::vector<emulator::Tensor> in, out, src;
    for (const auto& t : inputs) {
      if (to_emulator_dtype(t.scalar_type())) in.push_back(borrow(t));
    }
    for (const auto& t : targets) out.push_back(borrow(t));
    for (const auto& t : sources) src.push_back(borrow_host(t));
    if (in.empty() && out.empty()) return;  // nothing on the device to record (e.g. an empty result)
    const emulator::Stream stream = emulator_stream(current_stream(device_));
    emulator::record_host_task(name_, in, out, src, {.name = name_, .stream = &stream});
    NPUSCOPE_TORCH_CATCH(name_.c_str())
  }

  const c10::OperatorHandle& op_;
  torch::jit::Stack* stack_;
  const c10::FunctionSchema& schema_;
  const std::string name_;
  std::size_t begin_ = 0;
  int device_ = -1;
  std::vector<Moved> moved_;
  bool widened_ = false;
  at::ScalarType half_type_ = at::kHalf;
};

}  // namespace

void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) { Fallback(op, stack).run(); }

std::vector<std::pair<std::string, std::int64_t>> fallback_counts() {
  std::vector<std::pair<std::string, std::int64_t>> out;
  {
    std::lock_guard lock(g_counts_mutex);
    out.assign(g_counts.begin(), g_counts.end());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

void reset_fallback_counts() {
  std::lock_guard lock(g_counts_mutex);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_boxed>()); }

// Note [Autograd fallthrough for every library]
// PyTorch 1.13 lets an op without an autograd kernel fall through the autograd key of CPU, CUDA, XLA
// and a few others, not of PrivateUse1 (VariableFallbackKernel.cpp: "maybe the extension wants to
// override it"), so such an op of any library other than aten (torchvision::nms, c10d's collectives,
// a user's torch.library op) stopped at AutogradPrivateUse1: "Could not run 'torchvision::nms' with
// arguments from the 'AutogradPrivateUse1' backend". aten's ops are not concerned: each has an autograd
// kernel for every backend. With the fallthrough such an op reaches its PrivateUse1 kernel, or the CPU
// fallback above, as it would on CPU or CUDA; one with its own autograd kernel (torchvision::roi_align)
// keeps it. PyTorch 2.0 registers the same for PrivateUse1 itself.
TORCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

}  // namespace npuscope::pytorch
