// The descriptors of every trace table. See Note [One table, declared once] in schema.h.
#include "schema.h"

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

namespace npuscope::collector::schema {
namespace {

// The number of members of an aggregate: the largest N for which Row{any, any, ...} compiles.
struct AnyMember {
  template <class T>
  operator T() const;  // never defined: only used in unevaluated requires-expressions
};
template <std::size_t>
using AnyAt = AnyMember;

template <class Row, std::size_t N>
constexpr bool brace_initializable_with() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return requires { Row{AnyAt<I>{}...}; };
  }
  (std::make_index_sequence<N>{});
}

template <class Row, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (brace_initializable_with<Row, N + 1>()) {
    return member_count<Row, N + 1>();
  } else {
    return N;
  }
}

// The columns name each member of Row exactly once.
template <class Row, std::size_t N>
constexpr bool covers_each_member_once(const Column<Row> (&columns)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (columns[i].field == columns[j].field || columns[i].name == columns[j].name) return false;
    }
  }
  return N == member_count<Row>();
}

template <class Row>
Table<Row> make_table(TableInfo info, std::span<const Column<Row>> columns) {
  Table<Row> table{std::move(info), {}};
  for (const Column<Row>& c : columns) {
    table.info.columns.push_back({c.name, kSqlTypeOfField[c.field.index()], c.doc});
    table.fields.push_back(c.field);
  }
  return table;
}

constexpr Column<MetaRow> kMetaColumns[] = {
    {"key", &MetaRow::key, "What the value is: see the META keys below."},
    {"value", &MetaRow::value, "The value, as text (counters in decimal)."},
};
static_assert(covers_each_member_once(kMetaColumns));

constexpr Column<StringRow> kStringColumns[] = {
    {"id", &StringRow::id, "The id other tables store in their `*_id` columns (1, 2, ...; 0 means no string)."},
    {"value", &StringRow::value, "The string (op names, op types, API names, marker names)."},
};
static_assert(covers_each_member_once(kStringColumns));

constexpr Column<DeviceInfoRow> kDeviceColumns[] = {
    {"device_id", &DeviceInfoRow::device_id, "Device index (`npu:N`); joins TASK.device_id."},
    {"name", &DeviceInfoRow::name, "Device spec preset (`ascend910b`, ...) or spec file."},
    {"cube_cores", &DeviceInfoRow::cube_cores, "AI cores with a cube (matrix) unit."},
    {"vector_cores", &DeviceInfoRow::vector_cores, "Vector cores."},
    {"clock_hz", &DeviceInfoRow::clock_hz, "Core clock (Hz)."},
    {"cube_peak_flops", &DeviceInfoRow::cube_peak_flops, "Peak f16 cube throughput of the device (FLOP/s)."},
    {"vector_peak_flops", &DeviceInfoRow::vector_peak_flops,
     "Peak f16 vector throughput of the device (FLOP/s; f32 at half)."},
    {"memory_bandwidth", &DeviceInfoRow::memory_bandwidth, "Device memory (HBM) bandwidth (bytes/s)."},
    {"memory_bytes", &DeviceInfoRow::memory_bytes, "Device memory capacity (bytes)."},
    {"precision_mode", &DeviceInfoRow::precision_mode,
     "Precision mode in force (`force_fp16`, `allow_mix_precision`, ...); `golden` in a golden run (META `golden`)."},
    {"overflow_mode", &DeviceInfoRow::overflow_mode, "Overflow mode in force: `inf_nan` or `saturation`."},
    {"cube_ceiling_flops", &DeviceInfoRow::cube_ceiling_flops,
     "Achievable f16 cube throughput (FLOP/s): the peak times the calibrated cube efficiency; 0 before schema 8."},
    {"vector_ceiling_flops", &DeviceInfoRow::vector_ceiling_flops,
     "Achievable f16 vector throughput (FLOP/s): the peak times the vector efficiency; 0 before schema 8."},
    {"memory_ceiling_bandwidth", &DeviceInfoRow::memory_ceiling_bandwidth,
     "Effective HBM bandwidth (bytes/s): the specified one times the measured efficiency; 0 before schema 8."},
    {"cube_f32_rate", &DeviceInfoRow::cube_f32_rate,
     "f32 cube throughput as a fraction of f16's (HF32 on 910B); 0 before schema 8 (read as 0.25)."},
};
static_assert(covers_each_member_once(kDeviceColumns));

constexpr Column<ApiRow> kApiColumns[] = {
    {"start_ns", &ApiRow::start_ns, "Host time the call was entered (ns)."},
    {"end_ns", &ApiRow::end_ns, "Host time the call returned (ns)."},
    {"name_id", &ApiRow::name_id, "API name (STRING_IDS.id), e.g. `aclnnMatMul`, `aclrtSynchronizeStream`."},
    {"connection_id", &ApiRow::connection_id,
     "Joins the call to the device work it launched (TASK.connection_id, MEMCPY.connection_id); 0 if none."},
    {"thread_id", &ApiRow::thread_id, "Host thread (small per-process index)."},
    {"kind", &ApiRow::kind, "What the call does (launch, synchronize, memcpy, ...): see Enumerations: api_kind."},
    {"level", &ApiRow::level,
     "The layer it belongs to (acl, node, hccl, runtime, driver, ...): see Enumerations: api_level; 0 before "
     "schema 13."},
};
static_assert(covers_each_member_once(kApiColumns));

constexpr Column<TaskRow> kTaskColumns[] = {
    {"task_id", &TaskRow::task_id, "Task id, unique in the process, in launch order; TENSOR.task_id refers to it."},
    {"start_ns", &TaskRow::start_ns, "Modelled device start (ns)."},
    {"end_ns", &TaskRow::end_ns, "Modelled device end (ns); the task's duration is end_ns - start_ns."},
    {"queued_ns", &TaskRow::queued_ns, "Host time of the launch (ns); start_ns - queued_ns is the time it waited."},
    {"device_id", &TaskRow::device_id, "Device index (`npu:N`); -1 for the `cpu` golden backend."},
    {"stream_id", &TaskRow::stream_id, "Stream the task ran on."},
    {"name_id", &TaskRow::name_id, "Op instance name (STRING_IDS.id), e.g. `layer0/attn/MatMul`."},
    {"op_type_id", &TaskRow::op_type_id, "Op type (STRING_IDS.id), e.g. `MatMul`."},
    {"task_type", &TaskRow::task_type, "Unit the task ran on: see Enumerations: task_type."},
    {"connection_id", &TaskRow::connection_id, "The host API call that launched it (API.connection_id); 0 if none."},
    {"block_dim", &TaskRow::block_dim, "Number of blocks (cores) the kernel was split over."},
    {"flops", &TaskRow::flops, "Floating-point operations of the kernel (cost model)."},
    {"bytes", &TaskRow::bytes, "Bytes the kernel read and wrote in device memory (cost model)."},
    {"overflow", &TaskRow::overflow, "1 if any output overflowed (inf/NaN, or clamped in saturation mode), else 0."},
    {"fallback", &TaskRow::fallback, "1 if the op had no NPU kernel and its CPU kernel ran as an AI_CPU task, else 0."},
    {"compute_dtype", &TaskRow::compute_dtype, "dtype the kernel computed in: see Enumerations: dtype."},
    {"call_index", &TaskRow::call_index, "n-th call (from 0) of this op name in the process: matches ops across runs."},
    {"emulation_ns", &TaskRow::emulation_ns,
     "Real CPU time the emulator spent on the kernel (ns): the emulator's own cost, not device time."},
    {"thread_id", &TaskRow::thread_id, "Host thread that launched it (small per-process index)."},
    {"input_shapes_id", &TaskRow::input_shapes_id,
     "The kernel's input shapes (STRING_IDS.id), msprof's Input Shapes: `8,3,224,224;64,3,7,7;` (`;` between inputs, "
     "an absent optional input empty); 0 when not recorded."},
    {"input_dtypes_id", &TaskRow::input_dtypes_id,
     "The kernel's input dtypes (STRING_IDS.id), msprof's Input Data Types: `f32;f32;`; 0 when not recorded."},
    {"pytorch_api_id", &TaskRow::pytorch_api_id,
     "The framework op that launched it (PYTORCH_API.id: the innermost aten op, module or autograd function open on "
     "the launching thread); 0 if none."},
    {"underflow", &TaskRow::underflow,
     "Output elements underflowed: finite and non-zero before the result was narrowed to f16/bf16 (the compute "
     "dtype of a lowered op, or the output dtype), zero after it; 0 if none. Beside overflow: such values are lost "
     "without an inf or NaN."},
    {"subnormal", &TaskRow::subnormal,
     "Output elements narrowed to f16/bf16 that are subnormal (below 6.1e-5 in f16: fewer significant bits); 0 if "
     "none."},
    {"input_formats_id", &TaskRow::input_formats_id,
     "The kernel's input formats (STRING_IDS.id) as a real profile records them (`NC1HWC0;FRACTAL_Z;`); 0 when "
     "not recorded."},
    {"output_shapes_id", &TaskRow::output_shapes_id,
     "The kernel's output shapes (STRING_IDS.id), as input_shapes_id; 0 when not recorded."},
    {"output_dtypes_id", &TaskRow::output_dtypes_id,
     "The kernel's output dtypes (STRING_IDS.id), as input_dtypes_id; 0 when not recorded."},
    {"output_formats_id", &TaskRow::output_formats_id,
     "The kernel's output formats (STRING_IDS.id), as input_formats_id; 0 when not recorded."},
};
static_assert(covers_each_member_once(kTaskColumns));

constexpr Column<TaskExecRow> kTaskExecColumns[] = {
    {"task_id", &TaskExecRow::task_id, "As TASK.task_id."},
    {"start_ns", &TaskExecRow::start_ns, "As TASK.start_ns."},
    {"end_ns", &TaskExecRow::end_ns, "As TASK.end_ns."},
    {"queued_ns", &TaskExecRow::queued_ns, "As TASK.queued_ns."},
    {"device_id", &TaskExecRow::device_id, "As TASK.device_id."},
    {"stream_id", &TaskExecRow::stream_id, "As TASK.stream_id."},
    {"kernel_id", &TaskExecRow::kernel_id, "What ran (KERNEL.kernel_id): its name, type, unit and costs."},
    {"connection_id", &TaskExecRow::connection_id, "As TASK.connection_id."},
    {"overflow", &TaskExecRow::overflow, "As TASK.overflow."},
    {"call_index", &TaskExecRow::call_index, "As TASK.call_index."},
    {"emulation_ns", &TaskExecRow::emulation_ns, "As TASK.emulation_ns."},
    {"thread_id", &TaskExecRow::thread_id, "As TASK.thread_id."},
    {"pytorch_api_id", &TaskExecRow::pytorch_api_id, "As TASK.pytorch_api_id."},
    {"underflow", &TaskExecRow::underflow, "As TASK.underflow."},
    {"subnormal", &TaskExecRow::subnormal, "As TASK.subnormal."},
};
static_assert(covers_each_member_once(kTaskExecColumns));

constexpr Column<KernelRow> kKernelColumns[] = {
    {"kernel_id", &KernelRow::kernel_id, "Kernel id (1, 2, ...), TASK_EXEC.kernel_id refers to it."},
    {"name_id", &KernelRow::name_id, "As TASK.name_id."},
    {"op_type_id", &KernelRow::op_type_id, "As TASK.op_type_id."},
    {"task_type", &KernelRow::task_type, "As TASK.task_type."},
    {"block_dim", &KernelRow::block_dim, "As TASK.block_dim."},
    {"flops", &KernelRow::flops, "As TASK.flops."},
    {"bytes", &KernelRow::bytes, "As TASK.bytes."},
    {"compute_dtype", &KernelRow::compute_dtype, "As TASK.compute_dtype."},
    {"fallback", &KernelRow::fallback, "As TASK.fallback."},
    {"input_shapes_id", &KernelRow::input_shapes_id, "As TASK.input_shapes_id."},
    {"input_dtypes_id", &KernelRow::input_dtypes_id, "As TASK.input_dtypes_id."},
    {"input_formats_id", &KernelRow::input_formats_id, "As TASK.input_formats_id."},
    {"output_shapes_id", &KernelRow::output_shapes_id, "As TASK.output_shapes_id."},
    {"output_dtypes_id", &KernelRow::output_dtypes_id, "As TASK.output_dtypes_id."},
    {"output_formats_id", &KernelRow::output_formats_id, "As TASK.output_formats_id."},
};
static_assert(covers_each_member_once(kKernelColumns));

constexpr Column<TensorRow> kTensorColumns[] = {
    {"task_id", &TensorRow::task_id, "The task that read or produced the tensor (TASK.task_id)."},
    {"role", &TensorRow::role, "Input or output of the task: see Enumerations: role."},
    {"idx", &TensorRow::idx, "Position among the task's inputs (or outputs), from 0."},
    {"dtype", &TensorRow::dtype, "Element type: see Enumerations: dtype."},
    {"shape", &TensorRow::shape, "Dimensions, comma-separated (`2,3,4`; empty for a scalar)."},
    {"numel", &TensorRow::numel, "Number of elements."},
    {"min", &TensorRow::min, "Smallest finite element (0 if none)."},
    {"max", &TensorRow::max, "Largest finite element (0 if none)."},
    {"mean", &TensorRow::mean, "Mean of the finite elements."},
    {"l2norm", &TensorRow::l2norm, "L2 norm of the finite elements."},
    {"nan_count", &TensorRow::nan_count, "Number of NaN elements."},
    {"inf_count", &TensorRow::inf_count, "Number of +inf and -inf elements."},
    {"data", &TensorRow::data,
     "The raw elements (row-major, little-endian, dtype-sized), zstd-compressed; empty unless tensors were dumped."},
    {"data_bytes", &TensorRow::data_bytes, "Size of `data` once decompressed (bytes); 0 when not dumped."},
    {"address", &TensorRow::address,
     "Address of the tensor's first element as the kernel saw it: equal addresses are one buffer (a task's output "
     "another task read, if no task wrote it in between); 0 when not recorded."},
    {"crc32", &TensorRow::crc32,
     "Under `npuscope run --dump md5` (META config's \"dump\"): the CRC-32 of the raw elements as zlib computes "
     "it, msprobe's summary_mode md5 (8 hex digits in its dump.json); 0 otherwise."},
};
static_assert(covers_each_member_once(kTensorColumns));

constexpr Column<MemoryRow> kMemoryColumns[] = {
    {"ts_ns", &MemoryRow::ts_ns, "Host time of the operation (ns)."},
    {"device_id", &MemoryRow::device_id, "Device whose memory it is."},
    {"op", &MemoryRow::op, "What happened: see Enumerations: memory_op."},
    {"address", &MemoryRow::address, "Device address of the block (alloc/free) or segment (reserve/release)."},
    {"bytes", &MemoryRow::bytes, "Size of the block or segment (bytes)."},
    {"allocated_bytes", &MemoryRow::allocated_bytes, "Bytes allocated to tensors on the device after the operation."},
    {"reserved_bytes", &MemoryRow::reserved_bytes,
     "Bytes the caching allocator holds from the device after the operation (allocated + cached)."},
    {"thread_id", &MemoryRow::thread_id, "Host thread (small per-process index)."},
    {"seq", &MemoryRow::seq,
     "The operation's place in its device's allocator order (1, 2, ...): orders operations with equal ts_ns "
     "(host threads can stamp the same time). Schema 3 and older traces read it as the row's insertion order."},
};
static_assert(covers_each_member_once(kMemoryColumns));

constexpr Column<MemcpyRow> kMemcpyColumns[] = {
    {"task_id", &MemcpyRow::task_id, "Task id (same numbering as TASK.task_id)."},
    {"start_ns", &MemcpyRow::start_ns, "Modelled start of the copy (ns)."},
    {"end_ns", &MemcpyRow::end_ns, "Modelled end of the copy (ns)."},
    {"queued_ns", &MemcpyRow::queued_ns, "Host time the copy was issued (ns)."},
    {"device_id", &MemcpyRow::device_id, "Device index."},
    {"stream_id", &MemcpyRow::stream_id, "Stream the copy ran on."},
    {"bytes", &MemcpyRow::bytes, "Bytes copied."},
    {"copy_kind", &MemcpyRow::copy_kind, "Direction: see Enumerations: copy_kind."},
    {"connection_id", &MemcpyRow::connection_id, "The host API call that issued it (API.connection_id); 0 if none."},
};
static_assert(covers_each_member_once(kMemcpyColumns));

constexpr Column<MarkerRow> kMarkerColumns[] = {
    {"start_ns", &MarkerRow::start_ns, "Host time the range was pushed (ns)."},
    {"end_ns", &MarkerRow::end_ns, "Host time it was popped (ns); equal to start_ns for an instant."},
    {"name_id", &MarkerRow::name_id, "Marker name (STRING_IDS.id); 0 for an unnamed step."},
    {"thread_id", &MarkerRow::thread_id, "Host thread (small per-process index)."},
    {"kind", &MarkerRow::kind, "Range or step: see Enumerations: marker_kind."},
    {"step", &MarkerRow::step, "Step number for a step marker, -1 for a plain range."},
};
static_assert(covers_each_member_once(kMarkerColumns));

constexpr Column<CompareResultRow> kCompareResultColumns[] = {
    {"task_id", &CompareResultRow::task_id, "The NPU task (TASK.task_id) whose tensor was compared."},
    {"golden_task_id", &CompareResultRow::golden_task_id, "The golden trace's task it was paired with; 0 if none."},
    {"name_id", &CompareResultRow::name_id, "Op instance name (STRING_IDS.id)."},
    {"op_type_id", &CompareResultRow::op_type_id, "Op type (STRING_IDS.id)."},
    {"call_index", &CompareResultRow::call_index, "n-th call of the op name (TASK.call_index)."},
    {"role", &CompareResultRow::role, "Input or output: see Enumerations: role."},
    {"idx", &CompareResultRow::idx, "Position among the op's inputs (or outputs)."},
    {"verdict", &CompareResultRow::verdict, "msprobe's verdict: see Enumerations: verdict."},
    {"origin", &CompareResultRow::origin,
     "Whether the op introduced or inherited its error: see Enumerations: origin."},
    {"cosine", &CompareResultRow::cosine, "Cosine similarity with the golden tensor; NULL when it does not apply."},
    {"max_abs_err", &CompareResultRow::max_abs_err, "Largest absolute error."},
    {"max_rel_err", &CompareResultRow::max_rel_err, "Largest relative error."},
    {"one_thousandth_ratio", &CompareResultRow::one_thousandth_ratio,
     "Fraction of elements with relative error < 0.001."},
    {"five_thousandth_ratio", &CompareResultRow::five_thousandth_ratio, "Fraction with relative error < 0.005."},
    {"rmse", &CompareResultRow::rmse, "Root mean square error."},
    {"rel_euclidean", &CompareResultRow::rel_euclidean, "Relative Euclidean distance ||n - b|| / ||b||."},
    {"allclose", &CompareResultRow::allclose,
     "1 if within torch.testing's tolerance for the golden dtype, 0 if not, -1 not compared."},
    {"reason_id", &CompareResultRow::reason_id, "Why it failed or was not compared (STRING_IDS.id); 0 if it passed."},
};
static_assert(covers_each_member_once(kCompareResultColumns));

constexpr Column<PytorchApiRow> kPytorchApiColumns[] = {
    {"id", &PytorchApiRow::id,
     "The op's id (1, 2, ... in the process); TASK.pytorch_api_id and parent_id refer to it."},
    {"start_ns", &PytorchApiRow::start_ns, "Host time the op began (ns)."},
    {"end_ns", &PytorchApiRow::end_ns, "Host time it returned (ns)."},
    {"thread_id", &PytorchApiRow::thread_id, "Host thread (small per-process index, as API.thread_id)."},
    {"name_id", &PytorchApiRow::name_id,
     "Name (STRING_IDS.id): `aten::addmm`, `Module.layer1.0.conv1.Conv2d.forward.0`, `Optimizer.step#SGD.step`, "
     "`autograd::engine::evaluate_function: AddmmBackward0`."},
    {"kind", &PytorchApiRow::kind, "What the op is: see Enumerations: host_op_kind."},
    {"pass", &PytorchApiRow::pass, "Forward, backward or optimizer: see Enumerations: pass."},
    {"module_id", &PytorchApiRow::module_id,
     "The module call it ran in, as msprobe names it (STRING_IDS.id): `Module.layer1.0.conv1.Conv2d.forward.0`, or "
     "`...backward.0` for the autograd functions of that call's ops; 0 outside any module."},
    {"sequence_number", &PytorchApiRow::sequence_number,
     "Autograd's sequence number: a forward op and the backward function of the node it made share it; -1 if none."},
    {"fwd_thread_id", &PytorchApiRow::fwd_thread_id,
     "Backward functions: the host thread of the forward op (with sequence_number, finds it); else thread_id."},
    {"input_shapes_id", &PytorchApiRow::input_shapes_id,
     "Input shapes (STRING_IDS.id) as TASK.input_shapes_id; 0 if none."},
    {"input_dtypes_id", &PytorchApiRow::input_dtypes_id, "Input dtypes (STRING_IDS.id) as TASK.input_dtypes_id."},
    {"parent_id", &PytorchApiRow::parent_id, "The op it ran inside, on the same thread (PYTORCH_API.id); 0 if none."},
    {"stack_id", &PytorchApiRow::stack_id,
     "Its Python call stack (STRING_IDS.id), innermost frame first, frames separated by `;\\n`; 0 when not "
     "recorded."},
    {"args_id", &PytorchApiRow::args_id,
     "An msprobe fragment's (kind `api`) arguments and results (STRING_IDS.id), JSON as msprobe's dump.json holds "
     "them, each tensor with its device `address` instead of statistics (docs/compare.md); 0 for other ops."},
};
static_assert(covers_each_member_once(kPytorchApiColumns));

constexpr Column<GradientRow> kGradientColumns[] = {
    {"ts_ns", &GradientRow::ts_ns, "Host time the gradient was ready (ns)."},
    {"step", &GradientRow::step, "The step (MARKER.step) it belongs to; -1 if none."},
    {"param_id", &GradientRow::param_id,
     "The parameter (STRING_IDS.id): its name in the model, `layer1.0.conv1.weight`."},
    {"numel", &GradientRow::numel, "Elements of the gradient."},
    {"norm", &GradientRow::norm, "L2 norm of its finite elements."},
    {"max", &GradientRow::max, "Largest finite element (0 if none)."},
    {"min", &GradientRow::min, "Smallest finite element (0 if none)."},
    {"mean", &GradientRow::mean, "Mean of the finite elements."},
    {"zero_ratio", &GradientRow::zero_ratio, "Share of elements exactly 0."},
    {"nan_count", &GradientRow::nan_count, "NaN elements."},
    {"inf_count", &GradientRow::inf_count, "+inf and -inf elements."},
    {"loss_scale", &GradientRow::loss_scale,
     "The loss scale the gradient still carries (1 without loss scaling): divide by it for the true gradient."},
    {"thread_id", &GradientRow::thread_id, "Host thread (small per-process index)."},
};
static_assert(covers_each_member_once(kGradientColumns));

constexpr Column<LossScaleRow> kLossScaleColumns[] = {
    {"ts_ns", &LossScaleRow::ts_ns, "Host time of the decision (ns), at the step's optimizer call."},
    {"step", &LossScaleRow::step, "The step (MARKER.step)."},
    {"scale", &LossScaleRow::scale, "The loss scale the step ran with."},
    {"next_scale", &LossScaleRow::next_scale, "The loss scale the next step runs with."},
    {"skipped", &LossScaleRow::skipped, "1 if the gradients overflowed and the optimizer step was skipped, else 0."},
    {"thread_id", &LossScaleRow::thread_id, "Host thread (small per-process index)."},
};
static_assert(covers_each_member_once(kLossScaleColumns));

constexpr Column<OpCheckRow> kOpCheckColumns[] = {
    {"task_id", &OpCheckRow::task_id, "The checked task (TASK.task_id)."},
    {"output", &OpCheckRow::output, "Which of its outputs (from 0)."},
    {"dtype", &OpCheckRow::dtype, "The output's dtype: see Enumerations: dtype."},
    {"standard", &OpCheckRow::standard, "How it is judged: see Enumerations: op_check_standard."},
    {"status", &OpCheckRow::status, "The verdict: see Enumerations: check_status."},
    {"numel", &OpCheckRow::numel, "Elements compared."},
    {"max_abs_err", &OpCheckRow::max_abs_err, "Largest |npu - golden|."},
    {"max_rel_err", &OpCheckRow::max_rel_err, "Largest relative error over the normal (not small) elements."},
    {"mean_rel_err", &OpCheckRow::mean_rel_err, "Mean relative error over the normal elements."},
    {"rmse", &OpCheckRow::rmse, "Root mean square error over the normal finite elements."},
    {"small_value_err_ratio", &OpCheckRow::small_value_err_ratio,
     "Share of the small golden values (|golden| <= the dtype's small value) whose error exceeds the small-value "
     "atol."},
    {"error_balance", &OpCheckRow::error_balance, "|#(npu > golden) - #(npu < golden)| / numel: a biased rounding."},
    {"ulp_err_ratio", &OpCheckRow::ulp_err_ratio,
     "ULP standard: share of elements more than 1 ULP (f16/bf16) or 32 ULP (f32) off; else 0."},
    {"failing_ratio", &OpCheckRow::failing_ratio, "Share of elements failing the standard's element-wise test."},
    {"worst_index", &OpCheckRow::worst_index, "The element with the largest error (flat index; -1 if none)."},
    {"npu_value", &OpCheckRow::npu_value, "The NPU's value there."},
    {"golden_value", &OpCheckRow::golden_value, "The f64 golden value there."},
};
static_assert(covers_each_member_once(kOpCheckColumns));

constexpr Column<KernelBlockRow> kKernelBlockColumns[] = {
    {"task_id", &KernelBlockRow::task_id, "The custom kernel's task (TASK.task_id)."},
    {"block", &KernelBlockRow::block, "Block index (GetBlockIdx()), from 0."},
    {"core", &KernelBlockRow::core, "The core it ran on: blocks go to the cores in turn (block mod cores)."},
    {"start_ns", &KernelBlockRow::start_ns,
     "Device start (ns): the task's start plus the blocks before it on its core."},
    {"end_ns", &KernelBlockRow::end_ns, "Device end (ns)."},
    {"cycles", &KernelBlockRow::cycles, "The block's critical path in core clock cycles (Note [Pipe timing])."},
    {"scalar_cycles", &KernelBlockRow::scalar_cycles, "Cycles the SCALAR pipe was busy (issuing, GetValue/SetValue)."},
    {"vector_cycles", &KernelBlockRow::vector_cycles, "Cycles the VECTOR pipe was busy."},
    {"cube_cycles", &KernelBlockRow::cube_cycles, "Cycles the CUBE pipe was busy."},
    {"mte1_cycles", &KernelBlockRow::mte1_cycles, "Cycles MTE1 (L1 to L0A/L0B) was busy."},
    {"mte2_cycles", &KernelBlockRow::mte2_cycles, "Cycles MTE2 (GM to UB/L1) was busy."},
    {"mte3_cycles", &KernelBlockRow::mte3_cycles, "Cycles MTE3 (UB to GM) was busy."},
    {"fixp_cycles", &KernelBlockRow::fixp_cycles, "Cycles the fixpipe (L0C to GM) was busy."},
    {"mte2_vector_overlap_cycles", &KernelBlockRow::mte2_vector_overlap_cycles,
     "Cycles MTE2 and VECTOR were busy at once: 0 when copy-in and compute are serialised (no double buffering)."},
    {"instructions", &KernelBlockRow::instructions, "Instructions issued."},
    {"gm_copies", &KernelBlockRow::gm_copies, "Transfers between global memory and the core (MTE2, MTE3, FIXP)."},
    {"unaligned_gm_copies", &KernelBlockRow::unaligned_gm_copies,
     "Of those, the ones whose global address or length is not a multiple of 32 bytes."},
    {"ub_bytes", &KernelBlockRow::ub_bytes, "Unified Buffer bytes the pipe's buffers took (TPipe::InitBuffer)."},
    {"ub_capacity", &KernelBlockRow::ub_capacity, "The core's Unified Buffer (device spec)."},
};
static_assert(covers_each_member_once(kKernelBlockColumns));

constexpr Column<PipeInstructionRow> kPipeInstructionColumns[] = {
    {"task_id", &PipeInstructionRow::task_id, "The custom kernel's task (TASK.task_id)."},
    {"block", &PipeInstructionRow::block, "Block index (KERNEL_BLOCK.block)."},
    {"pipe", &PipeInstructionRow::pipe, "The pipe it ran on: see Enumerations: pipe."},
    {"start_ns", &PipeInstructionRow::start_ns, "Device start (ns)."},
    {"end_ns", &PipeInstructionRow::end_ns, "Device end (ns)."},
    {"start_cycle", &PipeInstructionRow::start_cycle, "Start in core cycles from the block's start."},
    {"end_cycle", &PipeInstructionRow::end_cycle, "End in core cycles from the block's start."},
    {"bytes", &PipeInstructionRow::bytes, "Bytes moved (copies) or read (compute)."},
    {"name_id", &PipeInstructionRow::name_id, "The instruction (STRING_IDS.id): `DataCopy`, `Add`, `Mmad`, ..."},
    {"file_id", &PipeInstructionRow::file_id, "The kernel source file of the call (STRING_IDS.id)."},
    {"line", &PipeInstructionRow::line, "Its line in that file."},
};
static_assert(covers_each_member_once(kPipeInstructionColumns));

constexpr Column<KernelFindingRow> kKernelFindingColumns[] = {
    {"task_id", &KernelFindingRow::task_id, "The custom kernel's task (TASK.task_id)."},
    {"check_kind", &KernelFindingRow::check_kind, "What failed: see Enumerations: kernel_check."},
    {"block", &KernelFindingRow::block, "Block index; -1 for the launch as a whole (blocks writing the same bytes)."},
    {"kernel_id", &KernelFindingRow::kernel_id, "The kernel (STRING_IDS.id)."},
    {"instruction_id", &KernelFindingRow::instruction_id, "The instruction (STRING_IDS.id): `DataCopy`, ..."},
    {"file_id", &KernelFindingRow::file_id, "The kernel source file of the call (STRING_IDS.id); 0 if none."},
    {"line", &KernelFindingRow::line, "Its line; 0 if none."},
    {"message_id", &KernelFindingRow::message_id,
     "What went wrong, with the sizes and addresses involved (STRING_IDS.id)."},
};
static_assert(covers_each_member_once(kKernelFindingColumns));

constexpr Column<CommunicatorRow> kCommunicatorColumns[] = {
    {"communicator_id", &CommunicatorRow::communicator_id, "Id of the communicator in this trace."},
    {"name_id", &CommunicatorRow::name_id,
     "Its name (STRING_IDS.id), the same in every member's trace: `hccl_world_group`, `group_0_2`, ..."},
    {"rank", &CommunicatorRow::rank, "This trace's rank in the communicator."},
    {"size", &CommunicatorRow::size, "How many ranks it has."},
    {"members_id", &CommunicatorRow::members_id,
     "The members' world ranks in communicator order (STRING_IDS.id of a text such as `0,2,4,6`)."},
    {"nodes_id", &CommunicatorRow::nodes_id, "Their nodes (emulated servers), likewise (`0,0,1,1`)."},
};
static_assert(covers_each_member_once(kCommunicatorColumns));

constexpr Column<CommunicationRow> kCommunicationColumns[] = {
    {"task_id", &CommunicationRow::task_id, "The collective's task (TASK.task_id, task type HCCL)."},
    {"communicator_id", &CommunicationRow::communicator_id, "Its communicator (COMMUNICATOR.communicator_id)."},
    {"sequence", &CommunicationRow::sequence,
     "Its index on the communicator: the same collective has the same one in every member's trace."},
    {"kind", &CommunicationRow::kind, "See Enumerations: collective_kind."},
    {"algorithm", &CommunicationRow::algorithm, "See Enumerations: collective_algorithm."},
    {"reduce_op", &CommunicationRow::reduce_op, "See Enumerations: reduce_op."},
    {"dtype", &CommunicationRow::dtype, "Element type: see Enumerations: dtype."},
    {"bytes", &CommunicationRow::bytes,
     "Size n of the link model: the buffer (allreduce, broadcast, send, recv), the whole output (allgather), the "
     "whole input (reduce_scatter, all_to_all); 0 for a barrier."},
    {"root_or_peer", &CommunicationRow::root_or_peer,
     "World rank of broadcast's root, send's destination or recv's source; -1 otherwise."},
    {"last_rank", &CommunicationRow::last_rank, "World rank of the member that arrived last."},
    {"arrival_ns", &CommunicationRow::arrival_ns, "When this rank reached the collective (= TASK.start_ns)."},
    {"start_ns", &CommunicationRow::start_ns,
     "When the last member arrived and the data began to move: wait = start_ns - arrival_ns (msprof's Wait Time)."},
    {"end_ns", &CommunicationRow::end_ns, "When it ended (= TASK.end_ns): transit = end_ns - start_ns."},
};
static_assert(covers_each_member_once(kCommunicationColumns));

constexpr Column<CommunicationLinkRow> kCommunicationLinkColumns[] = {
    {"task_id", &CommunicationLinkRow::task_id, "The collective's task (COMMUNICATION.task_id)."},
    {"peer_rank", &CommunicationLinkRow::peer_rank, "World rank that received the bytes (the sender is META rank)."},
    {"transport", &CommunicationLinkRow::transport, "The link: see Enumerations: link_transport."},
    {"bytes", &CommunicationLinkRow::bytes, "Bytes sent to that peer."},
    {"time_ns", &CommunicationLinkRow::time_ns, "The link's busy time (its steps' latency and bytes / bandwidth)."},
};
static_assert(covers_each_member_once(kCommunicationLinkColumns));

}  // namespace

// The descriptors are never destroyed (`*new`): the injection library's drain thread writes rows
// while the process exits, when function-local statics may already be gone.
template <>
const Table<MetaRow>& table_for<MetaRow>() {
  static const Table<MetaRow>& table = *new Table<MetaRow>(
      make_table<MetaRow>({.name = "META",
                           .doc = "Key/value facts about the trace: schema version, status, tool version, counters.",
                           .primary_key = "key",
                           .order_by = "key",
                           .replace = true},
                          kMetaColumns));
  return table;
}

template <>
const Table<StringRow>& table_for<StringRow>() {
  static const Table<StringRow>& table = *new Table<StringRow>(
      make_table<StringRow>({.name = "STRING_IDS",
                             .doc = "Every string of the trace, stored once; other tables keep its id.",
                             .primary_key = "id",
                             .order_by = "id"},
                            kStringColumns));
  return table;
}

template <>
const Table<DeviceInfoRow>& table_for<DeviceInfoRow>() {
  static const Table<DeviceInfoRow>& table = *new Table<DeviceInfoRow>(
      make_table<DeviceInfoRow>({.name = "DEVICE_INFO",
                                 .doc = "One row per device used: the hardware the tasks are judged against.",
                                 .order_by = "device_id"},
                                kDeviceColumns));
  return table;
}

template <>
const Table<ApiRow>& table_for<ApiRow>() {
  static const Table<ApiRow>& table = *new Table<ApiRow>(
      make_table<ApiRow>({.name = "API_CALL",
                          .doc = "API's rows, stored in start order; `rowid` is their insertion order, or their rank "
                                 "in start order in a trace npuscope run converted (Notes [Clustered tables] and "
                                 "[Ranked tables] in collector/src/schema.h): query API.",
                          .order_by = "start_ns",
                          .clustered = true},
                         kApiColumns));
  return table;
}

template <>
const Table<TaskRow>& table_for<TaskRow>() {
  static const Table<TaskRow>& table = *new Table<TaskRow>(make_table<TaskRow>(
      {.name = "TASK",
       .doc = "Device tasks: one row per kernel run (and event record/wait) with its modelled times. A view of "
              "TASK_EXEC joined with KERNEL (Note [Kernel table] in collector/src/schema.h): query it as a table.",
       .order_by = "start_ns",
       .view_select =
           "SELECT e.task_id, e.start_ns, e.end_ns, e.queued_ns, e.device_id, e.stream_id, k.name_id, "
           "k.op_type_id, k.task_type, e.connection_id, k.block_dim, k.flops, k.bytes, e.overflow, "
           "k.fallback, k.compute_dtype, e.call_index, e.emulation_ns, e.thread_id, k.input_shapes_id, "
           "k.input_dtypes_id, e.pytorch_api_id, e.underflow, e.subnormal, k.input_formats_id, k.output_shapes_id, "
           "k.output_dtypes_id, k.output_formats_id "
           "FROM TASK_EXEC e JOIN KERNEL k ON k.kernel_id = e.kernel_id",
       .rows_in = "TASK_EXEC"},
      kTaskColumns));
  return table;
}

template <>
const Table<TaskExecRow>& table_for<TaskExecRow>() {
  static const Table<TaskExecRow>& table = *new Table<TaskExecRow>(
      make_table<TaskExecRow>({.name = "TASK_EXEC",
                               .doc = "What TASK shows of each task run, less what its kernel is (KERNEL), in "
                                      "start order; `rowid` is the insertion order, or the rank in start order in a "
                                      "trace npuscope run converted (Notes [Clustered tables] and [Ranked tables]).",
                               .order_by = "start_ns",
                               .clustered = true},
                              kTaskExecColumns));
  return table;
}

template <>
const Table<KernelRow>& table_for<KernelRow>() {
  static const Table<KernelRow>& table = *new Table<KernelRow>(make_table<KernelRow>(
      {.name = "KERNEL",
       .doc = "Each distinct kernel the tasks ran, once: what TASK shows of a task besides its times.",
       .indexes = {{{"name_id"}}},
       .primary_key = "kernel_id",
       .order_by = "kernel_id"},
      kKernelColumns));
  return table;
}

template <>
const Table<TensorRow>& table_for<TensorRow>() {
  static const Table<TensorRow>& table = *new Table<TensorRow>(
      make_table<TensorRow>({.name = "TENSOR",
                             .doc = "Statistics (and, when dumped, the data) of the tensors tasks read and wrote.",
                             .indexes = {{{"task_id", "role", "idx"}}},
                             .order_by = "task_id, role, idx"},
                            kTensorColumns));
  return table;
}

template <>
const Table<MemoryRow>& table_for<MemoryRow>() {
  static const Table<MemoryRow>& table = *new Table<MemoryRow>(
      make_table<MemoryRow>({.name = "MEMORY_OP",
                             .doc = "MEMORY_RECORD's rows, stored in time order; `rowid` is their insertion order, or "
                                    "their rank in time order in a trace npuscope run converted (Notes [Clustered "
                                    "tables] and [Ranked tables] in collector/src/schema.h): query MEMORY_RECORD.",
                             .order_by = "ts_ns, seq",
                             .clustered = true},
                            kMemoryColumns));
  return table;
}

template <>
const Table<MemcpyRow>& table_for<MemcpyRow>() {
  static const Table<MemcpyRow>& table =
      *new Table<MemcpyRow>(make_table<MemcpyRow>({.name = "MEMCPY",
                                                   .doc = "Copies between host and device memory, and within a device.",
                                                   .indexes = {{{"start_ns"}}},
                                                   .order_by = "start_ns"},
                                                  kMemcpyColumns));
  return table;
}

template <>
const Table<MarkerRow>& table_for<MarkerRow>() {
  static const Table<MarkerRow>& table = *new Table<MarkerRow>(
      make_table<MarkerRow>({.name = "MARKER",
                             .doc = "Named host ranges pushed by the workload, and its training/inference steps.",
                             .indexes = {{{"start_ns"}}},
                             .order_by = "start_ns"},
                            kMarkerColumns));
  return table;
}

template <>
const Table<CompareResultRow>& table_for<CompareResultRow>() {
  static const Table<CompareResultRow>& table = *new Table<CompareResultRow>(make_table<CompareResultRow>(
      {.name = "COMPARE_RESULT",
       .doc = "Verdicts of `npuscope compare` for this trace's ops, one row per tensor; empty until the trace is "
              "compared with --annotate (or in a --results file).",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, role, idx"},
      kCompareResultColumns));
  return table;
}

template <>
const Table<PytorchApiRow>& table_for<PytorchApiRow>() {
  static const Table<PytorchApiRow>& table = *new Table<PytorchApiRow>(make_table<PytorchApiRow>(
      {.name = "PYTORCH_API",
       .doc = "Framework ops on the host timeline (msprof's PYTORCH_API): a PyTorch script's aten ops, module calls, "
              "autograd functions and optimizer calls, with their inputs, nesting and pass. Empty for other workloads.",
       .indexes = {{{"start_ns"}}},
       .primary_key = "id",
       .order_by = "start_ns"},
      kPytorchApiColumns));
  return table;
}

template <>
const Table<GradientRow>& table_for<GradientRow>() {
  static const Table<GradientRow>& table = *new Table<GradientRow>(make_table<GradientRow>(
      {.name = "GRADIENT",
       .doc = "Each parameter's gradient, step by step (msprobe's grad_probe, `npuscope run --grad-probe`): its norm, "
              "range, mean, zeros and non-finite elements.",
       .order_by = "ts_ns"},
      kGradientColumns));
  return table;
}

template <>
const Table<LossScaleRow>& table_for<LossScaleRow>() {
  static const Table<LossScaleRow>& table = *new Table<LossScaleRow>(make_table<LossScaleRow>(
      {.name = "LOSS_SCALE",
       .doc = "The dynamic loss scaler's decision at every step (npuscope.torch.amp.GradScaler): the scale, and "
              "whether the step was skipped for overflowing gradients.",
       .order_by = "ts_ns"},
      kLossScaleColumns));
  return table;
}

template <>
const Table<OpCheckRow>& table_for<OpCheckRow>() {
  static const Table<OpCheckRow>& table = *new Table<OpCheckRow>(make_table<OpCheckRow>(
      {.name = "OP_CHECK",
       .doc = "The online op check (`npuscope run --check-ops`, msprobe's API accuracy checker): each NPU kernel's "
              "outputs against its CPU golden kernel run in f64 on the same inputs, judged by msprobe's standards.",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, output"},
      kOpCheckColumns));
  return table;
}

template <>
const Table<KernelBlockRow>& table_for<KernelBlockRow>() {
  static const Table<KernelBlockRow>& table = *new Table<KernelBlockRow>(make_table<KernelBlockRow>(
      {.name = "KERNEL_BLOCK",
       .doc = "One row per block of each custom (opkit) kernel's launch, the op simulator's per-core summary: where "
              "and when the block ran and how many cycles each pipe was busy (`npuscope analyze`'s kernel_pipes "
              "rule turns them into vec_ratio, mte2_ratio, ...).",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, block"},
      kKernelBlockColumns));
  return table;
}

template <>
const Table<PipeInstructionRow>& table_for<PipeInstructionRow>() {
  static const Table<PipeInstructionRow>& table = *new Table<PipeInstructionRow>(make_table<PipeInstructionRow>(
      {.name = "PIPE_INSTRUCTION",
       .doc = "Every instruction of each custom (opkit) kernel on its pipe, per block (the op simulator's "
              "instruction trace; the viewer's pipe lanes). Recorded unless `npuscope run --no-pipe-trace`.",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, block, pipe, start_cycle"},
      kPipeInstructionColumns));
  return table;
}

template <>
const Table<KernelFindingRow>& table_for<KernelFindingRow>() {
  static const Table<KernelFindingRow>& table = *new Table<KernelFindingRow>(make_table<KernelFindingRow>(
      {.name = "KERNEL_FINDING",
       .doc = "The sanitizer's findings in custom (opkit) kernels (msSanitizer's memcheck and racecheck): the "
              "check, the block, the instruction and its source line.",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, block"},
      kKernelFindingColumns));
  return table;
}

template <>
const Table<CommunicatorRow>& table_for<CommunicatorRow>() {
  static const Table<CommunicatorRow>& table = *new Table<CommunicatorRow>(make_table<CommunicatorRow>(
      {.name = "COMMUNICATOR",
       .doc = "The communicators (the world and sub-groups) this rank belonged to, with their members.",
       .order_by = "communicator_id"},
      kCommunicatorColumns));
  return table;
}

template <>
const Table<CommunicationRow>& table_for<CommunicationRow>() {
  static const Table<CommunicationRow>& table = *new Table<CommunicationRow>(make_table<CommunicationRow>(
      {.name = "COMMUNICATION",
       .doc = "Each collective and send/recv of this rank (Note [Collectives in virtual time] in "
              "emulator/collectives.h): its communicator and index there, size, algorithm, and its arrival, start "
              "and end, which split its time into wait and transit as msprof does.",
       .indexes = {{{"task_id"}}},
       .order_by = "start_ns"},
      kCommunicationColumns));
  return table;
}

template <>
const Table<CommunicationLinkRow>& table_for<CommunicationLinkRow>() {
  static const Table<CommunicationLinkRow>& table = *new Table<CommunicationLinkRow>(make_table<CommunicationLinkRow>(
      {.name = "COMMUNICATION_LINK",
       .doc = "What this rank sent to each peer during each collective, over which link (msprof's communication "
              "matrix, one sender's rows).",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id, peer_rank"},
      kCommunicationLinkColumns));
  return table;
}

namespace {
constexpr Column<TaskPmuRow> kTaskPmuColumns[] = {
    {"task_id", &TaskPmuRow::task_id, "The task measured (TASK.task_id)."},
    {"name_id", &TaskPmuRow::name_id,
     "The metric (STRING_IDS.id), by the profiler's own name: `aic_mac_ratio`, `aiv_vec_ratio`, "
     "`aic_total_cycles`, `aicore_time(us)`, ..."},
    {"value", &TaskPmuRow::value, "Its value, in the metric's own unit (ratios 0 to 1, cycles, us, GB/s)."},
};
static_assert(covers_each_member_once(kTaskPmuColumns));
constexpr Column<CounterRow> kCounterColumns[] = {
    {"ts_ns", &CounterRow::ts_ns, "When the counter was read (ns, the trace's clock)."},
    {"device_id", &CounterRow::device_id, "The device (DEVICE_INFO.device_id); -1 for the host."},
    {"name_id", &CounterRow::name_id, "The counter (STRING_IDS.id) with its unit: `AI Core Freq (MHz)`, ..."},
    {"value", &CounterRow::value, "Its value, in the unit its name gives."},
};
static_assert(covers_each_member_once(kCounterColumns));
constexpr Column<UnmappedRow> kUnmappedColumns[] = {
    {"source_id", &UnmappedRow::source_id, "The file of the source it was found in (STRING_IDS.id)."},
    {"what_id", &UnmappedRow::what_id,
     "What was not mapped (STRING_IDS.id): an event category, a column, a table of the source."},
    {"count", &UnmappedRow::count, "How many rows, events or values of it the import passed over."},
};
static_assert(covers_each_member_once(kUnmappedColumns));
constexpr Column<OpMemoryRow> kOpMemoryColumns[] = {
    {"name_id", &OpMemoryRow::name_id,
     "The op that allocated the block (STRING_IDS.id): `aten::empty_strided`, a GE op such as `Conv2D1`."},
    {"device_id", &OpMemoryRow::device_id, "The device (DEVICE_INFO.device_id)."},
    {"bytes", &OpMemoryRow::bytes, "The block's size (bytes)."},
    {"allocation_ns", &OpMemoryRow::allocation_ns,
     "When it was allocated (ns, the trace's clock); -1 before the profile began."},
    {"release_ns", &OpMemoryRow::release_ns,
     "When the op released it; -1 not released while the profile ran. release_ns - allocation_ns is the time "
     "the op held it."},
    {"active_release_ns", &OpMemoryRow::active_release_ns,
     "When the allocator took it back (torch_npu's Active Release Time); -1 not said."},
    {"allocation_allocated_bytes", &OpMemoryRow::allocation_allocated_bytes,
     "The allocator's allocated total when the block was allocated (bytes); -1 not said."},
    {"allocation_reserved_bytes", &OpMemoryRow::allocation_reserved_bytes,
     "Its reserved total then (bytes); -1 not said."},
    {"allocation_active_bytes", &OpMemoryRow::allocation_active_bytes, "Its active total then (bytes); -1 not said."},
    {"release_allocated_bytes", &OpMemoryRow::release_allocated_bytes,
     "The allocated total when the block was released (bytes); -1 not said."},
    {"release_reserved_bytes", &OpMemoryRow::release_reserved_bytes, "The reserved total then (bytes); -1 not said."},
    {"release_active_bytes", &OpMemoryRow::release_active_bytes, "The active total then (bytes); -1 not said."},
    {"stream_ptr", &OpMemoryRow::stream_ptr, "The allocator's stream, as the profile writes it; 0 not said."},
};
static_assert(covers_each_member_once(kOpMemoryColumns));
}  // namespace

template <>
const Table<TaskPmuRow>& table_for<TaskPmuRow>() {
  static const Table<TaskPmuRow>& table = *new Table<TaskPmuRow>(make_table<TaskPmuRow>(
      {.name = "TASK_PMU",
       .doc = "Hardware metrics of the tasks of an imported real profile, one row per task and metric (msprof's "
              "TASK_PMU_INFO, kernel_details' PMU columns). Empty in an emulated trace.",
       .indexes = {{{"task_id"}}},
       .order_by = "task_id"},
      kTaskPmuColumns));
  return table;
}

template <>
const Table<CounterRow>& table_for<CounterRow>() {
  static const Table<CounterRow>& table = *new Table<CounterRow>(make_table<CounterRow>(
      {.name = "COUNTER",
       .doc = "Counters over time of an imported real profile (AI Core frequency, HBM and LLC bandwidth, memory, "
              "a Kineto trace's counter events). Empty in an emulated trace.",
       .order_by = "ts_ns"},
      kCounterColumns));
  return table;
}

template <>
const Table<UnmappedRow>& table_for<UnmappedRow>() {
  static const Table<UnmappedRow>& table = *new Table<UnmappedRow>(make_table<UnmappedRow>(
      {.name = "UNMAPPED",
       .doc = "What `npuscope import` found in a source and did not map into a table, counted (never dropped "
              "silently); `npuscope import` and `analyze` report it. Empty in an emulated trace.",
       .order_by = "source_id, what_id"},
      kUnmappedColumns));
  return table;
}

template <>
const Table<OpMemoryRow>& table_for<OpMemoryRow>() {
  static const Table<OpMemoryRow>& table = *new Table<OpMemoryRow>(make_table<OpMemoryRow>(
      {.name = "OP_MEMORY",
       .doc = "The blocks of device memory each op allocated, and when it released them, as an imported real "
              "profile records them (torch_npu's OP_MEMORY and operator_memory.csv, msprof's NPU_OP_MEM). Empty "
              "in an emulated trace (its allocator's operations are MEMORY_RECORD's).",
       .order_by = "allocation_ns"},
      kOpMemoryColumns));
  return table;
}

namespace {

// The view users query of a clustered table: its documented columns, without `rowid`. Never
// destroyed, as the descriptors; its SELECT lives in the same block as the TableInfo that points at
// it, so the block stays reachable (LeakSanitizer) through the reference all_tables() keeps.
const TableInfo& view_of(const TableInfo& stored, std::string_view name, std::string_view doc) {
  struct View {
    TableInfo info;  // first: the reference returned is the block's address
    std::string select;
  };
  auto* view = new View{.info = {.name = name,
                                 .doc = doc,
                                 .columns = stored.columns,
                                 .order_by = stored.order_by,
                                 .rows_in = stored.name},
                        .select = "SELECT "};
  for (const ColumnInfo& c : stored.columns) {
    view->select += std::string(view->select.size() > 7 ? ", " : "") + std::string(c.name);
  }
  view->select += " FROM " + std::string(stored.name);
  view->info.view_select = view->select;
  return view->info;
}

}  // namespace

// META and STRING_IDS, then the tables of NPUSCOPE_TRACE_ROWS in its order, each followed by what
// stores or shows it: TASK's rows live in TASK_EXEC and KERNEL (Note [Kernel table]); API_CALL and
// MEMORY_OP are shown as the views API and MEMORY_RECORD (Note [Clustered tables]).
const std::vector<const TableInfo*>& all_tables() {
  static const std::vector<const TableInfo*>& tables = *[] {
    auto* list = new std::vector<const TableInfo*>{&table_for<MetaRow>().info, &table_for<StringRow>().info};
    TraceRows::for_each_type([&]<class Row>() {
      if constexpr (std::is_same_v<Row, TaskRow>) {
        list->insert(list->end(), {&table_for<TaskExecRow>().info, &table_for<KernelRow>().info});
      }
      list->push_back(&table_for<Row>().info);
      if constexpr (std::is_same_v<Row, ApiRow>) {
        list->push_back(&view_of(table_for<ApiRow>().info, "API",
                                 "Host runtime API calls (msprof's CANN_API): enter and exit times on the host thread. "
                                 "A view of API_CALL."));
      } else if constexpr (std::is_same_v<Row, MemoryRow>) {
        list->push_back(&view_of(
            table_for<MemoryRow>().info, "MEMORY_RECORD",
            "Device memory operations of the caching allocator, with the totals after each. A view of MEMORY_OP."));
      }
    });
    return list;
  }();
  return tables;
}

const TableInfo* find_table(std::string_view name) {
  for (const TableInfo* table : all_tables()) {
    if (table->name == name) return table;
  }
  return nullptr;
}

const char* sql_type_name(SqlType type) {
  switch (type) {
    case SqlType::kInteger: return "INTEGER";
    case SqlType::kReal: return "REAL";
    case SqlType::kText: return "TEXT";
    case SqlType::kBlob: return "BLOB";
  }
  return "BLOB";
}

}  // namespace npuscope::collector::schema
