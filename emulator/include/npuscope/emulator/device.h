// One emulated NPU: its spec, its memory, its streams and events, and the worker that executes
// tasks in virtual time (see Note [Virtual time] in virtual_clock.h).
//
// Note [Device worker]
// Every launch becomes a Task pushed onto the device's FIFO queue; one worker thread per device
// executes them in launch order (real execution order is FIFO across streams, which is always a
// valid order since an event wait is enqueued after the record it waits for). Modelled times:
//   start = max(launch time + launch latency, previous task end on the stream, awaited events)
//   end   = start + cost model duration
// Streams therefore overlap in virtual time while the worker runs them one after another.
// Finished tasks are handed back to host threads to be destroyed, so tensor frees (and their
// memory records) happen on host threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_memory.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/l2_residency.h"
#include "npuscope/emulator/numerics.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {

class Device;
struct Task;

// A stream handle (like aclrtStream): cheap to copy, valid while its device lives.
struct Stream {
  Device* device = nullptr;
  std::uint32_t id = 0;

  void synchronize() const;
  bool operator==(const Stream&) const = default;
};

struct EventState;
// An event handle (like aclrtEvent). record() captures the completion time of the work queued on
// the stream so far; wait() makes another stream's later tasks start no earlier than that.
class Event {
 public:
  Event() = default;
  void record(const Stream& stream);
  void wait(const Stream& stream) const;  // enqueue a wait on `stream`
  void synchronize() const;               // host waits; host clock moves to the event time
  bool recorded() const;
  std::uint64_t time_ns() const;  // modelled completion time (after synchronize)

 private:
  friend class Device;
  std::shared_ptr<EventState> state_;
};

// A kernel launch as the dispatcher hands it over.
struct KernelLaunch {
  const char* name = nullptr;     // interned
  const char* op_type = nullptr;  // interned
  std::uint32_t call_index = 0;
  TaskType task_type = TaskType::kAiVectorCore;
  bool fallback = false;
  DType compute_dtype = DType::kF32;
  KernelCost cost;
  std::vector<Tensor> inputs, outputs;  // kept alive until the task ran; reported to tensor hooks
  // Results computed on the host (record_host_task), copied into `outputs` before `fn` runs.
  std::vector<Tensor> sources;
  KernelFn fn = nullptr;
  // Run instead of `fn` when set: work that carries its own state, a collective's exchange between
  // ranks (Note [Collectives in virtual time] in collectives.h).
  std::function<void(KernelContext&)> body;
  Backend backend = Backend::kNpu;  // kCpu for an AI CPU fallback
  Attrs attrs;
  OverflowMode overflow_mode = OverflowMode::kInfNan;  // the device's mode at launch
  bool golden = false;  // a golden run's task (Note [Golden run] in runtime.h): never perturbed
  // Interned, for the listener (Note [Input signature]); null if none.
  const char* input_signature = nullptr;
  const char* output_signature = nullptr;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  Device(int id, DeviceSpec spec);
  ~Device();  // drains the queue
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  const DeviceSpec& spec() const { return spec_; }
  CachingAllocator& memory() { return memory_; }
  // What the L2 holds (Note [L2 residency]); null when the spec has no L2 term.
  SharedL2Residency* l2() { return l2_.get(); }

  Stream default_stream() { return Stream{this, 0}; }
  Stream create_stream();
  Event create_event();

  // What an asynchronous copy keeps alive until it ran (e.g. the tensor storages it touches).
  using KeepAlive = std::shared_ptr<const void>;

  // aclrt-style raw memory API (host API records included).
  DeviceAddress malloc(std::uint64_t bytes);
  // Waits for the work queued on the device first (as cudaFree does), so that a pending copy never
  // touches freed memory.
  void free(DeviceAddress address);
  // Asynchronous: the host data is staged at the call, so the caller may reuse its buffer.
  void memcpy_h2d(DeviceAddress dst, const void* src, std::uint64_t bytes, Stream stream, KeepAlive keep_alive = {});
  // Synchronous: waits for the stream, then copies.
  void memcpy_d2h(void* dst, DeviceAddress src, std::uint64_t bytes, Stream stream);
  void memcpy_d2d(DeviceAddress dst, DeviceAddress src, std::uint64_t bytes, Stream stream, KeepAlive keep_alive = {});

  // Queues a kernel on `stream` and returns at once. Called by the dispatcher.
  void launch(KernelLaunch launch, Stream stream, std::uint64_t connection_id);

  void synchronize();  // every stream
  void synchronize_stream(std::uint32_t stream_id);

  // Numerics settings of this device.
  PrecisionMode precision_mode() const { return precision_mode_; }
  void set_precision_mode(PrecisionMode mode) { precision_mode_ = mode; }
  OverflowMode overflow_mode() const { return overflow_mode_; }
  // Throws InvalidArgument when the device supports saturation only.
  void set_overflow_mode(OverflowMode mode);
  // A golden run's device (Note [Golden run] in runtime.h): its ops run their CPU golden kernels.
  // Set by the runtime before the first launch.
  bool golden() const { return golden_; }
  void set_golden(bool golden) { golden_ = golden; }
  // The float status register (npu_get_float_status): raised by any saturating kernel.
  bool float_status() const;
  void clear_float_status();

  // Counters, for tests and summaries.
  std::uint64_t tasks_executed() const;
  std::uint64_t modelled_busy_ns() const;  // sum of task durations
  std::uint64_t last_task_end_ns() const;  // latest modelled end over all streams

 private:
  friend class Event;
  struct StreamState {
    std::uint64_t enqueued = 0;   // host side, under mutex_
    std::uint64_t completed = 0;  // worker side, under mutex_
    std::uint64_t last_end_ns = 0;
    std::uint64_t wait_until_ns = 0;  // from event waits, applies to the next task
    // The lowest sequence number a host thread waits for, under mutex_ (Note [Completion wake-ups]).
    std::uint64_t awaited = UINT64_MAX;
  };

  std::uint64_t enqueue(std::unique_ptr<Task> task);  // returns the task's sequence number on its stream
  void worker_loop();
  void execute(Task& task);
  void wait_for(std::uint32_t stream_id, std::uint64_t seq);  // host side, counts as blocked
  void collect_retired();
  void raise_fault();  // host side: throws the pending kernel fault, if any, and clears it
  // Host side, after a wait: its clock moves to when the device finished plus spec.sync_latency_ns.
  void resume_host_at(std::uint64_t device_done_ns) const;
  void check_stream(std::uint32_t stream_id) const;
  void check_own_stream(const Stream& stream) const;  // a copy on another device's stream is an error
  static void on_memory_event(void* user, const MemoryEvent& event, const MemoryStats& stats);

  const int id_;
  const DeviceSpec spec_;
  CachingAllocator memory_;
  std::unique_ptr<SharedL2Residency> l2_;
  PrecisionMode precision_mode_;
  OverflowMode overflow_mode_;
  bool golden_ = false;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  // Note [Worker wake-ups] in device.cpp: tasks ever queued (written under mutex_, read by the
  // spinning worker without it), and whether the worker sleeps on work_cv_ (under mutex_).
  std::atomic<std::uint64_t> queued_total_{0};
  bool worker_sleeping_ = false;
  std::vector<std::unique_ptr<Task>> retired_;
  std::vector<StreamState> streams_;
  std::uint64_t tasks_executed_ = 0;
  std::uint64_t busy_ns_ = 0;
  std::uint64_t last_end_ns_ = 0;
  std::uint64_t last_memory_ns_ = 0;  // guarded by the allocator's lock (on_memory_event)
  bool float_status_ = false;
  std::string fault_;  // the first kernel fault not yet reported, under mutex_ (Note [Kernel faults])
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace npuscope::emulator
