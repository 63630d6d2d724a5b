// See Note [Device worker] in device.h and Note [Virtual time] in virtual_clock.h.
#include "npuscope/emulator/device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "api_scope.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/host_ops.h"
#include "npuscope/emulator/virtual_clock.h"
#include "op_check.h"
#include "perturb_apply.h"
#include "task.h"

namespace npuscope::emulator {

namespace {
std::atomic<std::uint64_t> g_next_task_id{1};
std::atomic<std::uint64_t> g_next_connection_id{1};

// A compute task's time on a slowed device (DeviceSpec::compute_slowdown), saturating.
std::uint64_t slowed(const DeviceSpec& spec, std::uint64_t ns) {
  if (spec.compute_slowdown == 1.0) return ns;
  const double t = static_cast<double>(ns) * spec.compute_slowdown;
  return t >= static_cast<double>(kMaxTaskNs) ? kMaxTaskNs : static_cast<std::uint64_t>(t);
}

hooks::TaskRecord task_record(const Task& t, int device_id, hooks::TaskPhase phase) {
  hooks::TaskRecord r{};
  r.task_id = t.task_id;
  r.connection_id = t.connection_id;
  r.queued_ns = t.queued_ns;
  r.device_id = device_id;
  r.stream_id = t.stream;
  r.block_dim = t.block_dim;
  r.launch_thread = t.launch_thread;
  r.host_op_id = t.host_op_id;
  r.phase = phase;
  if (t.kind == Task::Kind::kKernel) {
    r.name = t.kernel.name;
    r.op_type = t.kernel.op_type;
    r.call_index = t.kernel.call_index;
    r.task_type = t.kernel.task_type;
    r.fallback = t.kernel.fallback ? 1 : 0;
    r.compute_dtype = static_cast<std::uint8_t>(t.kernel.compute_dtype);
    r.flops = static_cast<std::uint64_t>(t.kernel.cost.flops);
    r.bytes = static_cast<std::uint64_t>(t.kernel.cost.bytes);
    r.input_signature = t.kernel.input_signature;
    r.output_signature = t.kernel.output_signature;
  } else {
    r.name = t.kind == Task::Kind::kEventRecord ? "EventRecord"
             : t.kind == Task::Kind::kEventWait ? "EventWait"
                                                : "Memcpy";
    r.op_type = r.name;
    r.task_type = t.kind == Task::Kind::kEventRecord ? TaskType::kEventRecord
                  : t.kind == Task::Kind::kEventWait ? TaskType::kEventWait
                                                     : TaskType::kMemcpy;
    r.bytes = t.bytes;
  }
  return r;
}

// A copy of `bytes` on `stream`, timed by the copy model (the host link, or on the device for a
// device-to-device copy); `copy` moves the bytes when the task runs.
std::unique_ptr<Task> copy_task(const DeviceSpec& spec, CopyKind kind, std::uint64_t bytes, std::uint32_t stream,
                                std::uint64_t connection_id, std::function<void()> copy) {
  auto task = std::make_unique<Task>();
  task->kind = Task::Kind::kMemcpy;
  task->stream = stream;
  task->connection_id = connection_id;
  task->copy_kind = kind;
  task->bytes = bytes;
  task->duration_ns = estimate_copy_ns(spec, bytes, kind == CopyKind::kDeviceToDevice);
  task->copy = std::move(copy);
  return task;
}

}  // namespace

std::uint64_t next_task_id() { return g_next_task_id.fetch_add(1, std::memory_order_relaxed); }
std::uint64_t next_connection_id() { return g_next_connection_id.fetch_add(1, std::memory_order_relaxed); }

void emit_tensor_records(const hooks::SubscriberTable* s, std::uint64_t task_id, const std::vector<Tensor>& tensors,
                         TensorRole role) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) continue;
    hooks::TensorRecord r{};
    r.task_id = task_id;
    r.data = t.raw_data();
    r.bytes = t.nbytes();
    r.ndim = static_cast<std::uint8_t>(std::min<int>(t.ndim(), hooks::kMaxDims));
    for (int d = 0; d < r.ndim; ++d) r.dims[d] = t.shape()[d];
    r.dtype = static_cast<std::uint8_t>(t.dtype());
    r.role = role;
    r.index = static_cast<std::uint16_t>(i);
    s->on_tensor(s->user, r);
  }
}

// ---- Stream / Event handles ---------------------------------------------------------------------

void Stream::synchronize() const {
  if (device == nullptr) throw InvalidArgument("synchronize on a null stream");
  device->synchronize_stream(id);
}

void Event::record(const Stream& stream) {
  if (stream.device == nullptr) throw InvalidArgument("Event::record on a null stream");
  ApiScope api("aclrtRecordEvent", ApiKind::kEvent);
  auto state = std::make_shared<EventState>();
  state->device = stream.device;
  state->stream = stream.id;
  auto task = std::make_unique<Task>();
  task->kind = Task::Kind::kEventRecord;
  task->stream = stream.id;
  task->connection_id = api.connection_id();
  task->event = state;
  stream.device->enqueue(std::move(task));  // sets state->seq
  state_ = std::move(state);
}

void Event::wait(const Stream& stream) const {
  if (stream.device == nullptr) throw InvalidArgument("Event::wait on a null stream");
  if (!state_) return;  // never recorded: nothing to wait for (as in CUDA/ACL)
  if (state_->device != stream.device) throw InvalidArgument("Event::wait: the event belongs to another device");
  ApiScope api("aclrtStreamWaitEvent", ApiKind::kEvent);
  auto task = std::make_unique<Task>();
  task->kind = Task::Kind::kEventWait;
  task->stream = stream.id;
  task->connection_id = api.connection_id();
  task->event = state_;
  stream.device->enqueue(std::move(task));
}

void Event::synchronize() const {
  if (!state_) return;
  ApiScope api("aclrtSynchronizeEvent", ApiKind::kSynchronize);
  state_->device->wait_for(state_->stream, state_->seq);
  state_->device->resume_host_at(time_ns());
  state_->device->raise_fault();
}

bool Event::recorded() const { return state_ != nullptr; }

std::uint64_t Event::time_ns() const {
  if (!state_) return 0;
  std::lock_guard lock(state_->device->mutex_);
  return state_->time_ns;
}

// ---- Device -------------------------------------------------------------------------------------

Device::Device(int id, DeviceSpec spec)
    : id_(id),
      spec_(std::move(spec)),
      memory_(spec_.memory_bytes, id),
      precision_mode_(spec_.default_precision_mode),
      overflow_mode_(spec_.default_overflow_mode),
      streams_(1) {
  validate_spec(spec_);
  if (spec_.l2_bytes > 0 && spec_.l2_bandwidth > 0) l2_ = std::make_unique<SharedL2Residency>(spec_.l2_bytes);
  memory_.set_listener(&Device::on_memory_event, this);
  worker_ = std::thread([this] { worker_loop(); });
}

Device::~Device() {
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  worker_.join();
  retired_.clear();
  memory_.set_listener(nullptr, nullptr);
}

Stream Device::create_stream() {
  std::lock_guard lock(mutex_);
  streams_.emplace_back();
  return Stream{this, static_cast<std::uint32_t>(streams_.size() - 1)};
}

Event Device::create_event() { return Event(); }

void Device::check_own_stream(const Stream& stream) const {
  if (stream.device != nullptr && stream.device != this) {
    throw InvalidArgument("npu:" + std::to_string(id_) + ": the stream belongs to another device");
  }
}

void Device::check_stream(std::uint32_t stream_id) const {
  if (stream_id >= streams_.size()) {
    throw InvalidArgument("npu:" + std::to_string(id_) + " has no stream " + std::to_string(stream_id));
  }
}

DeviceAddress Device::malloc(std::uint64_t bytes) {
  ApiScope api("aclrtMalloc", ApiKind::kMalloc);
  return memory_.allocate(bytes);
}

void Device::free(DeviceAddress address) {
  ApiScope api("aclrtFree", ApiKind::kFree);
  std::vector<std::uint64_t> targets;
  {
    std::lock_guard lock(mutex_);
    for (const auto& st : streams_) targets.push_back(st.enqueued);
  }
  // A queued copy may still target this block: freeing under it would crash the worker.
  for (std::uint32_t s = 0; s < targets.size(); ++s) wait_for(s, targets[s]);
  memory_.free(address);
}

void Device::memcpy_h2d(DeviceAddress dst, const void* src, std::uint64_t bytes, Stream stream, KeepAlive keep_alive) {
  // Staging the host data is the emulator's work, not the host's: like a launch, the call costs the
  // host host_launch_ns; the copy itself is modelled on the device (Note [Virtual time]).
  vclock::BlockedScope emulating;
  ApiScope api("aclrtMemcpyAsync", ApiKind::kMemcpyAsync);
  vclock::advance_by(spec_.host_launch_ns);
  check_own_stream(stream);
  memory_.translate(dst, bytes, "copy");  // validate now: errors belong to the caller
  auto staged = std::make_shared<std::vector<std::byte>>(bytes);
  std::memcpy(staged->data(), src, bytes);
  // The lambda holds `keep_alive` until the task is retired on a host thread.
  enqueue(copy_task(spec_, CopyKind::kHostToDevice, bytes, stream.id, api.connection_id(),
                    [this, dst, staged, keep_alive = std::move(keep_alive)] {
                      std::memcpy(memory_.translate(dst, staged->size(), "copy"), staged->data(), staged->size());
                    }));
}

void Device::memcpy_d2h(void* dst, DeviceAddress src, std::uint64_t bytes, Stream stream) {
  ApiScope api("aclrtMemcpy", ApiKind::kMemcpy);
  check_own_stream(stream);
  memory_.translate(src, bytes, "copy");
  const std::uint64_t seq =
      enqueue(copy_task(spec_, CopyKind::kDeviceToHost, bytes, stream.id, api.connection_id(),
                        [this, dst, src, bytes] { std::memcpy(dst, memory_.translate(src, bytes, "copy"), bytes); }));
  wait_for(stream.id, seq);
  {
    std::lock_guard lock(mutex_);
    resume_host_at(streams_[stream.id].last_end_ns);
  }
  raise_fault();
}

void Device::memcpy_d2d(DeviceAddress dst, DeviceAddress src, std::uint64_t bytes, Stream stream,
                        KeepAlive keep_alive) {
  ApiScope api("aclrtMemcpyAsync", ApiKind::kMemcpyAsync);
  check_own_stream(stream);
  memory_.translate(src, bytes, "copy");
  memory_.translate(dst, bytes, "copy");
  enqueue(copy_task(spec_, CopyKind::kDeviceToDevice, bytes, stream.id, api.connection_id(),
                    [this, dst, src, bytes, keep_alive = std::move(keep_alive)] {
                      std::memmove(memory_.translate(dst, bytes, "copy"), memory_.translate(src, bytes, "copy"), bytes);
                    }));
}

void Device::launch(KernelLaunch launch, Stream stream, std::uint64_t connection_id) {
  auto task = std::make_unique<Task>();
  task->kind = Task::Kind::kKernel;
  task->stream = stream.id;
  task->connection_id = connection_id;
  const CostEstimate estimate = estimate_kernel(spec_, launch.cost, launch.compute_dtype);
  task->duration_ns = launch.body ? estimate.duration_ns : slowed(spec_, estimate.duration_ns);
  task->block_dim = estimate.block_dim;
  task->kernel = std::move(launch);
  vclock::advance_by(spec_.host_launch_ns);  // the host-side cost of a launch on a real NPU
  enqueue(std::move(task));
}

std::uint64_t Device::enqueue(std::unique_ptr<Task> task) {
  task->task_id = next_task_id();
  task->queued_ns = vclock::host_now_ns();
  task->launch_thread = vclock::thread_index();
  task->host_op_id = current_host_op();
  {
    std::lock_guard lock(mutex_);
    check_stream(task->stream);  // streams are never removed: still valid below
  }
  if (task->kind == Task::Kind::kKernel) {
    if (const auto* s = hooks::subscriber(); s != nullptr && s->on_task && s->wants_task_queued) [[unlikely]] {
      s->on_task(s->user, task_record(*task, id_, hooks::TaskPhase::kQueued));
    }
  }
  std::uint64_t seq;
  std::vector<std::unique_ptr<Task>> retired;
  bool wake;
  {
    // Numbering and queueing in one step: with several host threads on one stream, the queue must
    // hold a stream's tasks in sequence order, or a waiter would see a later task complete first.
    std::lock_guard lock(mutex_);
    seq = task->seq = ++streams_[task->stream].enqueued;
    if (task->kind == Task::Kind::kEventRecord) task->event->seq = seq;
    queue_.push_back(std::move(task));
    queued_total_.fetch_add(1, std::memory_order_release);
    retired.swap(retired_);  // what the worker finished, collected in the same lock
    wake = worker_sleeping_;
  }
  if (wake) work_cv_.notify_one();  // Note [Worker wake-ups]
  return seq;  // `retired` is destroyed here, outside the lock: tensor frees re-enter the allocator
}

// Note [Worker wake-ups]
// A host thread launching small ops one by one (a GRU's time steps, an optimizer's per-parameter
// ops) hands the worker a task every few microseconds, and the worker finishes each sooner than
// that: it went to sleep on work_cv_ after every task, and every launch paid a futex wake-up (a
// system call, 5-10 us on the virtual machines CI runs on: a [16, 64] Add cost 13.5 us a call
// against PyTorch's 1.1 us, nearly all of it the wake-up). So the worker, having run out of work,
// first waits up to kWorkerSpin for the next task without sleeping (watching queued_total_), and
// only then sleeps; a launch wakes it only when it sleeps (worker_sleeping_). The wait yields the
// core between looks, so on an oversubscribed machine (16 ranks on 2 cores) the spinning worker
// gives its time to the threads that have work.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);

namespace {

// Until `queued` moves on from `seen` or kWorkerSpin has passed.
void spin_for_work(const std::atomic<std::uint64_t>& queued, std::uint64_t seen) {
  const auto until = std::chrono::steady_clock::now() + kWorkerSpin;
  for (int i = 0; queued.load(std::memory_order_acquire) == seen; ++i) {
    if (i < 64) {
      __builtin_ia32_pause();
      continue;
    }
    if (std::chrono::steady_clock::now() >= until) return;
    std::this_thread::yield();
  }
}

}  // namespace

// Note [Completion wake-ups]
// A host thread waiting for a stream (a synchronisation, a copy back) used to be woken by every task
// the worker finished, to check its condition and sleep again. A model's pass is a burst of launches
// and then one synchronisation, so the host woke once per task: gpt_small (~200 tasks a pass) made
// ~990 context switches a pass. On a 2-core machine each wake-up took a core from the worker or its
// OpenMP team in the middle of a GEMM, whose threads then waited at their barrier for a time slice
// (MatMuls of 0.3 ms took 3-12 ms). Now each waiter records the sequence number it waits for in its
// stream's `awaited` (the lowest, with several waiters), and the worker wakes the waiters when the
// stream completes that task; a woken waiter whose task is not done records it again. gpt_small on
// npu: 4 context switches a pass, 16.1 -> 13.9 ms; mobilenet_v3_small 7.8 -> 5.8 ms (2 OpenMP
// threads, medians of 3 alternating runs of bench/zoo_exec, with Note [Shape nodes on the host]).

// Two lock sections per task (Note [Per-op allocations] in dispatch.cpp): taking a task with its
// start time (event tasks complete right there), and its completion with the next task's taking.
void Device::worker_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queue_.empty() && !stopping_) {
      const std::uint64_t seen = queued_total_.load(std::memory_order_relaxed);
      lock.unlock();
      spin_for_work(queued_total_, seen);
      lock.lock();
    }
    worker_sleeping_ = true;
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    worker_sleeping_ = false;
    if (queue_.empty()) return;  // stopping and drained
    std::unique_ptr<Task> task = std::move(queue_.front());
    queue_.pop_front();
    StreamState& st = streams_[task->stream];
    const bool runs = task->kind == Task::Kind::kKernel || task->kind == Task::Kind::kMemcpy;
    if (task->kind == Task::Kind::kEventRecord) {
      // Work after a pending event wait starts no earlier than it, so neither does the record.
      task->event->time_ns = std::max(st.last_end_ns, st.wait_until_ns);
    } else if (task->kind == Task::Kind::kEventWait) {
      st.wait_until_ns = std::max(st.wait_until_ns, task->event->time_ns);
    } else {
      task->start_ns = std::max({task->queued_ns + spec_.launch_latency_ns, st.last_end_ns, st.wait_until_ns});
    }
    if (runs) {
      lock.unlock();
      try {
        execute(*task);
      } catch (const std::exception& e) {
        // Kernels and copies do not throw by design; if one does (a std::bad_alloc of a working
        // buffer), say so rather than abort the process, and fail the next synchronisation too: its
        // outputs are not what they should be (Note [Kernel faults]).
        std::fprintf(stderr, "npuscope: internal error: task %llu on npu:%d failed: %s\n",
                     static_cast<unsigned long long>(task->task_id), id_, e.what());
        std::lock_guard fault_lock(mutex_);
        if (fault_.empty()) fault_ = "task on npu:" + std::to_string(id_) + " failed: " + std::string(e.what());
      }
      lock.lock();
    }
    StreamState& done = streams_[task->stream];  // create_stream may have moved streams_ meanwhile
    if (runs) {
      const std::uint64_t end = task->start_ns + task->duration_ns;
      done.last_end_ns = end;
      done.wait_until_ns = 0;
      tasks_executed_++;
      busy_ns_ += task->duration_ns;
      last_end_ns_ = std::max(last_end_ns_, end);
    }
    done.completed = task->seq;
    retired_.push_back(std::move(task));
    if (done.completed >= done.awaited) {  // Note [Completion wake-ups]
      done.awaited = UINT64_MAX;
      done_cv_.notify_all();
    }
  }
}

// Runs a kernel or copy task from task.start_ns; sets task.duration_ns when the kernel models its own.
void Device::execute(Task& task) {
  const std::uint64_t start = task.start_ns;
  std::uint64_t end = start + task.duration_ns;
  const auto* sub = hooks::subscriber();

  if (task.kind == Task::Kind::kMemcpy) {
    task.copy();
    if (sub != nullptr && sub->on_memcpy) [[unlikely]] {
      sub->on_memcpy(sub->user, {task.task_id, task.connection_id, task.queued_ns, start, end, task.bytes, id_,
                                 task.stream, task.copy_kind});
    }
  } else {
    KernelLaunch& k = task.kernel;
    if (sub != nullptr && sub->on_task && sub->wants_task_begin) [[unlikely]] {
      auto r = task_record(task, id_, hooks::TaskPhase::kBegin);
      r.start_ns = start;
      sub->on_task(sub->user, r);
    }
    // The worker's own views, reused (Note [Per-op allocations] in dispatch.cpp).
    thread_local std::vector<TensorView> in, out;
    in.assign(k.inputs.size(), TensorView{});
    out.resize(k.outputs.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Tensor& t = k.inputs[i];
      if (t.defined()) in[i] = {t.raw_data(), t.dtype(), &t.shape(), t.numel()};
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      const Tensor& t = k.outputs[i];
      out[i] = {t.raw_data(), t.dtype(), &t.shape(), t.numel()};
    }
    KernelContext ctx{in, out, k.attrs, k.backend, k.compute_dtype, k.overflow_mode};
    ctx.spec = &spec_;
    ctx.task_id = task.task_id;
    ctx.start_ns = start;
    std::unique_ptr<OpCheck> check;  // Note [Online op check]
    if (sub != nullptr && sub->wants_op_checks && sub->on_op_check != nullptr && !k.body) [[unlikely]]
      check = OpCheck::before(k);
    const std::uint64_t real_start = vclock::real_now_ns();
    for (std::size_t i = 0; i < k.sources.size(); ++i)
      std::memcpy(k.outputs[i].raw_data(), k.sources[i].raw_data(), k.outputs[i].nbytes());
    if (k.body) [[unlikely]]
      k.body(ctx);
    else
      k.fn(ctx);
    const std::uint64_t emulation_ns = vclock::real_now_ns() - real_start;
    if (ctx.device_ns != 0) {  // the kernel modelled its own time (KernelContext::device_ns)
      task.duration_ns = std::min(k.body ? ctx.device_ns : slowed(spec_, ctx.device_ns), kMaxTaskNs);
      end = start + task.duration_ns;
      if (ctx.device_block_dim != 0) task.block_dim = ctx.device_block_dim;
    }
    if (!ctx.fault.empty()) [[unlikely]] {
      std::lock_guard lock(mutex_);
      if (fault_.empty()) {
        fault_ = "kernel '" + std::string(k.name) + "' on npu:" + std::to_string(id_) + " failed: " + ctx.fault +
                 " (reported at the next synchronisation, as a device reports an AI Core exception)";
      }
    }
    // Before the tensors reach the hooks: dumps see the perturbed outputs (Note [Perturbation]).
    if (const PerturbSet* p = active_perturbations(); p != nullptr && !k.golden) [[unlikely]]
      apply_perturbations(*p, k.name, ctx);
    if (check) [[unlikely]]
      check->after(k, task.task_id, *sub);
    if (sub != nullptr) [[unlikely]] {
      if (sub->wants_tensors && sub->on_tensor) {
        emit_tensor_records(sub, task.task_id, k.inputs, TensorRole::kInput);
        emit_tensor_records(sub, task.task_id, k.outputs, TensorRole::kOutput);
      }
      if (sub->on_task) {
        auto r = task_record(task, id_, hooks::TaskPhase::kEnd);
        r.start_ns = start;
        r.end_ns = end;
        r.emulation_ns = emulation_ns;
        r.overflow = ctx.overflow ? 1 : 0;
        r.underflow = static_cast<std::uint32_t>(std::min<std::int64_t>(ctx.underflow, UINT32_MAX));
        r.subnormal = static_cast<std::uint32_t>(std::min<std::int64_t>(ctx.subnormal, UINT32_MAX));
        sub->on_task(sub->user, r);
      }
      if (ctx.overflow && sub->on_overflow) {
        sub->on_overflow(sub->user, {task.task_id, end, id_, static_cast<std::uint8_t>(ctx.saturated ? 1 : 0)});
      }
    }
    if (ctx.saturated) {
      std::lock_guard lock(mutex_);
      float_status_ = true;
    }
  }
}

void Device::wait_for(std::uint32_t stream_id, std::uint64_t seq) {
  {
    vclock::BlockedScope blocked;
    std::unique_lock lock(mutex_);
    check_stream(stream_id);
    while (streams_[stream_id].completed < seq) {
      StreamState& st = streams_[stream_id];  // create_stream may move streams_ while this waits
      st.awaited = std::min(st.awaited, seq);
      done_cv_.wait(lock);
    }
  }
  collect_retired();
}

void Device::synchronize_stream(std::uint32_t stream_id) {
  ApiScope api("aclrtSynchronizeStream", ApiKind::kSynchronize);
  std::uint64_t seq;
  {
    std::lock_guard lock(mutex_);
    check_stream(stream_id);
    seq = streams_[stream_id].enqueued;
  }
  wait_for(stream_id, seq);
  {
    std::lock_guard lock(mutex_);
    resume_host_at(streams_[stream_id].last_end_ns);
  }
  raise_fault();
}

void Device::synchronize() {
  ApiScope api("aclrtSynchronizeDevice", ApiKind::kSynchronize);
  std::vector<std::uint64_t> targets;
  {
    std::lock_guard lock(mutex_);
    for (const auto& st : streams_) targets.push_back(st.enqueued);
  }
  for (std::uint32_t s = 0; s < targets.size(); ++s) wait_for(s, targets[s]);
  std::uint64_t latest = 0;
  {
    std::lock_guard lock(mutex_);
    for (const auto& st : streams_) latest = std::max(latest, st.last_end_ns);
  }
  resume_host_at(latest);
  raise_fault();
}

void Device::resume_host_at(std::uint64_t device_done_ns) const {
  // The host learns of the completion a round trip later (Note [Calibrated cost model]).
  vclock::advance_to(device_done_ns);
  vclock::advance_by(spec_.sync_latency_ns);
}

void Device::raise_fault() {
  std::string fault;
  {
    std::lock_guard lock(mutex_);
    fault.swap(fault_);
  }
  if (!fault.empty()) [[unlikely]]
    throw InvalidArgument(fault);
}

void Device::collect_retired() {
  std::vector<std::unique_ptr<Task>> done;
  {
    std::lock_guard lock(mutex_);
    done.swap(retired_);
  }
  // Destroyed here, on a host thread, outside the lock: tensor frees re-enter the allocator.
}

void Device::set_overflow_mode(OverflowMode mode) {
  if (mode == OverflowMode::kInfNan && !spec_.supports_inf_nan) {
    throw InvalidArgument("device " + spec_.name + " supports the saturation overflow mode only");
  }
  overflow_mode_ = mode;
}

bool Device::float_status() const {
  std::lock_guard lock(mutex_);
  return float_status_;
}

void Device::clear_float_status() {
  std::lock_guard lock(mutex_);
  float_status_ = false;
}

std::uint64_t Device::tasks_executed() const {
  std::lock_guard lock(mutex_);
  return tasks_executed_;
}

std::uint64_t Device::modelled_busy_ns() const {
  std::lock_guard lock(mutex_);
  return busy_ns_;
}

std::uint64_t Device::last_task_end_ns() const {
  std::lock_guard lock(mutex_);
  return last_end_ns_;
}

void Device::on_memory_event(void* user, const MemoryEvent& event, const MemoryStats& stats) {
  const auto* s = hooks::subscriber();
  if (s == nullptr || s->on_memory == nullptr) [[likely]]
    return;
  auto* self = static_cast<Device*>(user);
  MemoryOp op = event.kind == MemoryEvent::Kind::kAlloc     ? MemoryOp::kAlloc
                : event.kind == MemoryEvent::Kind::kFree    ? MemoryOp::kFree
                : event.kind == MemoryEvent::Kind::kReserve ? MemoryOp::kReserve
                                                            : MemoryOp::kRelease;
  // Host threads have clocks of their own, so a free on one thread could carry an earlier time than
  // the allocation it undoes on another. Memory records of a device are stamped in allocator order
  // (this runs under the allocator's lock): never earlier than the previous one. Records with equal
  // times keep their allocator order through the seq (the trace orders MEMORY_RECORD by ts_ns, seq).
  self->last_memory_ns_ = std::max(self->last_memory_ns_, vclock::host_now_ns());
  s->on_memory(s->user, {self->last_memory_ns_, event.address, event.bytes, stats.allocated_bytes, stats.reserved_bytes,
                         self->id_, vclock::thread_index(), op, static_cast<std::uint32_t>(event.seq)});
}

}  // namespace npuscope::emulator
