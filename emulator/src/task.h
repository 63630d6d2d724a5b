// A unit of work on a device queue (see Note [Device worker] in device.h). Private to the emulator.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator {

struct EventState {
  Device* device = nullptr;
  std::uint32_t stream = 0;
  std::uint64_t seq = 0;      // the record task's sequence number on its stream (0: never recorded)
  std::uint64_t time_ns = 0;  // written by the worker when the record task runs
};

struct Task {
  enum class Kind : std::uint8_t { kKernel, kMemcpy, kEventRecord, kEventWait };
  Kind kind = Kind::kKernel;
  std::uint32_t stream = 0;
  std::uint64_t seq = 0;
  std::uint64_t task_id = 0;
  std::uint64_t connection_id = 0;
  std::uint64_t queued_ns = 0;
  std::uint64_t duration_ns = 0;  // from the cost model, computed at launch
  std::uint64_t start_ns = 0;     // kKernel, kMemcpy: set by the worker when it takes the task
  std::uint32_t block_dim = 0;
  std::uint32_t launch_thread = 0;  // vclock::thread_index() of the launching host thread
  std::uint64_t host_op_id = 0;     // the framework op open on that thread (Note [Host ops])

  // kKernel
  KernelLaunch kernel;
  // kMemcpy
  CopyKind copy_kind = CopyKind::kHostToDevice;
  std::uint64_t bytes = 0;
  std::function<void()> copy;
  // kEventRecord / kEventWait
  std::shared_ptr<EventState> event;
};

// Process-wide ids.
std::uint64_t next_task_id();
std::uint64_t next_connection_id();

// Sends a TensorRecord per defined tensor to the subscriber (which must want tensors).
void emit_tensor_records(const hooks::SubscriberTable* s, std::uint64_t task_id, const std::vector<Tensor>& tensors,
                         TensorRole role);

}  // namespace npuscope::emulator
