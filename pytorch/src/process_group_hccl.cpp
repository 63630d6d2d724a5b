// See process_group_hccl.h (Note [The hccl process group]).
#include "npuscope/pytorch/process_group_hccl.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <utility>

#include "gloo_transport.h"
#include "npu_device.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/runtime_hooks/launcher_env.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {

struct ProcessGroupHCCL::State {
  std::string name;
  std::vector<int> global_ranks, nodes;
  std::unique_ptr<emulator::Communicator> comm;
};

namespace {

// Complete when returned (Note [The hccl process group]); a barrier's wait() waits for the device.
class WorkHCCL final : public c10d::Work {
 public:
  WorkHCCL(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::optional<emulator::Stream> wait_for = std::nullopt)
      : c10d::Work(rank, type),
        outputs_(std::move(outputs)),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))),
        wait_for_(wait_for) {
    future_->markCompleted(c10::IValue(outputs_));  // DDP's comm hook takes [0], the reduced bucket
    finish();
  }

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  void synchronize() override {  // c10d::Work::wait calls it
    if (!wait_for_) return;
    NPUSCOPE_TORCH_TRY
    wait_for_->synchronize();  // raises a collective's fault (a mismatch between ranks) too
    NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::barrier")
  }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::optional<emulator::Stream> wait_for_;
};

c10::intrusive_ptr<c10d::Work> done(int rank, c10d::OpType type, std::vector<at::Tensor> outputs) {
  return c10::make_intrusive<WorkHCCL>(rank, type, std::move(outputs));
}

void check_tensor(const at::Tensor& t, const char* op, const char* which) {
  TORCH_CHECK(t.defined(), "ProcessGroupHCCL::", op, ": ", which, " is an undefined tensor");
  TORCH_CHECK(t.device().type() == kNpu, "ProcessGroupHCCL::", op, ": ", which, " is on ", t.device().str(),
              "; the hccl backend runs collectives on the emulated NPU: move the tensor there first "
              "(tensor.npu(), or tensor.to(\"privateuseone\"))");
  TORCH_CHECK(t.layout() == at::kStrided, "ProcessGroupHCCL::", op, ": ", which, " must be a dense tensor, not ",
              t.layout());
}

// The one tensor of a tensor list (one device per process, as with torch_npu's HCCL).
at::Tensor& single(std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupHCCL::", op, ": expects one tensor, got ", tensors.size(),
              " (one device per process)");
  check_tensor(tensors[0], op, "the tensor");
  return tensors[0];
}

void check_same(const at::Tensor& t, const at::Tensor& like, const char* op, const char* which, std::int64_t numel) {
  check_tensor(t, op, which);
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "ProcessGroupHCCL::", op, ": ", which, " is ", t.scalar_type(),
              " but the input is ", like.scalar_type());
  TORCH_CHECK(t.device() == like.device(), "ProcessGroupHCCL::", op, ": ", which, " is on ", t.device().str(),
              " but the input is on ", like.device().str());
  TORCH_CHECK(t.numel() == numel, "ProcessGroupHCCL::", op, ": ", which, " has ", t.numel(), " elements where ", numel,
              " are expected");
}

// The calling thread's current stream of `t`'s device: where the collective is queued.
emulator::Stream stream_of(const at::Tensor& t) { return emulator_stream(current_stream(device_index(t))); }

// `t` as the emulator's contiguous input (a device copy first when `t` is a view with gaps).
emulator::Tensor input_of(const at::Tensor& t, const char* op) {
  checked_emulator_dtype(t.scalar_type(), op);
  return borrow(contiguous(t, op));
}

npuscope::ReduceOp reduce_op(const c10d::ReduceOp& op, const char* what) {
  switch (op) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::AVG: return npuscope::ReduceOp::kSum;  // AVG: the sum, divided after
    case c10d::ReduceOp::PRODUCT: return npuscope::ReduceOp::kProd;
    case c10d::ReduceOp::MIN: return npuscope::ReduceOp::kMin;
    case c10d::ReduceOp::MAX: return npuscope::ReduceOp::kMax;
    default:
      TORCH_CHECK(false, "ProcessGroupHCCL::", what, ": reduce op ", static_cast<int>(op.op_),
                  " is not supported (SUM, AVG, PRODUCT, MIN and MAX are; HCCL has no bitwise reductions)");
  }
  return npuscope::ReduceOp::kNone;  // not reached
}

// Fills `dst` (any strides) from `src`'s bytes at `offset`: a device copy queued on `stream`.
void write_back(const at::Tensor& dst, const emulator::Tensor& src, std::size_t offset, emulator::Stream stream,
                const char* op) {
  if (dst.numel() == 0) return;
  OutputSlot slot(dst, op);
  const emulator::Tensor target = borrow(slot.tensor());
  NPUSCOPE_TORCH_TRY
  stream.device->memcpy_d2d(target.storage()->device_address(), src.storage()->device_address() + offset,
                            target.nbytes(), stream,
                            std::make_shared<std::pair<emulator::Tensor, emulator::Tensor>>(target, src));
  NPUSCOPE_TORCH_CATCH(op)
  slot.finish();
}

int ranks_per_node() {
  const int spec_default = emulator_device(current_device()).spec().ranks_per_node;
  NPUSCOPE_TORCH_TRY
  return emulator::ranks_per_node_from_environment(spec_default);
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL")
}

// Which rank of which job this process is, for the trace (a RankRecord): the world group's.
void announce_rank(int rank, int world_size, int per_node) {
  emulator::RankInfo info;
  info.rank = rank;
  info.world_size = world_size;
  info.node = rank / per_node;
  info.local_rank = rank % per_node;
  // torchrun's RANK (and any env:// launch); a world made by hand (a store given to
  // init_process_group) has no launcher to name.
  const auto launched = launcher::rank_from_environment();
  info.launcher = launched ? launched->launcher : "torch.distributed";
  emulator::announce_rank(info);
}

}  // namespace

ProcessGroupHCCL::ProcessGroupHCCL(c10::intrusive_ptr<c10d::ProcessGroup> inner, int rank, int size, std::string name,
                                   std::vector<int> global_ranks)
    : c10d::ProcessGroup(rank, size), state_(std::make_unique<State>()) {
  TORCH_CHECK(inner, "ProcessGroupHCCL: no inner process group to carry the data");
  TORCH_CHECK(inner->getRank() == rank && inner->getSize() == size, "ProcessGroupHCCL: the inner ",
              inner->getBackendName(), " group is rank ", inner->getRank(), " of ", inner->getSize(), ", not ", rank,
              " of ", size);
  TORCH_CHECK(static_cast<int>(global_ranks.size()) == size, "ProcessGroupHCCL '", name, "': ", global_ranks.size(),
              " global ranks given for a group of ", size);
  const int per_node = ranks_per_node();
  state_->name = std::move(name);
  state_->global_ranks = std::move(global_ranks);
  for (int g : state_->global_ranks) state_->nodes.push_back(g / per_node);
  if (state_->name == kWorldGroupName) announce_rank(rank, size, per_node);
  NPUSCOPE_TORCH_TRY
  state_->comm = std::make_unique<emulator::Communicator>(
      gloo_transport(std::move(inner)),
      emulator::CommunicatorInfo{state_->name, state_->global_ranks, emulator::CommTopology{state_->nodes}},
      emulator::AlgorithmChoice::from_environment());
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL")
  init();
}

ProcessGroupHCCL::~ProcessGroupHCCL() = default;

const std::string& ProcessGroupHCCL::name() const { return state_->name; }
const std::vector<int>& ProcessGroupHCCL::global_ranks() const { return state_->global_ranks; }
const std::vector<int>& ProcessGroupHCCL::nodes() const { return state_->nodes; }

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "broadcast");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "ProcessGroupHCCL::broadcast: root ", opts.rootRank,
              " is not a rank of the group of ", size_);
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(t);
  NPUSCOPE_TORCH_TRY
  const emulator::Tensor out =
      state_->comm->broadcast(input_of(t, "broadcast"), static_cast<int>(opts.rootRank), stream);
  if (rank_ != opts.rootRank) write_back(t, out, 0, stream, "broadcast");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::broadcast")
  return done(rank_, c10d::OpType::BROADCAST, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "allreduce");
  const npuscope::ReduceOp op = reduce_op(opts.reduceOp, "allreduce");
  const bool average = opts.reduceOp == c10d::ReduceOp::AVG;
  TORCH_CHECK(!average || at::isFloatingType(t.scalar_type()),
              "ProcessGroupHCCL::allreduce: AVG needs a floating "
              "point tensor, not ",
              t.scalar_type());
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(t);
  NPUSCOPE_TORCH_TRY
  write_back(t, state_->comm->all_reduce(input_of(t, "allreduce"), op, stream), 0, stream, "allreduce");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::allreduce")
  if (average) t.div_(size_);
  return done(rank_, c10d::OpType::ALLREDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "reduce");
  const npuscope::ReduceOp op = reduce_op(opts.reduceOp, "reduce");
  TORCH_CHECK(opts.reduceOp != c10d::ReduceOp::AVG, "ProcessGroupHCCL::reduce: AVG is for allreduce only");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "ProcessGroupHCCL::reduce: root ", opts.rootRank,
              " is not a rank of the group of ", size_);
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(t);
  NPUSCOPE_TORCH_TRY
  // An all-reduce whose result only the root keeps (the emulator has no rooted reduction).
  const emulator::Tensor out = state_->comm->all_reduce(input_of(t, "reduce"), op, stream);
  if (rank_ == opts.rootRank) write_back(t, out, 0, stream, "reduce");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::reduce")
  return done(rank_, c10d::OpType::REDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "ProcessGroupHCCL::allgather: expects one list of ", size_, " output tensors");
  for (const at::Tensor& o : outputs[0]) check_same(o, in, "allgather", "an output", in.numel());
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(in);
  NPUSCOPE_TORCH_TRY
  const emulator::Tensor input = input_of(in, "allgather");
  const emulator::Tensor out = state_->comm->all_gather(input, stream);
  for (int r = 0; r < size_; ++r) write_back(outputs[0][r], out, r * input.nbytes(), stream, "allgather");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::allgather")
  return done(rank_, c10d::OpType::ALLGATHER, outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions&) {
  check_tensor(input, "_allgather_base", "the input");
  check_same(output, input, "_allgather_base", "the output", input.numel() * size_);
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(input);
  NPUSCOPE_TORCH_TRY
  write_back(output, state_->comm->all_gather(input_of(input, "_allgather_base"), stream), 0, stream,
             "_allgather_base");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::_allgather_base")
  return done(rank_, c10d::OpType::_ALLGATHER_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "ProcessGroupHCCL::reduce_scatter: expects one list of ", size_, " input tensors");
  for (const at::Tensor& i : inputs[0]) check_same(i, out, "reduce_scatter", "an input", out.numel());
  // The inputs, rank after rank, in one buffer on the device: the emulator scatters its first dim.
  at::Tensor flat = at::empty({size_ * out.numel()}, out.options());
  for (int r = 0; r < size_; ++r) flat.narrow(0, r * out.numel(), out.numel()).copy_(inputs[0][r].reshape({-1}));
  return _reduce_scatter_base(out, flat, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  check_tensor(output, "reduce_scatter", "the output");
  check_same(input, output, "reduce_scatter", "the input", output.numel() * size_);
  const npuscope::ReduceOp op = reduce_op(opts.reduceOp, "reduce_scatter");
  const bool average = opts.reduceOp == c10d::ReduceOp::AVG;
  TORCH_CHECK(!average || at::isFloatingType(output.scalar_type()),
              "ProcessGroupHCCL::reduce_scatter: AVG needs a floating point tensor, not ", output.scalar_type());
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(output);
  NPUSCOPE_TORCH_TRY
  const emulator::Tensor flat = input_of(input, "reduce_scatter").view({size_ * output.numel()});
  write_back(output, state_->comm->reduce_scatter(flat, op, stream), 0, stream, "reduce_scatter");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::reduce_scatter")
  if (average) output.div_(size_);
  return done(rank_, c10d::OpType::_REDUCE_SCATTER_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& output_split_sizes,
                                                               std::vector<int64_t>& input_split_sizes,
                                                               const c10d::AllToAllOptions&) {
  check_tensor(input, "alltoall_base", "the input");
  check_same(output, input, "alltoall_base", "the output", input.numel());
  TORCH_CHECK(output_split_sizes.empty() && input_split_sizes.empty(),
              "ProcessGroupHCCL::alltoall_base: only equal splits are supported (HcclAlltoAll); pass no split sizes");
  TORCH_CHECK(input.numel() % size_ == 0, "ProcessGroupHCCL::alltoall_base: ", input.numel(),
              " elements do not split into ", size_, " equal chunks");
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(input);
  NPUSCOPE_TORCH_TRY
  const emulator::Tensor flat = input_of(input, "alltoall_base").view({input.numel()});
  write_back(output, state_->comm->all_to_all(flat, stream), 0, stream, "alltoall_base");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::alltoall_base")
  return done(rank_, c10d::OpType::ALLTOALL_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::send(std::vector<at::Tensor>& tensors, int dst_rank, int) {
  at::Tensor& t = single(tensors, "send");
  std::lock_guard lock(mutex_);
  NPUSCOPE_TORCH_TRY
  state_->comm->send(input_of(t, "send"), dst_rank, stream_of(t));
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::send")
  return done(rank_, c10d::OpType::SEND, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::recv(std::vector<at::Tensor>& tensors, int src_rank, int) {
  at::Tensor& t = single(tensors, "recv");
  const emulator::DType dtype = checked_emulator_dtype(t.scalar_type(), "recv");
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = stream_of(t);
  NPUSCOPE_TORCH_TRY
  const emulator::Tensor out =
      state_->comm->recv(emulator::Shape(t.sizes().begin(), t.sizes().end()), dtype, src_rank, stream);
  write_back(t, out, 0, stream, "recv");
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::recv")
  return done(rank_, c10d::OpType::RECV, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::barrier(const c10d::BarrierOptions& opts) {
  const int device = opts.device_ids.empty() ? current_device() : static_cast<int>(opts.device_ids[0]);
  std::lock_guard lock(mutex_);
  const emulator::Stream stream = emulator_stream(current_stream(device));
  NPUSCOPE_TORCH_TRY
  state_->comm->barrier(stream);
  NPUSCOPE_TORCH_CATCH("ProcessGroupHCCL::barrier")
  return c10::make_intrusive<WorkHCCL>(rank_, c10d::OpType::BARRIER, std::vector<at::Tensor>{}, stream);
}

}  // namespace npuscope::pytorch
