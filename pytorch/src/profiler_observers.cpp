// The profiler's view of a PyTorch script: aten ops, modules, autograd functions, optimizer calls
// and steps, as host ops of the emulator (npuscope/emulator/host_ops.h), so that a trace links each
// device task to the aten op and module that launched it and names it after them.
//
// Note [PyTorch observers]
// torch_npu's profiler sees a script through PyTorch's RecordFunction; so do we. npuscope.torch
// installs the observers when it runs under `npuscope run` (NPUSCOPE_INJECTION is set), and never
// otherwise, so that an unprofiled script pays nothing:
//  - a global RecordFunction callback opens a host op for every aten op (FUNCTION scope), autograd
//    function (BACKWARD_FUNCTION) and user range (USER_SCOPE: torch.autograd.profiler.record_function,
//    and PyTorch's own "Optimizer.step#SGD.step" around every optimizer step), with the op's
//    sequence number and input shapes and dtypes;
//  - Python's global module hooks (npuscope/torch.py) open one for every module call, named as
//    msprobe names it, "Module.{path}.{Class}.forward.{n}", n counting the calls of that module in
//    the step. The entry is the name scope of what runs inside, so the module's kernels are named
//    "Module.layer1.0.conv1.Conv2d.forward.0/aten::convolution";
//  - the backward pass has no module calls to hook, but autograd pairs each backward function with
//    the forward op that made its node (forward thread + sequence number): every forward op records
//    the module it ran in under its sequence number, and the backward function of that number runs
//    in the module's backward entry, "Module.layer1.0.conv1.Conv2d.backward.0" (or "backward" for
//    an op made outside any module, the loss's for one). msprobe names module backward passes so;
//  - steps: the end of every optimizer step is a step boundary (a step marker), unless the script
//    marks its steps itself with npuscope.torch.step(). A step opens lazily, at the next forward op
//    or module call, so that no empty step trails the last boundary. Module call numbers restart
//    at every boundary, as msprobe's do, so the names of one step are those of the next: two runs
//    of a script give the same names, and the n-th step's op is its name's n-th call.
// The names are what `npuscope compare` pairs two runs by and what --ops / --perturb globs match.
//
// RecordFunction::inputs() asserts, unless NDEBUG is defined, that the dispatcher recorded the op's
// inputs; it does not for every op (detach, empty, as_strided: the list is then empty), so this file
// includes the header without that assert, first, before any other header brings it in.
#ifndef NDEBUG
#define NDEBUG
#define NPUSCOPE_RESTORE_NDEBUG
#endif
#include <ATen/record_function.h>
#ifdef NPUSCOPE_RESTORE_NDEBUG
#undef NDEBUG
#undef NPUSCOPE_RESTORE_NDEBUG
#endif

#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "npu_device.h"
#include "npuscope/emulator/host_ops.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/virtual_clock.h"
#include "profiler_observers.h"

namespace npuscope::pytorch {
namespace {

using emulator::HostOpBegin;

// What the observers share across threads: the module of each forward op's sequence number (the
// forward thread writes it, the autograd engine's threads read it), module call numbers and steps.
class ObserverState {
 public:
  static ObserverState& get() {
    static auto* state = new ObserverState();  // immortal: engine threads may observe during exit
    return *state;
  }

  void note_forward(std::uint64_t rf_thread, std::int64_t seq, const char* module) {
    std::lock_guard lock(mutex_);
    if (forward_module_.size() >= kMaxSequenceNumbers) forward_module_.clear();  // a loop that never steps
    forward_module_[key(rf_thread, seq)] = module;
  }

  // The backward entry of the module whose forward op had this sequence number; null if none.
  const char* backward_module(std::uint64_t fwd_rf_thread, std::int64_t seq) {
    std::lock_guard lock(mutex_);
    const auto it = forward_module_.find(key(fwd_rf_thread, seq));
    if (it == forward_module_.end()) return nullptr;
    const char*& backward = backward_entry_[it->second];
    if (backward == nullptr) {
      std::string entry(it->second);
      const std::size_t at = entry.rfind(".forward.");
      if (at != std::string::npos) entry.replace(at, 9, ".backward.");
      backward = emulator::intern(entry);
    }
    return backward;
  }

  // "Module.{path_class}.forward.{n}" for the n-th call of that module in this step.
  const char* module_entry(const std::string& path_class) {
    std::lock_guard lock(mutex_);
    const std::int64_t n = module_calls_[path_class]++;
    return emulator::intern_cached("Module." + path_class + ".forward." + std::to_string(n));
  }

  // "{prefix}.{n}.forward" for the n-th call of API `prefix` in this step (msprobe's API entries).
  const char* api_entry(const char* prefix) {
    std::lock_guard lock(mutex_);
    const std::int64_t n = api_calls_[prefix]++;
    return emulator::intern_cached(std::string(prefix) + "." + std::to_string(n) + ".forward");
  }

  void remember_thread(std::uint64_t rf_thread, std::uint32_t index) {
    std::lock_guard lock(mutex_);
    thread_index_[rf_thread] = index;
  }
  std::int32_t thread_index_of(std::uint64_t rf_thread) {
    std::lock_guard lock(mutex_);
    const auto it = thread_index_.find(rf_thread);
    return it == thread_index_.end() ? -1 : static_cast<std::int32_t>(it->second);
  }

  // Opens the current step if none is open (on the thread that will end it: the forward thread).
  void open_step() {
    if (step_open_.load(std::memory_order_relaxed)) return;  // the usual case: one load, no lock
    std::lock_guard lock(mutex_);
    if (step_open_) return;
    emulator::step_begin(next_step_);
    step_open_ = true;
  }

  // A step boundary: `manual` from npuscope.torch.step(), else from an optimizer step (ignored once
  // the script marks its own steps).
  void boundary(bool manual) {
    std::lock_guard lock(mutex_);
    if (manual) manual_steps_ = true;
    if (!manual && manual_steps_) return;
    if (step_open_) emulator::step_end();
    step_open_ = false;
    ++next_step_;
    module_calls_.clear();
    api_calls_.clear();
    forward_module_.clear();
  }

  void close_step() {
    std::lock_guard lock(mutex_);
    if (step_open_) emulator::step_end();
    step_open_ = false;
  }

  std::int64_t step() {
    std::lock_guard lock(mutex_);
    return next_step_;
  }

 private:
  static constexpr std::size_t kMaxSequenceNumbers = std::size_t{1} << 20;
  static std::uint64_t key(std::uint64_t thread, std::int64_t seq) {
    return thread << 48 ^ static_cast<std::uint64_t>(seq);
  }

  std::mutex mutex_;
  std::unordered_map<std::uint64_t, const char*> forward_module_;
  std::unordered_map<const char*, const char*> backward_entry_;
  std::unordered_map<std::string, std::int64_t> module_calls_;
  std::unordered_map<std::string, std::int64_t> api_calls_;
  std::unordered_map<std::uint64_t, std::uint32_t> thread_index_;
  std::int64_t next_step_ = 0;
  std::atomic<bool> step_open_{false};  // written under mutex_
  bool manual_steps_ = false;
};

thread_local bool t_thread_known = false;
// Backward functions open on this thread: the outermost one hands the host clock over (Note [Hand-offs
// between host threads]) and names what runs outside any module "backward".
thread_local int t_backward_functions = 0;

// The autograd engine's own range around each node it runs ("autograd::engine::evaluate_function:
// AddmmBackward0", FUNCTION scope, no sequence number) is a backward function (scope_of): the node,
// and what the engine does after it (the sum that reduces a broadcast bias's gradient to its shape, in
// validate_outputs), are backward, and the clock's hand-off happens at its start, before the node's.
// The range takes the module of the node inside it (host_op_adopt_module), so that the engine's sum
// is "Module.fc.Linear.backward.0/aten::sum", not a bare "backward/aten::sum".
constexpr std::string_view kEngineEvaluate = "autograd::engine::evaluate_function: ";

// The pass the thread is in: that of its innermost open op (forward outside any).
ModelPass current_pass() { return emulator::current_host_pass(); }
std::uint64_t begin(const HostOpBegin& op) { return emulator::host_op_begin(op); }
void end(std::uint64_t id) { emulator::host_op_end(id); }

// Aten op names point into their operator's schema, alive as long as the process: interned once per
// pointer. Other names (user ranges, autograd nodes, RECORD_FUNCTION's strings built for the call)
// may reuse a freed one's address: a cached pointer counts only when the text still matches.
const char* interned_name(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (fn.scope() != at::RecordScope::FUNCTION) return emulator::intern_cached(name);
  thread_local std::unordered_map<const char*, const char*> by_pointer;
  const char*& interned = by_pointer[name];
  if (interned == nullptr || std::strcmp(interned, name) != 0) interned = emulator::intern_cached(name);
  return interned;
}

std::string_view dtype_text(c10::ScalarType type) {
  if (const auto d = to_emulator_dtype(type)) return emulator::dtype_name(*d);
  return c10::toString(type);
}

void append_tensor(const at::Tensor& t, std::string& shapes, std::string& dtypes) {
  if (!t.defined()) return;
  for (std::size_t d = 0; d < t.sizes().size(); ++d) {
    if (d > 0) shapes += ',';
    shapes += std::to_string(t.sizes()[d]);
  }
  dtypes += dtype_text(t.scalar_type());
}

// The op's inputs as "SHAPES|DTYPES" (Note [Input signature] in hook_api.h): one entry per
// argument, a tensor list's tensors each an entry, non-tensors empty; at most 32 entries.
const char* input_signature(const at::RecordFunction& fn) {
  constexpr std::size_t kMaxEntries = 32;
  thread_local std::string shapes, dtypes;
  shapes.clear();
  dtypes.clear();
  std::size_t entries = 0;
  const auto next_entry = [&] {
    if (entries++ > 0) {
      shapes += ';';
      dtypes += ';';
    }
  };
  for (const c10::IValue& v : fn.inputs()) {
    if (entries >= kMaxEntries) break;
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) {
        if (entries >= kMaxEntries) break;
        next_entry();
        append_tensor(t, shapes, dtypes);
      }
      continue;
    }
    next_entry();
    if (v.isTensor()) append_tensor(v.toTensor(), shapes, dtypes);
  }
  shapes += '|';
  shapes += dtypes;
  return emulator::intern_cached(shapes);
}

struct Opened final : at::ObserverContext {
  explicit Opened(std::uint64_t op) : id(op) {}
  std::uint64_t id;
};

bool starts_with(const char* s, std::string_view prefix) { return std::string_view(s).starts_with(prefix); }

// The scope an observed range counts as: the engine's evaluate_function ranges are backward functions.
at::RecordScope scope_of(const at::RecordFunction& fn) {
  if (fn.scope() == at::RecordScope::FUNCTION && starts_with(fn.name(), kEngineEvaluate)) {
    return at::RecordScope::BACKWARD_FUNCTION;
  }
  return fn.scope();
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (fn.isAsync()) return nullptr;  // may end on another thread: not a range of this one
  // npuscope.torch's own controls (module_enter opens the module's op inside its own call) are no ops.
  if (starts_with(fn.name(), "npuscope::")) return nullptr;
  ObserverState& state = ObserverState::get();
  if (!t_thread_known) {
    state.remember_thread(fn.threadId(), emulator::vclock::thread_index());
    t_thread_known = true;
  }
  HostOpBegin op;
  op.name = interned_name(fn);
  op.sequence_number = fn.seqNr();
  op.pass = current_pass();
  switch (scope_of(fn)) {
    case at::RecordScope::FUNCTION:
      op.kind = HostOpKind::kAtenOp;
      op.input_signature = input_signature(fn);
      if (op.pass == ModelPass::kForward) {
        state.open_step();
        const char* module = emulator::current_host_module();
        if (fn.seqNr() >= 0 && module != nullptr) state.note_forward(fn.threadId(), fn.seqNr(), module);
      }
      break;
    case at::RecordScope::BACKWARD_FUNCTION: {
      op.kind = HostOpKind::kBackwardFunction;
      op.pass = ModelPass::kBackward;
      op.fwd_thread_id = state.thread_index_of(fn.forwardThreadId());
      const char* module = fn.seqNr() >= 0 ? state.backward_module(fn.forwardThreadId(), fn.seqNr()) : nullptr;
      const bool outermost = t_backward_functions++ == 0;
      if (outermost) emulator::vclock::take_published();  // Note [Hand-offs between host threads]
      if (module != nullptr) {
        op.module = op.scope = module;
        if (!outermost) emulator::host_op_adopt_module(module);  // the engine's range around this node
      } else if (outermost) {
        static const char* const kBackward = emulator::intern("backward");
        op.scope = kBackward;
      }
      break;
    }
    case at::RecordScope::USER_SCOPE:
      if (starts_with(op.name, "Optimizer.")) {  // PyTorch's "Optimizer.step#SGD.step" and zero_grad
        op.kind = HostOpKind::kOptimizer;
        op.pass = ModelPass::kOptimizer;
        op.scope = op.name;
        state.open_step();
      } else {
        op.kind = HostOpKind::kUserScope;
      }
      break;
    default: return nullptr;
  }
  return std::make_unique<Opened>(begin(op));
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  auto* opened = static_cast<Opened*>(context);
  if (opened == nullptr) return;
  end(opened->id);
  if (scope_of(fn) == at::RecordScope::BACKWARD_FUNCTION && --t_backward_functions == 0) {
    emulator::vclock::publish();  // the waiting caller resumes from here
  }
  if (fn.scope() == at::RecordScope::USER_SCOPE && starts_with(fn.name(), "Optimizer.step#")) {
    ObserverState::get().boundary(false);
  }
}

std::mutex g_install_mutex;
std::optional<at::CallbackHandle> g_callback;

// Installs (or removes) the RecordFunction observer. Returns whether it is installed.
bool observe(bool on) {
  std::lock_guard lock(g_install_mutex);
  if (on && !g_callback) {
    g_callback = at::addGlobalCallback(
        at::RecordFunctionCallback(on_start, on_end)
            .needsInputs(true)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
  } else if (!on && g_callback) {
    at::removeCallback(*g_callback);
    g_callback.reset();
  }
  return g_callback.has_value();
}

// A module call: "layer1.0.conv1.Conv2d" -> Module.layer1.0.conv1.Conv2d.forward.{n}. Returns the
// op's id, for module_exit.
std::int64_t module_enter(const std::string& path_class) {
  ObserverState& state = ObserverState::get();
  state.open_step();
  HostOpBegin op;
  op.kind = HostOpKind::kModule;
  op.pass = current_pass();
  op.name = op.module = op.scope = state.module_entry(path_class);
  return static_cast<std::int64_t>(begin(op));
}

void module_exit(std::int64_t id) { end(static_cast<std::uint64_t>(id)); }

// backward() and autograd.grad() wait for the autograd engine's threads: the wait is not the host's
// work, and the caller resumes when the engine's last backward function ended.
thread_local std::vector<std::unique_ptr<emulator::vclock::BlockedScope>> t_waits;

void wait_begin() {
  emulator::vclock::publish();
  t_waits.push_back(std::make_unique<emulator::vclock::BlockedScope>());
}

void wait_end() {
  if (t_waits.empty()) return;
  t_waits.pop_back();
  emulator::vclock::advance_to(emulator::vclock::published());
}

}  // namespace

std::int64_t observed_step() { return ObserverState::get().step(); }
void open_observed_step() { ObserverState::get().open_step(); }
const char* api_entry(const char* prefix) { return ObserverState::get().api_entry(prefix); }
void optimizer_step_skipped() { ObserverState::get().boundary(false); }

TORCH_LIBRARY_FRAGMENT(npuscope, m) {
  m.def("observe(bool on) -> bool", observe);
  m.def("module_enter(str path_class) -> int", module_enter);
  m.def("module_exit(int id) -> ()", module_exit);
  m.def("step() -> ()", [] { ObserverState::get().boundary(true); });
  m.def("wait_begin() -> ()", wait_begin);
  m.def("wait_end() -> ()", wait_end);
  m.def("close_step() -> ()", [] { ObserverState::get().close_step(); });
  m.def("current_step() -> int", [] { return ObserverState::get().step(); });
}

}  // namespace npuscope::pytorch
