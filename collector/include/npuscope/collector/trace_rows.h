// The rows of a trace, as the writer takes them and the reader returns them. One struct per table;
// the columns and their documentation live in schema.cpp (Note [One table, declared once]).
//
// Conventions (msprof / Nsight Systems): integer nanoseconds on the session's virtual clock, every
// string an id into STRING_IDS, host API rows joined to device tasks by connection_id.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::collector {

using StringId = std::int64_t;  // into STRING_IDS; 0 = no string

// A string id in 32 bits, for the compact in-memory rows of the analyzer and the viewer: a trace
// has far fewer strings; an id out of range becomes 0, the empty string.
inline std::int32_t compact_string_id(StringId id) {
  return id > 0 && id <= 0x7fffffff ? static_cast<std::int32_t>(id) : 0;
}

// 14: PYTORCH_API.args_id (msprobe fragments); 13: API.level (CANN's acl/node/hccl/runtime, CUDA's runtime/driver); 12:
// KERNEL's formats and output shapes/dtypes, PYTORCH_API.stack_id (real profiles); 11: TASK_EXEC's underflow counts;
// 10: COMMUNICATOR, COMMUNICATION, COMMUNICATION_LINK, META rank keys (many ranks); 9: KERNEL_BLOCK, PIPE_INSTRUCTION,
// KERNEL_FINDING (opkit kernels); 8: DEVICE_INFO's calibrated ceilings; 7: TENSOR.address; 6: PYTORCH_API,
// TASK.input_shapes_id/input_dtypes_id/pytorch_api_id; 5: TASK_EXEC, API_CALL, MEMORY_OP clustered (API and
// MEMORY_RECORD views); 4: MEMORY_RECORD.seq; 3: API.kind; 2: TASK is a view of TASK_EXEC
// + KERNEL (Note [Kernel table])
inline constexpr int kSchemaVersion = 15;

// META key of a golden run's trace (NPUSCOPE_GOLDEN=1: every NPU op ran its CPU golden kernel), value "1";
// absent otherwise. Written by the injection library when a device announces itself as golden.
inline constexpr std::string_view kMetaGolden = "golden";

// META keys of a rank of a multi-rank job (Note [Collective records] in hook_api.h), absent in a
// single-process trace: the world rank, the world size, the emulated server (node) and the rank on
// it, the real machine and the launcher that started the job.
inline constexpr std::string_view kMetaRank = "rank";
inline constexpr std::string_view kMetaWorldSize = "world_size";
inline constexpr std::string_view kMetaNode = "node";
inline constexpr std::string_view kMetaLocalRank = "local_rank";
inline constexpr std::string_view kMetaHostname = "hostname";
inline constexpr std::string_view kMetaLauncher = "launcher";

// The rows store the trace vocabulary's values (Note [One vocabulary] in vocabulary.h) as plain
// integers: a trace may hold a value this build does not know. Read them through these.
using npuscope::ApiKind;
using npuscope::ApiLevel;
using npuscope::CopyKind;
using npuscope::HostOpKind;
using npuscope::MarkerKind;
using npuscope::MemoryOp;
using npuscope::ModelPass;
using npuscope::TaskType;
using npuscope::TensorRole;

// The name of a stored value ("AI_CORE", "HtoD", "alloc", ...), or `prefix` and the number for one
// this build does not know ("kind9").
template <class E>
std::string stored_name(std::int64_t value, std::string_view prefix) {
  if (const auto e = enum_from_value<E>(value)) return std::string(enum_name(*e));
  return std::string(prefix) + std::to_string(value);
}
// TASK.task_type names: "AI_CORE", "AI_VECTOR_CORE", "AI_CPU", ...; "UNKNOWN<N>" otherwise.
inline std::string task_type_name(std::int64_t task_type) { return stored_name<TaskType>(task_type, "UNKNOWN"); }
inline std::string task_type_name(TaskType t) { return std::string(enum_name(t)); }

struct TaskRow {
  std::int64_t task_id = 0;
  std::int64_t start_ns = 0, end_ns = 0, queued_ns = 0;
  std::int32_t device_id = 0;  // -1: the cpu golden backend
  std::int32_t stream_id = 0;
  StringId name_id = 0, op_type_id = 0;
  std::int32_t task_type = 0;
  std::int64_t connection_id = 0;
  std::int32_t block_dim = 0;
  std::int64_t flops = 0, bytes = 0;
  std::int32_t overflow = 0, fallback = 0;
  std::int32_t compute_dtype = 0;
  std::int32_t call_index = 0;
  std::int64_t emulation_ns = 0;
  std::int32_t thread_id = 0;                         // host thread that launched it
  StringId input_shapes_id = 0, input_dtypes_id = 0;  // msprof's "Input Shapes" / "Input Data Types"; 0 unknown
  std::int64_t pytorch_api_id = 0;                    // PYTORCH_API.id of the framework op that launched it; 0 none
  // Output elements whose finite non-zero result the narrowing to f16/bf16 flushed to zero / left
  // subnormal (Note [Underflow counts] in emulator/src/kernels/kernel_util.h); 0 none.
  std::int64_t underflow = 0, subnormal = 0;
  // What a real profile also says of a kernel (kernel_details' Input Formats, Output Shapes, ...);
  // 0 when not recorded. An emulated trace fills them from its TaskRecords' signatures (Note [Input
  // signature] in hook_api.h): storage shapes and formats as a real profile writes them.
  StringId input_formats_id = 0, output_shapes_id = 0, output_dtypes_id = 0, output_formats_id = 0;
};

// A framework op on the host timeline (PyTorch: an aten op, a module call, an autograd function, an
// optimizer call): msprof's PYTORCH_API. Tasks point at the innermost one that launched them.
struct PytorchApiRow {
  std::int64_t id = 0;  // 1, 2, ... in the process
  std::int64_t start_ns = 0, end_ns = 0;
  std::int32_t thread_id = 0;
  StringId name_id = 0;
  std::int32_t kind = 0;   // HostOpKind
  std::int32_t pass = 0;   // ModelPass
  StringId module_id = 0;  // msprobe's module entry it ran in; 0 none
  std::int64_t sequence_number = -1;
  std::int32_t fwd_thread_id = 0;
  StringId input_shapes_id = 0, input_dtypes_id = 0;
  std::int64_t parent_id = 0;  // the op it ran inside, on the same thread; 0 none
  StringId stack_id = 0;       // its Python call stack, frames separated by ";\n"; 0 not recorded
  StringId args_id = 0;        // HostOpKind::kApi: its arguments, JSON (Note [msprobe fragments]); 0 none
};

struct ApiRow {
  std::int64_t start_ns = 0, end_ns = 0;
  StringId name_id = 0;
  std::int64_t connection_id = 0;
  std::int32_t thread_id = 0;
  std::int32_t kind = 0;   // ApiKind: what the call does
  std::int32_t level = 0;  // ApiLevel: the layer it belongs to (acl, node, runtime, driver, ...)
};

struct MemoryRow {
  std::int64_t ts_ns = 0;
  std::int32_t device_id = 0;
  std::int32_t op = 0;  // MemoryOp
  std::int64_t address = 0, bytes = 0;
  std::int64_t allocated_bytes = 0, reserved_bytes = 0;  // totals after the operation
  std::int32_t thread_id = 0;
  std::int64_t seq = 0;  // the device allocator's order: breaks ts_ns ties
};

struct MemcpyRow {
  std::int64_t task_id = 0;
  std::int64_t start_ns = 0, end_ns = 0, queued_ns = 0;
  std::int32_t device_id = 0, stream_id = 0;
  std::int64_t bytes = 0;
  std::int32_t copy_kind = 0;  // CopyKind (Nsight Systems' values)
  std::int64_t connection_id = 0;
};

struct MarkerRow {
  std::int64_t start_ns = 0, end_ns = 0;  // an instant when equal
  StringId name_id = 0;
  std::int32_t thread_id = 0;
  std::int32_t kind = 0;  // MarkerKind (step ranges number the training/inference steps)
  std::int64_t step = -1;
};

struct TensorRow {
  std::int64_t task_id = 0;
  std::int32_t role = 0;  // 0 input, 1 output
  std::int32_t idx = 0;
  std::int32_t dtype = 0;  // npuscope::emulator::DType values
  std::string shape;       // "2,3,4"
  std::int64_t numel = 0;
  double min = 0, max = 0, mean = 0, l2norm = 0;
  std::int64_t nan_count = 0, inf_count = 0;
  // Written: the zstd-compressed raw bytes when dumped (else empty). Read with with_data: the raw
  // bytes, data_bytes long.
  std::vector<std::uint8_t> data;
  std::int64_t data_bytes = 0;  // uncompressed size of `data`
  // Where the tensor's first element lives, as the kernel saw it: identifies the buffer within the
  // process, so that tensors one task wrote and another read can be joined (0: not recorded).
  std::int64_t address = 0;
  // Under `--dump md5` (META config "dump"): zlib's CRC-32 of the raw elements, msprobe's summary_mode
  // md5; 0 otherwise, and in traces of schema 14 and older.
  std::int64_t crc32 = 0;
};

struct DeviceInfoRow {
  std::int32_t device_id = 0;
  std::string name;  // preset or spec file
  std::int32_t cube_cores = 0, vector_cores = 0;
  double clock_hz = 0, cube_peak_flops = 0, vector_peak_flops = 0, memory_bandwidth = 0;
  std::int64_t memory_bytes = 0;
  std::string precision_mode, overflow_mode;
  // Calibrated ceilings (0 in a trace of schema 7 or older: the analyzer then uses the peaks).
  double cube_ceiling_flops = 0, vector_ceiling_flops = 0, memory_ceiling_bandwidth = 0, cube_f32_rate = 0;
};

// One tensor's verdict from `npuscope compare`, kept with the NPU trace (COMPARE_RESULT) so that
// the viewer can colour its ops. Metrics are NaN (NULL in SQL) where they do not apply.
struct CompareResultRow {
  std::int64_t task_id = 0;         // the NPU task (TASK.task_id of the trace it annotates)
  std::int64_t golden_task_id = 0;  // in the golden trace; 0 if none
  StringId name_id = 0, op_type_id = 0;
  std::int32_t call_index = 0;
  std::int32_t role = 0, idx = 0;  // as TENSOR.role, TENSOR.idx
  std::int32_t verdict = 0;        // 0 pass, 1 fail, 2 n/a
  std::int32_t origin = 0;         // 0 none, 1 introduced, 2 inherited
  double cosine = 0, max_abs_err = 0, max_rel_err = 0, one_thousandth_ratio = 0, five_thousandth_ratio = 0, rmse = 0,
         rel_euclidean = 0;
  std::int32_t allclose = -1;  // 1, 0, or -1 when not compared
  StringId reason_id = 0;
};

// One parameter's gradient in one step (msprobe's grad_probe): GRADIENT.
struct GradientRow {
  std::int64_t ts_ns = 0, step = -1;
  StringId param_id = 0;
  std::int64_t numel = 0;
  double norm = 0, max = 0, min = 0, mean = 0, zero_ratio = 0;
  std::int64_t nan_count = 0, inf_count = 0;
  double loss_scale = 1;
  std::int32_t thread_id = 0;
};

// A dynamic loss scaler's decision at the end of a step: LOSS_SCALE.
struct LossScaleRow {
  std::int64_t ts_ns = 0, step = -1;
  double scale = 0, next_scale = 0;
  std::int32_t skipped = 0, thread_id = 0;
};

// One output of an NPU kernel checked online against its f64 golden (`npuscope run --check-ops`): OP_CHECK.
struct OpCheckRow {
  std::int64_t task_id = 0;
  std::int32_t output = 0, dtype = 0, standard = 0, status = 0;
  std::int64_t numel = 0;
  double max_abs_err = 0, max_rel_err = 0, mean_rel_err = 0, rmse = 0, small_value_err_ratio = 0, error_balance = 0,
         ulp_err_ratio = 0, failing_ratio = 0;
  std::int64_t worst_index = -1;
  double npu_value = 0, golden_value = 0;
};

// One block of an opkit kernel's launch (the op simulator's per-core summary): where and when it ran
// and how many cycles each pipe was busy (Note [Pipe timing] in opkit/block_state.h): KERNEL_BLOCK.
struct KernelBlockRow {
  std::int64_t task_id = 0;
  std::int32_t block = 0, core = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t cycles = 0;  // the block's critical path
  // Busy cycles per pipe (busy() indexes them by Pipe).
  std::int64_t scalar_cycles = 0, vector_cycles = 0, cube_cycles = 0, mte1_cycles = 0, mte2_cycles = 0, mte3_cycles = 0,
               fixp_cycles = 0;
  std::int64_t mte2_vector_overlap_cycles = 0;  // cycles MTE2 and Vector both ran
  std::int64_t instructions = 0;
  std::int64_t gm_copies = 0, unaligned_gm_copies = 0;  // transfers to/from GM; those not 32-byte aligned there
  std::int64_t ub_bytes = 0, ub_capacity = 0;           // UB the pipe's buffers took; the core's UB

  static std::int64_t KernelBlockRow::*busy_member(Pipe p) {
    static constexpr std::int64_t KernelBlockRow::*kMembers[] = {
        &KernelBlockRow::scalar_cycles, &KernelBlockRow::vector_cycles, &KernelBlockRow::cube_cycles,
        &KernelBlockRow::mte1_cycles,   &KernelBlockRow::mte2_cycles,   &KernelBlockRow::mte3_cycles,
        &KernelBlockRow::fixp_cycles};
    static_assert(std::size(kMembers) == kNumPipes);
    return kMembers[static_cast<int>(p)];
  }
  std::int64_t busy(Pipe p) const { return this->*busy_member(p); }
  std::int64_t& busy(Pipe p) { return this->*busy_member(p); }
};

// One instruction of an opkit kernel on its pipe (the op simulator's instruction trace): PIPE_INSTRUCTION.
struct PipeInstructionRow {
  std::int64_t task_id = 0;
  std::int32_t block = 0, pipe = 0;  // pipe: a Pipe value
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t start_cycle = 0, end_cycle = 0;  // from the block's start
  std::int64_t bytes = 0;
  StringId name_id = 0, file_id = 0;
  std::int32_t line = 0;
};

// One finding of the opkit sanitizer: KERNEL_FINDING.
struct KernelFindingRow {
  std::int64_t task_id = 0;
  std::int32_t check_kind = 0;  // a KernelCheck value
  std::int32_t block = 0;       // -1: the launch as a whole
  StringId kernel_id = 0, instruction_id = 0, file_id = 0;
  std::int32_t line = 0;
  StringId message_id = 0;
};

// A communicator this rank belonged to: COMMUNICATOR.
struct CommunicatorRow {
  std::int64_t communicator_id = 0;  // unique in this trace
  StringId name_id = 0;              // the same on every member: "hccl_world_group", ...
  std::int32_t rank = 0, size = 0;   // this rank in it, and its members
  StringId members_id = 0;           // world ranks of the members, in communicator order: "0,2,4,6"
  StringId nodes_id = 0;             // their nodes, likewise: "0,0,1,1"
};

// One collective or send/recv of this rank: COMMUNICATION (its task is the TASK row of the same task_id).
struct CommunicationRow {
  std::int64_t task_id = 0;
  std::int64_t communicator_id = 0;
  std::int32_t sequence = 0;  // its index on the communicator: the same collective on every member
  std::int32_t kind = 0, algorithm = 0, reduce_op = 0,
               dtype = 0;  // CollectiveKind, CollectiveAlgorithm, ReduceOp, DType
  std::int64_t bytes = 0;
  std::int32_t root_or_peer = -1, last_rank = 0;  // world ranks
  std::int64_t arrival_ns = 0, start_ns = 0, end_ns = 0;
};

// What this rank sent to one peer during a collective: COMMUNICATION_LINK (the communication matrix).
struct CommunicationLinkRow {
  std::int64_t task_id = 0;
  std::int32_t peer_rank = 0;  // world rank of the receiver
  std::int32_t transport = 0;  // a LinkTransport value
  std::int64_t bytes = 0;
  std::int64_t time_ns = 0;
};

// One hardware metric of one task, as a real profile measured it (TASK_PMU_INFO, kernel_details'
// PMU columns: aic_mac_ratio, aiv_vec_ratio, aic_total_cycles, ...): TASK_PMU.
struct TaskPmuRow {
  std::int64_t task_id = 0;
  StringId name_id = 0;
  double value = 0;
};

// A counter's value at one time (a real profile's AI Core frequency, HBM and LLC bandwidth, memory):
// COUNTER.
struct CounterRow {
  std::int64_t ts_ns = 0;
  std::int32_t device_id = 0;
  StringId name_id = 0;  // "AI Core Freq (MHz)", "HBM read (MB/s)", ...
  double value = 0;
};

// What an import found in its source and did not map into the tables above, counted: UNMAPPED.
struct UnmappedRow {
  StringId source_id = 0;  // the file it came from
  StringId what_id = 0;    // "event cat=Overlap Analysis", "column aic_l2_hit_rate", "table NPU_MEM"
  std::int64_t count = 0;
};

// One block of device memory an op allocated, with when it was released, as a real profile records
// it (torch_npu's operator_memory.csv and OP_MEMORY, msprof's NPU_OP_MEM allocate/release pairs):
// OP_MEMORY. A time or total the profile does not give is -1: a block allocated before the profile
// began, or released after it ended, has no allocation or release time.
struct OpMemoryRow {
  StringId name_id = 0;  // the op that allocated it: "aten::empty_strided", GE's "Conv2D1", ...
  std::int32_t device_id = 0;
  std::int64_t bytes = 0;
  std::int64_t allocation_ns = -1, release_ns = -1;
  std::int64_t active_release_ns = -1;  // when the allocator got it back (torch_npu); -1 not said
  // The allocator's totals when it was allocated and when it was released (bytes); -1 not said.
  std::int64_t allocation_allocated_bytes = -1, allocation_reserved_bytes = -1, allocation_active_bytes = -1;
  std::int64_t release_allocated_bytes = -1, release_reserved_bytes = -1, release_active_bytes = -1;
  std::int64_t stream_ptr = 0;  // the allocator's stream, as the profile writes it; 0 not said
};

// META keys of an imported trace (absent in an emulated one): the tool that wrote the source, its
// version where it says, and what was imported.
inline constexpr std::string_view kMetaSource = "source";  // "kineto", "ascend_pytorch_profiler_db", ...
inline constexpr std::string_view kMetaSourceVersion = "source_version";
inline constexpr std::string_view kMetaSourcePath = "source_path";

// Note [Trace rows]
// Every table a trace stores, by the row type the writer takes and the reader returns, declared once
// in NPUSCOPE_TRACE_ROWS (Tracy's QueueType and Perfetto's declared tables are the models): the
// writer's add(), the reader's for_each(), the spool's frames and the tables a trace creates follow
// from it; each table's columns are declared beside it in collector/src/schema.cpp. New tables go at
// the end. Where the rows come from is another list: the record kinds of the hook points (Note
// [Record kinds] in npuscope/runtime_hooks/hook_api.h), each turned into its row by the injection
// library; rows also come from `npuscope compare --annotate` (COMPARE_RESULT) and from importers.
#define NPUSCOPE_TRACE_ROWS(X) \
  X(DeviceInfoRow)             \
  X(ApiRow)                    \
  X(TaskRow)                   \
  X(TensorRow)                 \
  X(MemoryRow)                 \
  X(MemcpyRow)                 \
  X(MarkerRow)                 \
  X(CompareResultRow)          \
  X(PytorchApiRow)             \
  X(GradientRow)               \
  X(LossScaleRow)              \
  X(OpCheckRow)                \
  X(KernelBlockRow)            \
  X(PipeInstructionRow)        \
  X(KernelFindingRow)          \
  X(CommunicatorRow)           \
  X(CommunicationRow)          \
  X(CommunicationLinkRow)      \
  X(TaskPmuRow)                \
  X(CounterRow)                \
  X(UnmappedRow)               \
  X(OpMemoryRow)

// A list of row types, for what follows from NPUSCOPE_TRACE_ROWS.
template <class... Rows>
struct RowTypes {
  static constexpr std::size_t size = sizeof...(Rows);
  // Rows... as the arguments of a template: RowTypes<A, B>::Each<std::variant, F> is std::variant<F<A>, F<B>>.
  template <template <class...> class Of, template <class> class F>
  using Each = Of<F<Rows>...>;
  template <class Row>
  static constexpr bool contains = (std::is_same_v<Row, Rows> || ...);
  // The position of Row in the list (size if absent).
  template <class Row>
  static constexpr std::size_t index_of() {
    std::size_t i = 0;
    ((std::is_same_v<Row, Rows> ? false : (++i, true)) && ...);
    return i;
  }
  // f.template operator()<Row>() for each row type, in order.
  template <class F>
  static void for_each_type(F&& f) {
    (f.template operator()<Rows>(), ...);
  }
};
template <class... A, class... B>
RowTypes<A..., B...> operator+(RowTypes<A...>, RowTypes<B...>);  // declared only: joins lists in decltype

#define NPUSCOPE_ROW_TYPE(Row) \
  +RowTypes<Row> {             \
  }
using TraceRows = decltype(RowTypes<> {} NPUSCOPE_TRACE_ROWS(NPUSCOPE_ROW_TYPE));
#undef NPUSCOPE_ROW_TYPE

template <class Row>
concept TraceRow = TraceRows::contains<Row>;

}  // namespace npuscope::collector
