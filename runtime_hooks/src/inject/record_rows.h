// The row each record kind becomes, where one record makes one row (Note [Record kinds] in
// hook_api.h): to_row(record, strings). The drain thread (row_builder.cpp) batches what these return
// by row type. The kinds it pairs, extends, merges or counts instead are handled there: API calls and
// markers (pairing), memory (the allocator's order), devices and ranks (written at once), overflows
// (counted), tensors (compressed) and a collective's links (entries of their own).
//
// Inline, in one header: the drain thread turns millions of records into rows, and a row built here
// is built in place in its batch.
#pragma once

#include "npuscope/collector/trace_rows.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "string_table.h"

namespace npuscope::inject {

inline collector::TaskRow to_row(const hooks::TaskRecord& r, StringTable& strings) {
  const StringTable::SignatureIds inputs = strings.signature(r.input_signature);
  const StringTable::SignatureIds outputs = strings.signature(r.output_signature);
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .start_ns = static_cast<std::int64_t>(r.start_ns),
          .end_ns = static_cast<std::int64_t>(r.end_ns),
          .queued_ns = static_cast<std::int64_t>(r.queued_ns),
          .device_id = r.device_id,
          .stream_id = static_cast<std::int32_t>(r.stream_id),
          .name_id = strings.id(r.name),
          .op_type_id = strings.id(r.op_type),
          .task_type = static_cast<std::int32_t>(r.task_type),
          .connection_id = static_cast<std::int64_t>(r.connection_id),
          .block_dim = static_cast<std::int32_t>(r.block_dim),
          .flops = static_cast<std::int64_t>(r.flops),
          .bytes = static_cast<std::int64_t>(r.bytes),
          .overflow = r.overflow,
          .fallback = r.fallback,
          .compute_dtype = r.compute_dtype,
          .call_index = static_cast<std::int32_t>(r.call_index),
          .emulation_ns = static_cast<std::int64_t>(r.emulation_ns),
          .thread_id = static_cast<std::int32_t>(r.launch_thread),
          .input_shapes_id = inputs.shapes,
          .input_dtypes_id = inputs.dtypes,
          .pytorch_api_id = static_cast<std::int64_t>(r.host_op_id),
          .underflow = r.underflow,
          .subnormal = r.subnormal,
          .input_formats_id = inputs.formats,
          .output_shapes_id = outputs.shapes,
          .output_dtypes_id = outputs.dtypes,
          .output_formats_id = outputs.formats};
}

// Its seq is the record's low 32 bits; the drain thread extends them (RowBuilder::memory_seq).
inline collector::MemoryRow to_row(const hooks::MemoryRecord& r, StringTable&) {
  return {.ts_ns = static_cast<std::int64_t>(r.ts_ns),
          .device_id = r.device_id,
          .op = static_cast<std::int32_t>(r.op),
          .address = static_cast<std::int64_t>(r.address),
          .bytes = static_cast<std::int64_t>(r.bytes),
          .allocated_bytes = static_cast<std::int64_t>(r.allocated_bytes),
          .reserved_bytes = static_cast<std::int64_t>(r.reserved_bytes),
          .thread_id = static_cast<std::int32_t>(r.thread_id),
          .seq = r.seq};
}

inline collector::MemcpyRow to_row(const hooks::MemcpyRecord& r, StringTable&) {
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .start_ns = static_cast<std::int64_t>(r.start_ns),
          .end_ns = static_cast<std::int64_t>(r.end_ns),
          .queued_ns = static_cast<std::int64_t>(r.queued_ns),
          .device_id = r.device_id,
          .stream_id = static_cast<std::int32_t>(r.stream_id),
          .bytes = static_cast<std::int64_t>(r.bytes),
          .copy_kind = static_cast<std::int32_t>(r.kind),
          .connection_id = static_cast<std::int64_t>(r.connection_id)};
}

inline collector::PytorchApiRow to_row(const hooks::HostOpRecord& r, StringTable& strings) {
  const StringTable::SignatureIds inputs = strings.signature(r.input_signature);
  return {.id = static_cast<std::int64_t>(r.id),
          .start_ns = static_cast<std::int64_t>(r.start_ns),
          .end_ns = static_cast<std::int64_t>(r.end_ns),
          .thread_id = static_cast<std::int32_t>(r.thread_id),
          .name_id = strings.id(r.name),
          .kind = static_cast<std::int32_t>(r.kind),
          .pass = static_cast<std::int32_t>(r.pass),
          .module_id = strings.id(r.module),
          .sequence_number = r.sequence_number,
          .fwd_thread_id = static_cast<std::int32_t>(r.fwd_thread_id),
          .input_shapes_id = inputs.shapes,
          .input_dtypes_id = inputs.dtypes,
          .parent_id = static_cast<std::int64_t>(r.parent_id),
          .stack_id = strings.id(r.stack),
          .args_id = strings.id(r.args)};
}

inline collector::GradientRow to_row(const hooks::GradientRecord& r, StringTable& strings) {
  return {.ts_ns = static_cast<std::int64_t>(r.ts_ns),
          .step = r.step,
          .param_id = strings.id(r.param),
          .numel = r.numel,
          .norm = r.norm,
          .max = r.max,
          .min = r.min,
          .mean = r.mean,
          .zero_ratio = r.zero_ratio,
          .nan_count = r.nan_count,
          .inf_count = r.inf_count,
          .loss_scale = r.loss_scale,
          .thread_id = static_cast<std::int32_t>(r.thread_id)};
}

inline collector::LossScaleRow to_row(const hooks::LossScaleRecord& r, StringTable&) {
  return {.ts_ns = static_cast<std::int64_t>(r.ts_ns),
          .step = r.step,
          .scale = r.scale,
          .next_scale = r.next_scale,
          .skipped = r.skipped,
          .thread_id = static_cast<std::int32_t>(r.thread_id)};
}

inline collector::OpCheckRow to_row(const hooks::OpCheckRecord& r, StringTable&) {
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .output = r.output,
          .dtype = r.dtype,
          .standard = static_cast<std::int32_t>(r.standard),
          .status = static_cast<std::int32_t>(r.status),
          .numel = r.numel,
          .max_abs_err = r.max_abs_err,
          .max_rel_err = r.max_rel_err,
          .mean_rel_err = r.mean_rel_err,
          .rmse = r.rmse,
          .small_value_err_ratio = r.small_value_err_ratio,
          .error_balance = r.error_balance,
          .ulp_err_ratio = r.ulp_err_ratio,
          .failing_ratio = r.failing_ratio,
          .worst_index = r.worst_index,
          .npu_value = r.npu_value,
          .golden_value = r.golden_value};
}

// ---- custom kernels (Note [Kernel detail records] in hook_api.h) ----------------------------------

inline collector::KernelBlockRow to_row(const hooks::KernelBlockRecord& r, StringTable&) {
  collector::KernelBlockRow row{.task_id = static_cast<std::int64_t>(r.task_id),
                                .block = static_cast<std::int32_t>(r.block),
                                .core = static_cast<std::int32_t>(r.core),
                                .start_ns = static_cast<std::int64_t>(r.start_ns),
                                .end_ns = static_cast<std::int64_t>(r.end_ns),
                                .cycles = static_cast<std::int64_t>(r.cycles),
                                .mte2_vector_overlap_cycles = static_cast<std::int64_t>(r.mte2_vector_overlap_cycles),
                                .instructions = r.instructions,
                                .gm_copies = r.gm_copies,
                                .unaligned_gm_copies = r.unaligned_gm_copies,
                                .ub_bytes = r.ub_bytes,
                                .ub_capacity = r.ub_capacity};
  for (int p = 0; p < kNumPipes; ++p) row.busy(static_cast<Pipe>(p)) = static_cast<std::int64_t>(r.busy_cycles[p]);
  return row;
}

inline collector::PipeInstructionRow to_row(const hooks::PipeInstructionRecord& r, StringTable& strings) {
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .block = static_cast<std::int32_t>(r.block),
          .pipe = static_cast<std::int32_t>(r.pipe),
          .start_ns = static_cast<std::int64_t>(r.start_ns),
          .end_ns = static_cast<std::int64_t>(r.end_ns),
          .start_cycle = static_cast<std::int64_t>(r.start_cycle),
          .end_cycle = static_cast<std::int64_t>(r.end_cycle),
          .bytes = static_cast<std::int64_t>(r.bytes),
          .name_id = strings.id(r.name),
          .file_id = strings.id(r.file),
          .line = static_cast<std::int32_t>(r.line)};
}

inline collector::KernelFindingRow to_row(const hooks::KernelFindingRecord& r, StringTable& strings) {
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .check_kind = static_cast<std::int32_t>(r.check),
          .block = r.block,
          .kernel_id = strings.id(r.kernel),
          .instruction_id = strings.id(r.instruction),
          .file_id = strings.id(r.file),
          .line = static_cast<std::int32_t>(r.line),
          .message_id = strings.id(r.message)};
}

// ---- many ranks (Note [Collective records] in hook_api.h) ----------------------------------------

inline collector::CommunicationRow to_row(const hooks::CollectiveRecord& r, StringTable&) {
  return {.task_id = static_cast<std::int64_t>(r.task_id),
          .communicator_id = static_cast<std::int64_t>(r.communicator_id),
          .sequence = static_cast<std::int32_t>(r.sequence),
          .kind = static_cast<std::int32_t>(r.kind),
          .algorithm = static_cast<std::int32_t>(r.algorithm),
          .reduce_op = static_cast<std::int32_t>(r.reduce_op),
          .dtype = static_cast<std::int32_t>(r.dtype),
          .bytes = static_cast<std::int64_t>(r.bytes),
          .root_or_peer = r.root_or_peer,
          .last_rank = r.last_rank,
          .arrival_ns = static_cast<std::int64_t>(r.arrival_ns),
          .start_ns = static_cast<std::int64_t>(r.start_ns),
          .end_ns = static_cast<std::int64_t>(r.end_ns)};
}

inline collector::CommunicatorRow to_row(const hooks::CommunicatorRecord& r, StringTable& strings) {
  return {.communicator_id = static_cast<std::int64_t>(r.communicator_id),
          .name_id = strings.id(r.name),
          .rank = r.rank,
          .size = r.size,
          .members_id = strings.id(r.members),
          .nodes_id = strings.id(r.nodes)};
}

}  // namespace npuscope::inject
