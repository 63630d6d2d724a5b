// The hook-point API: the only thing the emulator knows about profiling.
//
// Note [Hook points]
// The emulator calls a hook point at every host API enter/exit, task queued/begin/end, memory
// alloc/free, memcpy, marker push/pop, tensor ready and overflow. Each hook point is
//
//     if (const auto* s = hooks::subscriber()) [[unlikely]] s->on_task(s->user, record);
//
// so with nobody listening it costs one load and one predictable branch. A listener (the injection
// library `npuscope run` loads, or a test) fills a SubscriberTable and publishes it with
// hooks::subscribe(). Records are fixed-size PODs (Tracy's TracyQueue idea): no allocation, no
// strings copied. Every `const char*` in a record points at an interned, immortal string, so a
// listener may key on the pointer itself. The optional records (API enters, task kQueued and kBegin,
// tensors) are only built for a listener whose table asks for them (wants_*): each costs the hot
// path a record and an indirect call per op, and the exit/kEnd records repeat what they say.
//
// All timestamps are nanoseconds of the one virtual clock (see emulator/virtual_clock.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::hooks {

// 12: TaskRecord::output_signature, formats in signatures; 11: HostOpRecord::args and stack; 10: TaskRecord::underflow
// and subnormal; 9: CollectiveRecord, LinkRecord, CommunicatorRecord, RankRecord; 8: KernelBlockRecord,
// PipeInstructionRecord, KernelFindingRecord, wants_pipe_instructions, kernels_keep_going; 7: DeviceRecord's calibrated
// ceilings; 6: DeviceRecord::golden; 5: HostOpRecord, GradientRecord, LossScaleRecord, OpCheckRecord,
// TaskRecord::input_signature and host_op_id; 4: MemoryRecord::seq; 3: ApiRecord::kind, MarkerEvent; 2: wants_*,
// ApiRecord::start_ns, TaskRecord::launch_thread
inline constexpr std::uint32_t kHookApiVersion = 12;
inline constexpr int kMaxDims = 8;

// The enumerations the records carry (TaskType, CopyKind, MemoryOp, TensorRole, ApiKind, DType...)
// are the trace vocabulary, declared once in vocabulary.h (Note [One vocabulary]).

enum class TaskPhase : std::uint8_t { kQueued = 0, kBegin = 1, kEnd = 2 };

struct ApiRecord {
  std::uint64_t ts_ns;
  std::uint64_t connection_id;  // joins the API call to the task(s) it launched; 0 if none
  const char* name;             // e.g. "aclnnMatMul", "aclrtSynchronizeStream"
  std::uint32_t thread_id;      // small per-process thread index
  std::uint8_t is_exit;         // 0 enter, 1 exit
  std::uint64_t start_ns;       // exit records: the call's enter ts_ns (0 if unknown), so that a
                                // subscriber without enters still gets whole calls
  ApiKind kind;                 // what the call does (tools never guess it from the name)
};

struct TaskRecord {
  std::uint64_t task_id;        // unique per process, in launch order
  std::uint64_t connection_id;  // the host API call that launched it
  const char* name;             // op instance name, e.g. "layer0/attn/MatMul"
  const char* op_type;          // e.g. "MatMul"
  std::uint64_t queued_ns;      // host time of the launch
  std::uint64_t start_ns;       // modelled device start (0 while queued)
  std::uint64_t end_ns;         // modelled device end (0 until kEnd)
  std::uint64_t emulation_ns;   // real CPU time the emulator spent on the kernel (kEnd only)
  std::uint64_t flops;
  std::uint64_t bytes;
  // The inputs and the outputs as "SHAPES|DTYPES|FORMATS" (Note [Input signature]), interned; null
  // when not known.
  const char* input_signature;
  const char* output_signature;
  std::uint64_t host_op_id;  // the innermost HostOpRecord open on the launching thread; 0 if none
  std::int32_t device_id;    // -1 for the cpu device
  std::uint32_t stream_id;
  std::uint32_t block_dim;
  std::uint32_t call_index;     // n-th call of this op name, for matching runs
  std::uint32_t launch_thread;  // ApiRecord::thread_id of the host thread that launched it
  TaskType task_type;
  TaskPhase phase;
  std::uint8_t overflow;       // 1 if any output overflowed (inf/nan, or saturated)
  std::uint8_t fallback;       // 1 if no NPU kernel existed and the CPU kernel ran as AI CPU
  std::uint8_t compute_dtype;  // the DType the kernel computed in
  // Note [Underflow counts]: output elements whose exact result was finite and non-zero and that the
  // narrowing to f16/bf16 flushed to zero (underflow) or into a subnormal (subnormal); saturating.
  std::uint32_t underflow;
  std::uint32_t subnormal;
};

// Note [Input signature]
// A task's inputs (or outputs), as msprof's op_summary lists them ("Input Shapes", "Input Data
// Types", "Input Formats"), in one interned string: the shapes separated by ';' (each one's
// dimensions by ','), a '|', the dtype names separated by ';', and for a task a second '|' and the
// format names separated by ';' (kernel_details' spellings: FORMAT_ND, NCHW, NC1HWC0, FRACTAL_Z,
// FRACTAL_NZ; emulator/formats.h). An absent optional input leaves its fields empty. A tensor in a
// private format shows its storage shape, as a real profile does. Example:
// "8,3,224,224;64,3,7,7;|f32;f32;|NCHW;NCHW;" for a convolution without bias, and
// "8,1,224,224,8;49,4,16,8;|f32;f32;|NC1HWC0;FRACTAL_Z;" for the same in private formats. Scalars have
// an empty shape. A host op's signature (HostOpRecord) has no formats part.

// A framework op on the host timeline (PyTorch: an aten op, a module call, an autograd function,
// an optimizer step), sent once when it ends. Tasks launched while it was the innermost open one on
// their thread carry its id (TaskRecord::host_op_id). Strings are interned.
struct HostOpRecord {
  std::uint64_t id;         // unique per process, from 1
  std::uint64_t parent_id;  // the op it ran inside on this thread; 0 if none
  std::uint64_t start_ns, end_ns;
  const char* name;              // "aten::addmm", "Module.fc.Linear.forward.0", ...
  const char* module;            // msprobe's module entry it ran in ("Module.fc.Linear.backward.0"); null if none
  const char* input_signature;   // Note [Input signature]; null if not recorded
  const char* args;              // msprobe fragments (HostOpKind::kApi): their arguments, JSON; null if none
  const char* stack;             // its Python call stack (frames innermost first, separated by ";\n"); null if none
  std::int64_t sequence_number;  // autograd's sequence number (pairs a forward op with its backward); -1
  std::uint32_t thread_id;
  std::uint32_t fwd_thread_id;  // backward functions: the thread that ran the forward op; else thread_id
  HostOpKind kind;
  ModelPass pass;
};

// One parameter's gradient as the backward pass produced it (msprobe's grad_probe), sent by the
// framework when the gradient is ready.
struct GradientRecord {
  std::uint64_t ts_ns;
  std::int64_t step;  // the step it belongs to (-1 if none)
  const char* param;  // the parameter's name ("layer1.0.conv1.weight"), interned
  std::int64_t numel;
  double norm, max, min, mean;  // over the finite elements (norm: L2)
  double zero_ratio;            // share of elements exactly 0
  std::int64_t nan_count, inf_count;
  double loss_scale;  // the loss scale the gradient still carries (1 without loss scaling)
  std::uint32_t thread_id;
};

// A dynamic loss scaler's decision at the end of a step (torch_npu's amp GradScaler).
struct LossScaleRecord {
  std::uint64_t ts_ns;
  std::int64_t step;
  double scale;       // the scale the step ran with
  double next_scale;  // the scale the next step runs with
  std::uint32_t thread_id;
  std::uint8_t skipped;  // 1: the gradients overflowed and the optimizer step was skipped
};

// The online check of one output of an NPU kernel against the CPU golden kernel run in f64 on the
// same inputs (`npuscope run --check-ops`, msprobe's API precision standards: OpCheckStandard).
struct OpCheckRecord {
  std::uint64_t task_id;
  std::int64_t numel;
  double max_abs_err, max_rel_err, mean_rel_err, rmse;
  double small_value_err_ratio;    // share of small golden values whose error passes the small-value atol
  double error_balance;            // |#(npu > golden) - #(npu < golden)| / numel
  double ulp_err_ratio;            // share of elements beyond the ULP threshold (ULP standard), else 0
  double failing_ratio;            // share of elements failing the standard's own test
  std::int64_t worst_index;        // the element with the largest relative error (-1: none)
  double npu_value, golden_value;  // at worst_index
  std::uint16_t output;            // which output of the task
  std::uint8_t dtype;              // the output's DType
  OpCheckStandard standard;
  CheckStatus status;
};

// Note [Kernel detail records]
// A kernel that models its own pipes (an opkit kernel, Note [Pipe timing] in opkit/block_state.h)
// sends, after it ran and before its task's kEnd record: one KernelBlockRecord per block (where it
// ran and how busy each pipe was: what the analyzer's pipe ratios need), one PipeInstructionRecord
// per instruction when the listener wants_pipe_instructions (the op simulator's instruction trace:
// the viewer's pipe lanes), and one KernelFindingRecord per sanitizer finding. Times are the
// device's virtual clock: the task's start plus the block's place on its core plus cycles / clock.
struct KernelBlockRecord {
  std::uint64_t task_id;
  std::uint64_t start_ns, end_ns;
  std::uint64_t cycles;                          // the block's critical path
  std::uint64_t busy_cycles[kNumPipes];          // per Pipe: cycles it ran instructions
  std::uint64_t mte2_vector_overlap_cycles;      // cycles MTE2 and Vector both ran (double buffering)
  std::uint32_t block, core;                     // block index; the core it ran on
  std::uint32_t instructions;                    // issued (including ones not recorded)
  std::uint32_t gm_copies, unaligned_gm_copies;  // MTE2/MTE3/FIXP transfers; those not 32-byte aligned in GM
  std::uint32_t ub_bytes, ub_capacity;           // UB the pipe's buffers took; what the core has
};

struct PipeInstructionRecord {
  std::uint64_t task_id;
  std::uint64_t start_ns, end_ns;
  std::uint64_t start_cycle, end_cycle;  // from the block's start
  std::uint64_t bytes;                   // moved (copies) or read (compute)
  const char* name;                      // "DataCopy", "Add", ... (interned)
  const char* file;                      // the call in the kernel's source (interned)
  std::uint32_t line;
  std::uint32_t block;
  Pipe pipe;
};

struct KernelFindingRecord {
  std::uint64_t task_id;
  const char* kernel;       // interned, as the other strings
  const char* instruction;  // "DataCopy", "AllocTensor", ...; "" for the launch as a whole
  const char* file;         // "" when the finding has no source line
  const char* message;
  std::uint32_t line;
  std::int32_t block;  // -1: about the launch as a whole (blocks writing the same bytes)
  KernelCheck check;
};

// Note [Collective records]
// A collective (Note [Collectives in virtual time] in emulator/collectives.h) is an ordinary task
// (task type HCCL) plus one CollectiveRecord, sent by the device's worker when it ran: the
// communicator and the collective's index on it (the same on every member, which is how a trace
// per rank pairs up), the arrival, start and end (wait = start - arrival, transit = end - start),
// the member that arrived last, and what this rank sent over which link (LinkRecords: the array is
// valid during the call only, a listener copies it). A CommunicatorRecord announces each
// communicator when it is created, with its members' world ranks and nodes; a RankRecord says which
// rank of which job the process is.
struct LinkRecord {
  std::int32_t peer_rank;  // world rank of the receiver
  LinkTransport transport;
  std::uint64_t bytes;
  std::uint64_t time_ns;  // the link's busy time
};

struct CollectiveRecord {
  std::uint64_t task_id;
  std::uint64_t communicator_id;  // CommunicatorRecord::communicator_id
  std::uint32_t sequence;         // the collective's index on its communicator
  CollectiveKind kind;
  CollectiveAlgorithm algorithm;
  ReduceOp reduce_op;
  DType dtype;
  std::uint64_t bytes;        // n of the link model (collectives.h)
  std::int32_t root_or_peer;  // world rank: broadcast's root, send's destination, recv's source; -1
  std::int32_t last_rank;     // world rank of the member that arrived last
  std::uint64_t arrival_ns;   // this rank reached the collective
  std::uint64_t start_ns;     // the last member arrived
  std::uint64_t end_ns;
  const LinkRecord* links;  // this rank's sends
  std::uint32_t num_links;
};

struct CommunicatorRecord {
  std::uint64_t communicator_id;  // process-unique
  const char* name;               // interned; the same on every member
  std::int32_t rank;              // this process's rank in it
  std::int32_t size;
  const char* members;  // interned: the members' world ranks in communicator order, "0,2,4,6"
  const char* nodes;    // interned: their nodes, "0,0,1,1"
};

struct RankRecord {
  std::int32_t rank;  // world rank
  std::int32_t world_size;
  std::int32_t node;        // emulated server: rank / ranks_per_node
  std::int32_t local_rank;  // on the node
  const char* hostname;     // interned: the real machine
  const char* launcher;     // interned: "mpirun", "torchrun", ...
};

struct MemoryRecord {
  std::uint64_t ts_ns;
  std::uint64_t address;  // device virtual address of the block/segment
  std::uint64_t bytes;
  std::uint64_t allocated_bytes;  // totals after this operation
  std::uint64_t reserved_bytes;
  std::int32_t device_id;
  std::uint32_t thread_id;
  MemoryOp op;
  // The operation's place in its device's allocator order (1, 2, ...), the low 32 bits: records of
  // different threads can carry one ts_ns and reach a listener in any order; seq orders them. 32 bits
  // keep the record in one 64-byte slot; a listener extends it (consecutive records of a device are
  // far less than 2^31 apart).
  std::uint32_t seq;
};
static_assert(sizeof(MemoryRecord) <= 56, "a MemoryRecord and its tag fill one cache line (inject/entries.h)");

struct MemcpyRecord {
  std::uint64_t task_id;
  std::uint64_t connection_id;
  std::uint64_t queued_ns;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t bytes;
  std::int32_t device_id;
  std::uint32_t stream_id;
  CopyKind kind;
};

// What a marker record says; the trace stores ranges and steps as MARKER rows of a MarkerKind.
enum class MarkerEvent : std::uint8_t { kRangePush = 0, kRangePop = 1, kStepBegin = 2, kStepEnd = 3 };

struct MarkerRecord {
  std::uint64_t ts_ns;
  const char* name;   // null for pops and step ends
  std::int64_t step;  // the step number for kStepBegin/kStepEnd, else -1
  std::uint32_t thread_id;
  MarkerEvent kind;
};

// One per device, sent when a listener subscribes (for devices that exist) and when a device is
// created while subscribed: what the analyzer needs to judge tasks against the hardware.
struct DeviceRecord {
  std::int32_t device_id;
  const char* name;  // spec name (interned)
  std::int32_t cube_cores, vector_cores;
  double clock_hz, cube_peak_flops, vector_peak_flops, memory_bandwidth;
  std::uint64_t memory_bytes;
  const char* precision_mode;  // e.g. "must_keep_origin_dtype"; "golden" in a golden run
  const char* overflow_mode;   // "inf_nan" or "saturation"
  std::uint8_t golden;         // 1: a golden run's device (NPUSCOPE_GOLDEN=1, Note [Golden run] in runtime.h)
  // What large, aligned work achieves (Note [Calibrated cost model] in cost_model.h): the f16 cube and
  // vector peaks times their efficiencies, the effective HBM bandwidth, and f32 cube work's rate.
  double cube_ceiling_flops, vector_ceiling_flops, memory_ceiling_bandwidth, cube_f32_rate;
};

// Delivered on the thread that produced the data, right after the kernel ran. `data` stays valid
// until the task's kEnd TaskRecord, which follows on the same thread. Only sent when the subscriber
// set wants_tensors.
struct TensorRecord {
  std::uint64_t task_id;
  const void* data;  // host-readable, `bytes` long, dtype below, contiguous row-major
  std::uint64_t bytes;
  std::int64_t dims[kMaxDims];
  std::uint8_t ndim;
  std::uint8_t dtype;  // a DType value
  TensorRole role;
  std::uint16_t index;
};

struct OverflowRecord {
  std::uint64_t task_id;
  std::uint64_t ts_ns;
  std::int32_t device_id;
  std::uint8_t saturated;  // 1: saturation mode clamped values and raised the float status
};

// A task end entry is three cache lines (inject/entries.h): a tag and at most 184 bytes of record.
static_assert(std::is_trivially_copyable_v<TaskRecord> && sizeof(TaskRecord) <= 184);
static_assert(std::is_trivially_copyable_v<TensorRecord>);
static_assert(std::is_trivially_copyable_v<HostOpRecord> && sizeof(HostOpRecord) <= 120);
static_assert(std::is_trivially_copyable_v<GradientRecord> && sizeof(GradientRecord) <= 120);
static_assert(std::is_trivially_copyable_v<LossScaleRecord> && sizeof(LossScaleRecord) <= 56);
static_assert(std::is_trivially_copyable_v<OpCheckRecord> && sizeof(OpCheckRecord) <= 120);
static_assert(std::is_trivially_copyable_v<KernelBlockRecord> && sizeof(KernelBlockRecord) <= 184);
static_assert(std::is_trivially_copyable_v<PipeInstructionRecord> && sizeof(PipeInstructionRecord) <= 120);
static_assert(std::is_trivially_copyable_v<KernelFindingRecord> && sizeof(KernelFindingRecord) <= 56);
static_assert(std::is_trivially_copyable_v<CollectiveRecord> && sizeof(CollectiveRecord) <= 120);
static_assert(std::is_trivially_copyable_v<CommunicatorRecord> && sizeof(CommunicatorRecord) <= 56);
static_assert(std::is_trivially_copyable_v<RankRecord> && sizeof(RankRecord) <= 56);

// Note [Record kinds]
// Every kind of record a hook point delivers is declared once, in NPUSCOPE_HOOK_RECORDS below (as
// Tracy declares its QueueTypes in one list): its struct, the name that spells its callback
// (`on_<name>`), its kind (CamelCase) and what is lost when one is dropped. Every per-layer list
// follows from it: the SubscriberTable's callbacks here; in the injection library the entry tags,
// their slot sizes and the default callback that stores a record (inject/entries.h,
// hook_callbacks.cpp), the drain thread's dispatch (row_builder.cpp), and the per-kind data-loss
// counters `dropped_records.<name>` (collector/trace_stats.h). The tables the rows go to are
// declared once in their own list (NPUSCOPE_TRACE_ROWS in collector/trace_rows.h): a record becomes
// a row in one converter (inject/record_rows.cpp), so a new record kind that fills a new table is
// four edits: its struct and list line here, its row and list line in trace_rows.h, its table in
// collector/src/schema.cpp, its converter in record_rows.cpp.
//
// X(Record, name, Kind, what is lost when one is dropped). The order is the SubscriberTable's layout
// (kHookApiVersion): new kinds go at the end.
#define NPUSCOPE_HOOK_RECORDS(X)                                                                                       \
  X(ApiRecord, api, Api, "Host API calls lost (API rows missing).")                                                    \
  X(TaskRecord, task, Task, "Device tasks lost (TASK rows missing).")                                                  \
  X(MemoryRecord, memory, Memory, "Allocator operations lost (MEMORY_RECORD rows missing).")                           \
  X(MemcpyRecord, memcpy, Memcpy, "Copies lost (MEMCPY rows missing).")                                                \
  X(MarkerRecord, marker, Marker, "Marker pushes, pops and steps lost.")                                               \
  X(TensorRecord, tensor, Tensor, "Tensor statistics or dumps lost (TENSOR rows missing).")                            \
  X(OverflowRecord, overflow, Overflow, "Overflow reports lost (a task's saturation flag).")                           \
  X(DeviceRecord, device, Device, "Device descriptions lost (DEVICE_INFO rows missing).")                              \
  X(HostOpRecord, host_op, HostOp, "Framework ops lost (PYTORCH_API rows missing).")                                   \
  X(GradientRecord, gradient, Gradient, "Gradient statistics lost (GRADIENT rows missing).")                           \
  X(LossScaleRecord, loss_scale, LossScale, "Loss-scale decisions lost (LOSS_SCALE rows).")                            \
  X(OpCheckRecord, op_check, OpCheck, "Online op checks lost (OP_CHECK rows missing).")                                \
  X(KernelBlockRecord, kernel_block, KernelBlock, "Custom kernels' block summaries lost (KERNEL_BLOCK rows missing).") \
  X(PipeInstructionRecord, pipe_instruction, PipeInstruction,                                                          \
    "Custom kernels' instructions lost (PIPE_INSTRUCTION rows missing).")                                              \
  X(KernelFindingRecord, kernel_finding, KernelFinding, "Sanitizer findings lost (KERNEL_FINDING rows missing).")      \
  X(CollectiveRecord, collective, Collective,                                                                          \
    "Collectives or their links lost (COMMUNICATION, COMMUNICATION_LINK rows missing).")                               \
  X(CommunicatorRecord, communicator, Communicator, "Communicators lost (COMMUNICATOR rows missing).")                 \
  X(RankRecord, rank, Rank, "Rank descriptions lost (META's rank keys missing).")

// What a listener gives the emulator. Any callback may be null. Callbacks run on the thread that
// produced the event (host threads for API/memory/markers, the device worker for tasks) and must
// not throw.
struct SubscriberTable {
  std::uint32_t api_version = kHookApiVersion;
  void* user = nullptr;
  bool wants_tensors = false;            // deliver TensorRecords (costs a callback per tensor)
  bool wants_api_enter = true;           // deliver on_api's enter records (the exit carries the start too)
  bool wants_task_queued = true;         // deliver on_task's kQueued (on the launching thread)
  bool wants_task_begin = true;          // deliver on_task's kBegin (kEnd repeats all it says, plus the end)
  bool wants_gradients = false;          // frameworks: compute and send GradientRecords (`npuscope run --grad-probe`)
  bool wants_op_checks = false;          // run each NPU kernel's golden in f64 and send OpCheckRecords (--check-ops)
  bool wants_pipe_instructions = false;  // opkit kernels: send a PipeInstructionRecord per instruction
  bool kernels_keep_going = false;       // opkit kernels: on a sanitizer finding, skip the instruction and run on
  // One callback per record kind: on_api, on_task, ... (Note [Record kinds]).
#define NPUSCOPE_HOOK_CALLBACK(Record, name, Kind, lost) void (*on_##name)(void* user, const Record&) = nullptr;
  NPUSCOPE_HOOK_RECORDS(NPUSCOPE_HOOK_CALLBACK)
#undef NPUSCOPE_HOOK_CALLBACK
  void (*on_shutdown)(void* user) = nullptr;  // process exit: flush and finalize
};

// The one pointer every hook point loads. An inline variable: one instance per process.
inline std::atomic<const SubscriberTable*> g_subscriber{nullptr};

inline const SubscriberTable* subscriber() noexcept { return g_subscriber.load(std::memory_order_acquire); }

// Publishes `table` (nullptr unsubscribes). The table must outlive its subscription.
inline void subscribe(const SubscriberTable* table) noexcept { g_subscriber.store(table, std::memory_order_release); }

}  // namespace npuscope::hooks

// The entry point an injection library exports; the emulator dlopen()s the library named by
// NPUSCOPE_INJECTION and calls it once. Returns 0 on success; on failure profiling stays off.
extern "C" {
using npuscope_injection_init_fn = int (*)(npuscope::hooks::SubscriberTable* table);
}
#define NPUSCOPE_INJECTION_INIT_SYMBOL "npuscope_injection_init"

// Note [Why profiling did not start]
// When the library cannot be loaded, has no entry point, refuses to start (a bad NPUSCOPE_CONFIG,
// an unwritable output) or implements another hook API version, profiling stays off and the
// workload runs on. Each party says why on stderr, and, when NPUSCOPE_INJECTION_STATUS names a file
// (`npuscope run` sets it), appends the same reason to it as one line, so that `npuscope run` can
// report the reason and exit non-zero instead of passing an unprofiled run off as a success.
#define NPUSCOPE_INJECTION_STATUS_ENV "NPUSCOPE_INJECTION_STATUS"

namespace npuscope::hooks {
// Appends `reason` and a newline to the file NPUSCOPE_INJECTION_STATUS names, if it is set.
inline void report_not_started(const char* reason) {
  const char* path = std::getenv(NPUSCOPE_INJECTION_STATUS_ENV);
  if (path == nullptr || *path == '\0') return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", reason);
    std::fclose(f);
  }
}
}  // namespace npuscope::hooks
