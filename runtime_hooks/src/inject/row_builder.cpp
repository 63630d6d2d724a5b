// See Note [Pairing on the drain thread] in row_builder.h.
#include "row_builder.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>

namespace npuscope::inject {
namespace {

constexpr std::size_t kBatchRows = 4096;  // a flush per full batch, besides the one per round
constexpr int kZstdLevel = 1;             // fast: the drain thread must keep up with the workload
// Bounds on a thread's open API calls and ranges, and on how deep an exit looks for its enter:
// nesting is shallow in practice, and broken pairing (lost records) must not cost O(n) per record.
constexpr std::size_t kMaxOpen = 256;
constexpr std::size_t kMaxSearch = 64;

template <class Row>
void flush_rows(std::vector<Row>& rows, void (collector::TraceWriter::*add)(std::span<const Row>),
                collector::TraceWriter& w) {
  if (rows.empty()) return;
  (w.*add)(std::span<const Row>(rows));
  rows.clear();
}

std::string shape_string(const TensorEntry& e) {
  std::string s;
  for (int d = 0; d < e.ndim; ++d) {
    if (d > 0) s += ',';
    s += std::to_string(e.dims[d]);
  }
  return s;
}

}  // namespace

RowBuilder::RowBuilder(collector::TraceWriter& writer, ChunkPool& pool)
    : writer_(writer), pool_(pool), strings_(writer), zstd_(ZSTD_createCCtx()) {}

RowBuilder::~RowBuilder() { ZSTD_freeCCtx(zstd_); }

void RowBuilder::add(Tag tag, const Slot* s) {
  counters_.records++;
  switch (tag) {
    case Tag::kApi: return on_api(entry_at<ApiEntry>(s).r);
    case Tag::kTaskEnd: return on_task(entry_at<TaskEndEntry>(s));
    case Tag::kMemory: return on_memory(entry_at<MemoryEntry>(s).r);
    case Tag::kMemcpy: return on_memcpy(entry_at<MemcpyEntry>(s).r);
    case Tag::kMarker: return on_marker(entry_at<MarkerEntry>(s).r);
    case Tag::kOverflow: return on_overflow(entry_at<OverflowEntry>(s).r);
    case Tag::kDevice: return on_device(entry_at<DeviceEntry>(s).r);
    case Tag::kTensor: return on_tensor(entry_at<TensorEntry>(s));
    case Tag::kHostOp: return on_host_op(entry_at<HostOpEntry>(s).r);
    case Tag::kGradient: return on_gradient(entry_at<GradientEntry>(s).r);
    case Tag::kLossScale: return on_loss_scale(entry_at<LossScaleEntry>(s).r);
    case Tag::kOpCheck: return on_op_check(entry_at<OpCheckEntry>(s).r);
    case Tag::kKernelBlock: return on_kernel_block(entry_at<KernelBlockEntry>(s).r);
    case Tag::kPipeInstruction: return on_pipe_instruction(entry_at<PipeInstructionEntry>(s).r);
    case Tag::kKernelFinding: return on_kernel_finding(entry_at<KernelFindingEntry>(s).r);
    case Tag::kCollective: return on_collective(entry_at<CollectiveEntry>(s).r);
    case Tag::kCommLink: return on_comm_link(entry_at<CommLinkEntry>(s));
    case Tag::kCommunicator: return on_communicator(entry_at<CommunicatorEntry>(s).r);
    case Tag::kRank: return on_rank(entry_at<RankEntry>(s).r);
  }
}

RowBuilder::ThreadOpen& RowBuilder::open_for(std::uint32_t thread_id, std::uint64_t ts_ns) {
  if (last_open_ == nullptr || last_open_thread_ != thread_id) {  // a thread's records come in runs
    last_open_ = &open_[thread_id];                               // stable: the map's nodes never move
    last_open_thread_ = thread_id;
  }
  ThreadOpen& t = *last_open_;
  if (ts_ns > t.last_ts) t.last_ts = ts_ns;
  return t;
}

// ---- API calls ------------------------------------------------------------------------------------

void RowBuilder::on_api(const hooks::ApiRecord& r) {
  ThreadOpen& t = open_for(r.thread_id, r.ts_ns);
  if (r.is_exit == 0) {
    if (t.api.size() == kMaxOpen) {  // the oldest open call will never be closed: count it
      add_api_row(t.api.front(), t.api.front().ts_ns, r.thread_id);
      t.api.erase(t.api.begin());
      counters_.unpaired_api++;
    }
    t.api.push_back(r);
    return;
  }
  // The partner is normally on top; calls left open above it (never exited) end with it.
  const std::size_t lowest = t.api.size() > kMaxSearch ? t.api.size() - kMaxSearch : 0;
  for (std::size_t i = t.api.size(); i-- > lowest;) {
    if (t.api[i].connection_id != r.connection_id) continue;
    for (std::size_t j = t.api.size() - 1; j > i; --j) {
      counters_.unpaired_api++;
      add_api_row(t.api[j], r.ts_ns, r.thread_id);
    }
    add_api_row(t.api[i], r.ts_ns, r.thread_id);
    t.api.resize(i);
    return;
  }
  if (r.start_ns != 0) {  // the usual case: enters are not recorded, the exit says when the call began
    hooks::ApiRecord enter = r;
    enter.ts_ns = r.start_ns;
    add_api_row(enter, r.ts_ns, r.thread_id);
    return;
  }
  counters_.unpaired_api++;  // an exit whose enter was never recorded (dropped, or before init)
}

void RowBuilder::add_api_row(const hooks::ApiRecord& enter, std::uint64_t end_ns, std::uint32_t thread_id) {
  collector::ApiRow& row = apis_.emplace_back();  // filled in place: no row copied through the stack
  row.start_ns = static_cast<std::int64_t>(enter.ts_ns);
  row.end_ns = static_cast<std::int64_t>(end_ns);
  row.name_id = strings_.id(enter.name);
  row.connection_id = static_cast<std::int64_t>(enter.connection_id);
  row.thread_id = static_cast<std::int32_t>(thread_id);
  row.kind = static_cast<std::int32_t>(enter.kind);
  if (apis_.size() >= kBatchRows) flush_rows(apis_, &collector::TraceWriter::add_apis, writer_);
}

// ---- tasks, memory, copies, devices -----------------------------------------------------------------

void RowBuilder::on_task(const TaskEndEntry& e) {
  const hooks::TaskRecord& r = e.r;
  collector::TaskRow& row = tasks_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  row.queued_ns = static_cast<std::int64_t>(r.queued_ns);
  row.device_id = r.device_id;
  row.stream_id = static_cast<std::int32_t>(r.stream_id);
  row.name_id = strings_.id(r.name);
  row.op_type_id = strings_.id(r.op_type);
  row.task_type = static_cast<std::int32_t>(r.task_type);
  row.connection_id = static_cast<std::int64_t>(r.connection_id);
  row.block_dim = static_cast<std::int32_t>(r.block_dim);
  row.flops = static_cast<std::int64_t>(r.flops);
  row.bytes = static_cast<std::int64_t>(r.bytes);
  row.overflow = r.overflow;
  row.fallback = r.fallback;
  row.compute_dtype = r.compute_dtype;
  row.call_index = static_cast<std::int32_t>(r.call_index);
  row.emulation_ns = static_cast<std::int64_t>(r.emulation_ns);
  row.thread_id = static_cast<std::int32_t>(r.launch_thread);
  const StringTable::SignatureIds inputs = strings_.signature(r.input_signature);
  row.input_shapes_id = inputs.shapes;
  row.input_dtypes_id = inputs.dtypes;
  row.pytorch_api_id = static_cast<std::int64_t>(r.host_op_id);
  row.underflow = r.underflow;
  counters_.underflow_tasks += r.underflow != 0 ? 1 : 0;
  row.subnormal = r.subnormal;
  if (tasks_.size() >= kBatchRows) flush_rows(tasks_, &collector::TraceWriter::add_tasks, writer_);
}

void RowBuilder::on_memory(const hooks::MemoryRecord& r) {
  collector::MemoryRow& row = memory_.emplace_back();
  row.ts_ns = static_cast<std::int64_t>(r.ts_ns);
  row.device_id = r.device_id;
  row.op = static_cast<std::int32_t>(r.op);
  row.address = static_cast<std::int64_t>(r.address);
  row.bytes = static_cast<std::int64_t>(r.bytes);
  row.allocated_bytes = static_cast<std::int64_t>(r.allocated_bytes);
  row.reserved_bytes = static_cast<std::int64_t>(r.reserved_bytes);
  row.thread_id = static_cast<std::int32_t>(r.thread_id);
  row.seq = memory_seq(r.device_id, r.seq);
  if (memory_.size() >= kBatchRows) flush_rows(memory_, &collector::TraceWriter::add_memory, writer_);
}

// The record's 32-bit seq extended to 64 bits: the device's records reach us out of allocator order
// only by the few in flight in other threads' buffers, far less than 2^31 apart, so the nearest
// 64-bit value to the last one seen with these low bits is the one.
std::int64_t RowBuilder::memory_seq(std::int32_t device_id, std::uint32_t seq) {
  auto it = std::find_if(memory_seqs_.begin(), memory_seqs_.end(), [&](const auto& d) { return d.first == device_id; });
  if (it == memory_seqs_.end()) {  // the device's first record: its low bits are all there is to go on
    memory_seqs_.emplace_back(device_id, std::int64_t{seq});
    return seq;
  }
  const std::int64_t last = it->second;
  const auto delta = static_cast<std::int32_t>(seq - static_cast<std::uint32_t>(last));
  const std::int64_t extended = last + delta;
  if (extended > last) it->second = extended;
  return extended;
}

void RowBuilder::on_memcpy(const hooks::MemcpyRecord& r) {
  collector::MemcpyRow& row = memcpys_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  row.queued_ns = static_cast<std::int64_t>(r.queued_ns);
  row.device_id = r.device_id;
  row.stream_id = static_cast<std::int32_t>(r.stream_id);
  row.bytes = static_cast<std::int64_t>(r.bytes);
  row.copy_kind = static_cast<std::int32_t>(r.kind);
  row.connection_id = static_cast<std::int64_t>(r.connection_id);
  if (memcpys_.size() >= kBatchRows) flush_rows(memcpys_, &collector::TraceWriter::add_memcpys, writer_);
}

void RowBuilder::on_overflow(const hooks::OverflowRecord& r) {
  // TASK.overflow already says which task overflowed; the saturated flag is only counted.
  counters_.overflow_tasks++;
  if (r.saturated != 0) counters_.saturated_tasks++;
}

void RowBuilder::on_device(const hooks::DeviceRecord& r) {
  collector::DeviceInfoRow row;
  row.device_id = r.device_id;
  row.name = r.name != nullptr ? r.name : "";
  row.cube_cores = r.cube_cores;
  row.vector_cores = r.vector_cores;
  row.clock_hz = r.clock_hz;
  row.cube_peak_flops = r.cube_peak_flops;
  row.vector_peak_flops = r.vector_peak_flops;
  row.memory_bandwidth = r.memory_bandwidth;
  row.memory_bytes = static_cast<std::int64_t>(r.memory_bytes);
  row.cube_ceiling_flops = r.cube_ceiling_flops;
  row.vector_ceiling_flops = r.vector_ceiling_flops;
  row.memory_ceiling_bandwidth = r.memory_ceiling_bandwidth;
  row.cube_f32_rate = r.cube_f32_rate;
  row.precision_mode = r.precision_mode != nullptr ? r.precision_mode : "";
  row.overflow_mode = r.overflow_mode != nullptr ? r.overflow_mode : "";
  // The emulator announces its devices again when the runtime is reconfigured: one row per change.
  const auto key = [](const collector::DeviceInfoRow& d) {
    return std::tie(d.device_id, d.name, d.cube_cores, d.vector_cores, d.clock_hz, d.cube_peak_flops,
                    d.vector_peak_flops, d.memory_bandwidth, d.memory_bytes, d.precision_mode, d.overflow_mode,
                    d.cube_ceiling_flops, d.vector_ceiling_flops, d.memory_ceiling_bandwidth, d.cube_f32_rate);
  };
  for (const auto& d : devices_) {
    if (key(d) == key(row)) return;
  }
  devices_.push_back(row);
  writer_.add_device(row);
  // A golden run's trace says so (Note [Golden run] in emulator/runtime.h), whatever reads it later.
  if (r.golden != 0) writer_.set_meta(collector::kMetaGolden, "1");
  wrote_ = true;
}

// ---- markers and steps ------------------------------------------------------------------------------

void RowBuilder::on_marker(const hooks::MarkerRecord& r) {
  ThreadOpen& t = open_for(r.thread_id, r.ts_ns);
  switch (r.kind) {
    case hooks::MarkerEvent::kRangePush:
      if (t.ranges.size() == kMaxOpen) {  // as for API calls: the oldest open range is given up
        add_range_row(t.ranges.front(), t.ranges.front().ts_ns, r.thread_id);
        t.ranges.erase(t.ranges.begin());
        counters_.unpaired_markers++;
      }
      t.ranges.push_back({r.ts_ns, r.name});
      return;
    case hooks::MarkerEvent::kRangePop:
      if (t.ranges.empty()) {
        counters_.unpaired_markers++;
        return;
      }
      add_range_row(t.ranges.back(), r.ts_ns, r.thread_id);
      t.ranges.pop_back();
      return;
    case hooks::MarkerEvent::kStepBegin:
      if (t.in_step) add_step_row(t, r.ts_ns, r.thread_id);  // a new step ends the previous one
      t.in_step = true;
      t.step_ts = r.ts_ns;
      t.step = r.step;
      return;
    case hooks::MarkerEvent::kStepEnd:
      if (!t.in_step) {
        counters_.unpaired_markers++;
        return;
      }
      add_step_row(t, r.ts_ns, r.thread_id);
      t.in_step = false;
      return;
  }
}

void RowBuilder::add_range_row(const OpenRange& open, std::uint64_t end_ns, std::uint32_t thread_id) {
  collector::MarkerRow row;
  row.start_ns = static_cast<std::int64_t>(open.ts_ns);
  row.end_ns = static_cast<std::int64_t>(end_ns);
  row.name_id = strings_.id(open.name);
  row.thread_id = static_cast<std::int32_t>(thread_id);
  row.kind = static_cast<std::int32_t>(MarkerKind::kRange);
  row.step = -1;
  markers_.push_back(row);
}

void RowBuilder::add_step_row(const ThreadOpen& t, std::uint64_t end_ns, std::uint32_t thread_id) {
  collector::MarkerRow row;
  row.start_ns = static_cast<std::int64_t>(t.step_ts);
  row.end_ns = static_cast<std::int64_t>(end_ns);
  row.name_id = strings_.id_of_content("step " + std::to_string(t.step));
  row.thread_id = static_cast<std::int32_t>(thread_id);
  row.kind = static_cast<std::int32_t>(MarkerKind::kStep);
  row.step = t.step;
  markers_.push_back(row);
}

// ---- framework ops ---------------------------------------------------------------------------------

void RowBuilder::on_host_op(const hooks::HostOpRecord& r) {
  collector::PytorchApiRow& row = host_ops_.emplace_back();
  row.id = static_cast<std::int64_t>(r.id);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  row.thread_id = static_cast<std::int32_t>(r.thread_id);
  row.name_id = strings_.id(r.name);
  row.kind = static_cast<std::int32_t>(r.kind);
  row.pass = static_cast<std::int32_t>(r.pass);
  row.module_id = strings_.id(r.module);
  row.sequence_number = r.sequence_number;
  row.fwd_thread_id = static_cast<std::int32_t>(r.fwd_thread_id);
  const StringTable::SignatureIds inputs = strings_.signature(r.input_signature);
  row.input_shapes_id = inputs.shapes;
  row.input_dtypes_id = inputs.dtypes;
  row.parent_id = static_cast<std::int64_t>(r.parent_id);
  if (host_ops_.size() >= kBatchRows) flush_rows(host_ops_, &collector::TraceWriter::add_pytorch_apis, writer_);
}

// ---- training: gradients, loss scaling, op checks ----------------------------------------------------

void RowBuilder::on_gradient(const hooks::GradientRecord& r) {
  collector::GradientRow& row = gradients_.emplace_back();
  row.ts_ns = static_cast<std::int64_t>(r.ts_ns);
  row.step = r.step;
  row.param_id = strings_.id(r.param);
  row.numel = r.numel;
  row.norm = r.norm;
  row.max = r.max;
  row.min = r.min;
  row.mean = r.mean;
  row.zero_ratio = r.zero_ratio;
  row.nan_count = r.nan_count;
  row.inf_count = r.inf_count;
  row.loss_scale = r.loss_scale;
  row.thread_id = static_cast<std::int32_t>(r.thread_id);
  if (gradients_.size() >= kBatchRows) flush_rows(gradients_, &collector::TraceWriter::add_gradients, writer_);
}

void RowBuilder::on_loss_scale(const hooks::LossScaleRecord& r) {
  loss_scales_.push_back({static_cast<std::int64_t>(r.ts_ns), r.step, r.scale, r.next_scale, r.skipped,
                          static_cast<std::int32_t>(r.thread_id)});
}

void RowBuilder::on_op_check(const hooks::OpCheckRecord& r) {
  collector::OpCheckRow& row = op_checks_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.output = r.output;
  row.dtype = r.dtype;
  row.standard = static_cast<std::int32_t>(r.standard);
  row.status = static_cast<std::int32_t>(r.status);
  row.numel = r.numel;
  row.max_abs_err = r.max_abs_err;
  row.max_rel_err = r.max_rel_err;
  row.mean_rel_err = r.mean_rel_err;
  row.rmse = r.rmse;
  row.small_value_err_ratio = r.small_value_err_ratio;
  row.error_balance = r.error_balance;
  row.ulp_err_ratio = r.ulp_err_ratio;
  row.failing_ratio = r.failing_ratio;
  row.worst_index = r.worst_index;
  row.npu_value = r.npu_value;
  row.golden_value = r.golden_value;
  if (op_checks_.size() >= kBatchRows) flush_rows(op_checks_, &collector::TraceWriter::add_op_checks, writer_);
}

// ---- custom kernels (Note [Kernel detail records]) -------------------------------------------------

void RowBuilder::on_kernel_block(const hooks::KernelBlockRecord& r) {
  collector::KernelBlockRow& row = kernel_blocks_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.block = static_cast<std::int32_t>(r.block);
  row.core = static_cast<std::int32_t>(r.core);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  row.cycles = static_cast<std::int64_t>(r.cycles);
  for (int p = 0; p < kNumPipes; ++p) row.busy(static_cast<Pipe>(p)) = static_cast<std::int64_t>(r.busy_cycles[p]);
  row.mte2_vector_overlap_cycles = static_cast<std::int64_t>(r.mte2_vector_overlap_cycles);
  row.instructions = r.instructions;
  row.gm_copies = r.gm_copies;
  row.unaligned_gm_copies = r.unaligned_gm_copies;
  row.ub_bytes = r.ub_bytes;
  row.ub_capacity = r.ub_capacity;
  if (kernel_blocks_.size() >= kBatchRows)
    flush_rows(kernel_blocks_, &collector::TraceWriter::add_kernel_blocks, writer_);
}

void RowBuilder::on_pipe_instruction(const hooks::PipeInstructionRecord& r) {
  collector::PipeInstructionRow& row = pipe_instructions_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.block = static_cast<std::int32_t>(r.block);
  row.pipe = static_cast<std::int32_t>(r.pipe);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  row.start_cycle = static_cast<std::int64_t>(r.start_cycle);
  row.end_cycle = static_cast<std::int64_t>(r.end_cycle);
  row.bytes = static_cast<std::int64_t>(r.bytes);
  row.name_id = strings_.id(r.name);
  row.file_id = strings_.id(r.file);
  row.line = static_cast<std::int32_t>(r.line);
  if (pipe_instructions_.size() >= kBatchRows)
    flush_rows(pipe_instructions_, &collector::TraceWriter::add_pipe_instructions, writer_);
}

void RowBuilder::on_kernel_finding(const hooks::KernelFindingRecord& r) {
  collector::KernelFindingRow& row = kernel_findings_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.check_kind = static_cast<std::int32_t>(r.check);
  row.block = r.block;
  row.kernel_id = strings_.id(r.kernel);
  row.instruction_id = strings_.id(r.instruction);
  row.file_id = strings_.id(r.file);
  row.line = static_cast<std::int32_t>(r.line);
  row.message_id = strings_.id(r.message);
}

// ---- many ranks (Note [Collective records] in hook_api.h) ----------------------------------------

void RowBuilder::on_collective(const hooks::CollectiveRecord& r) {
  collector::CommunicationRow& row = communications_.emplace_back();
  row.task_id = static_cast<std::int64_t>(r.task_id);
  row.communicator_id = static_cast<std::int64_t>(r.communicator_id);
  row.sequence = static_cast<std::int32_t>(r.sequence);
  row.kind = static_cast<std::int32_t>(r.kind);
  row.algorithm = static_cast<std::int32_t>(r.algorithm);
  row.reduce_op = static_cast<std::int32_t>(r.reduce_op);
  row.dtype = static_cast<std::int32_t>(r.dtype);
  row.bytes = static_cast<std::int64_t>(r.bytes);
  row.root_or_peer = r.root_or_peer;
  row.last_rank = r.last_rank;
  row.arrival_ns = static_cast<std::int64_t>(r.arrival_ns);
  row.start_ns = static_cast<std::int64_t>(r.start_ns);
  row.end_ns = static_cast<std::int64_t>(r.end_ns);
  if (communications_.size() >= kBatchRows)
    flush_rows(communications_, &collector::TraceWriter::add_communications, writer_);
}

void RowBuilder::on_comm_link(const CommLinkEntry& e) {
  collector::CommunicationLinkRow& row = communication_links_.emplace_back();
  row.task_id = static_cast<std::int64_t>(e.task_id);
  row.peer_rank = e.r.peer_rank;
  row.transport = static_cast<std::int32_t>(e.r.transport);
  row.bytes = static_cast<std::int64_t>(e.r.bytes);
  row.time_ns = static_cast<std::int64_t>(e.r.time_ns);
  if (communication_links_.size() >= kBatchRows)
    flush_rows(communication_links_, &collector::TraceWriter::add_communication_links, writer_);
}

void RowBuilder::on_communicator(const hooks::CommunicatorRecord& r) {
  collector::CommunicatorRow& row = communicators_.emplace_back();
  row.communicator_id = static_cast<std::int64_t>(r.communicator_id);
  row.name_id = strings_.id(r.name);
  row.rank = r.rank;
  row.size = r.size;
  row.members_id = strings_.id(r.members);
  row.nodes_id = strings_.id(r.nodes);
}

void RowBuilder::on_rank(const hooks::RankRecord& r) {
  writer_.set_meta(collector::kMetaRank, std::to_string(r.rank));
  writer_.set_meta(collector::kMetaWorldSize, std::to_string(r.world_size));
  writer_.set_meta(collector::kMetaNode, std::to_string(r.node));
  writer_.set_meta(collector::kMetaLocalRank, std::to_string(r.local_rank));
  if (r.hostname != nullptr) writer_.set_meta(collector::kMetaHostname, r.hostname);
  if (r.launcher != nullptr) writer_.set_meta(collector::kMetaLauncher, r.launcher);
  wrote_ = true;
}

// ---- tensors --------------------------------------------------------------------------------------

void RowBuilder::on_tensor(const TensorEntry& e) {
  collector::TensorRow& row = tensor_;
  row.task_id = static_cast<std::int64_t>(e.task_id);
  row.role = e.role;
  row.idx = e.index;
  row.dtype = e.dtype;
  row.shape = shape_string(e);
  row.numel = e.stats.numel;
  row.min = e.stats.min;
  row.max = e.stats.max;
  row.mean = e.stats.mean;
  row.l2norm = e.stats.l2norm;
  row.nan_count = e.stats.nan_count;
  row.inf_count = e.stats.inf_count;
  row.address = static_cast<std::int64_t>(e.address);
  row.data.clear();
  row.data_bytes = 0;
  if (e.data != nullptr) {
    row.data.resize(ZSTD_compressBound(e.data_bytes));
    const std::size_t n = ZSTD_compressCCtx(zstd_, row.data.data(), row.data.size(), e.data, e.data_bytes, kZstdLevel);
    std::free(e.data);
    pool_.unreserve_bytes(e.data_bytes);
    if (ZSTD_isError(n)) throw collector::TraceError(std::string("zstd: ") + ZSTD_getErrorName(n));
    row.data.resize(n);
    row.data_bytes = static_cast<std::int64_t>(e.data_bytes);
    counters_.tensors_dumped++;
    counters_.tensor_bytes_dumped += row.data_bytes;
    counters_.tensor_bytes_compressed += static_cast<std::int64_t>(n);
  }
  writer_.add_tensor(row);
  wrote_ = true;
}

// ---- batches --------------------------------------------------------------------------------------

void RowBuilder::flush() {
  const bool any = !tasks_.empty() || !apis_.empty() || !memory_.empty() || !memcpys_.empty() || !markers_.empty() ||
                   !host_ops_.empty() || !gradients_.empty() || !loss_scales_.empty() || !op_checks_.empty() ||
                   !kernel_blocks_.empty() || !pipe_instructions_.empty() || !kernel_findings_.empty() ||
                   !communicators_.empty() || !communications_.empty() || !communication_links_.empty();
  flush_rows(tasks_, &collector::TraceWriter::add_tasks, writer_);
  flush_rows(apis_, &collector::TraceWriter::add_apis, writer_);
  flush_rows(memory_, &collector::TraceWriter::add_memory, writer_);
  flush_rows(memcpys_, &collector::TraceWriter::add_memcpys, writer_);
  flush_rows(markers_, &collector::TraceWriter::add_markers, writer_);
  flush_rows(host_ops_, &collector::TraceWriter::add_pytorch_apis, writer_);
  flush_rows(gradients_, &collector::TraceWriter::add_gradients, writer_);
  flush_rows(loss_scales_, &collector::TraceWriter::add_loss_scales, writer_);
  flush_rows(op_checks_, &collector::TraceWriter::add_op_checks, writer_);
  flush_rows(kernel_blocks_, &collector::TraceWriter::add_kernel_blocks, writer_);
  flush_rows(pipe_instructions_, &collector::TraceWriter::add_pipe_instructions, writer_);
  flush_rows(kernel_findings_, &collector::TraceWriter::add_kernel_findings, writer_);
  flush_rows(communicators_, &collector::TraceWriter::add_communicators, writer_);
  flush_rows(communications_, &collector::TraceWriter::add_communications, writer_);
  flush_rows(communication_links_, &collector::TraceWriter::add_communication_links, writer_);
  if (any) wrote_ = true;
}

void RowBuilder::finish() {
  for (auto& [thread_id, t] : open_) {
    for (const auto& a : t.api) add_api_row(a, t.last_ts, thread_id);
    for (const auto& m : t.ranges) add_range_row(m, t.last_ts, thread_id);
    if (t.in_step) add_step_row(t, t.last_ts, thread_id);
    counters_.unpaired_api += static_cast<std::int64_t>(t.api.size());
    counters_.unpaired_markers += static_cast<std::int64_t>(t.ranges.size()) + (t.in_step ? 1 : 0);
    t = ThreadOpen{};
  }
  flush();
}

}  // namespace npuscope::inject
