// The "hccl" backend of torch.distributed on the emulated NPU: a c10d::ProcessGroup whose collectives
// on privateuseone tensors are the emulator's (emulator/collectives.h), with the bytes carried by
// torch's own gloo. Python registers it (npuscope.distributed); users write
// `dist.init_process_group("hccl")` under torchrun, as torch_npu's users do.
//
// Note [The hccl process group]
// A collective call queues one emulator task (HCCL task type, the link model's time, the wait for
// the last rank) on the calling thread's current stream of the tensor's device, then a device copy
// of its result into the caller's tensor: torch's collectives write in place, the emulator's return
// new tensors. Nothing blocks the host. The device runs its tasks in launch order (Note [Device
// worker]), so every later op on the tensor, a host read included, sees the result; the Work is
// therefore complete when it is returned, and its future (DDP's comm hook reads it) holds the output
// tensors. barrier() is the exception: its wait() waits for the device, as a barrier must.
// The emulator reduces in rank order, so every rank gets bitwise the same result. The transport is
// an inner ProcessGroupGloo made by Python with the same store, rank and size (gloo's CPU tensors
// wrap the emulator's byte buffers); the emulator calls it from the device's worker thread, never
// with the GIL. Collectives run on the caller's stream, not a dedicated HCCL stream as torch_npu's
// do: DDP's all-reduce does not overlap the backward pass in modelled time.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace npuscope::pytorch {

class ProcessGroupHCCL : public c10d::ProcessGroup {
 public:
  // The world's communicator, as HCCL names it (a sub-group's name comes from its ranks).
  static constexpr const char* kWorldGroupName = "hccl_world_group";

  // `inner` carries the bytes (a ProcessGroupGloo of the same ranks). `name` is the communicator's
  // name, the same on every member ("hccl_world_group", "group_0_2"); `global_ranks` the members'
  // world ranks in group rank order. Collective over the members (the emulator's communicator meets
  // every rank's clock), so every member constructs its group at the same point.
  ProcessGroupHCCL(c10::intrusive_ptr<c10d::ProcessGroup> inner, int rank, int size, std::string name,
                   std::vector<int> global_ranks);
  ~ProcessGroupHCCL() override;

  const std::string getBackendName() const override { return "hccl"; }
  const std::string& name() const;
  const std::vector<int>& global_ranks() const;
  const std::vector<int>& nodes() const;  // each member's emulated server

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;

  struct State;

 private:
  std::unique_ptr<State> state_;
  std::mutex mutex_;  // one thread issues at a time: the communicator numbers its collectives
};

}  // namespace npuscope::pytorch
