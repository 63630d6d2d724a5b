// The trace vocabulary: every enumeration that crosses a layer, declared once.
//
// Note [One vocabulary]
// A dtype, a task type, a copy kind, a memory operation, a marker kind, a tensor role and an API
// kind mean the same thing in the emulator (which produces them), the hook records (which carry
// them), the trace (which stores their values) and the tools (which name them). Each is declared
// here once, as an X-macro list of (enumerator, stored value, name, ..., doc), in the lowest layer
// every other one includes (PyTorch's c10/core/ScalarType.h does the same for its dtypes). The enum,
// its count, its names, its parser and the enum sections of docs/schema.md all derive from the list,
// so adding a value is one line here. Values are stored in traces: never renumber, only append.
//
// Tools read stored values back as plain integers (a trace may come from a newer build): use the
// `*_from_value` functions, which say "unknown" instead of casting blindly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace npuscope {

// ---- dtypes ----
// X(enumerator, value, bytes, name, npy descr written, floating, aliases (space-separated), doc).
// bf16 has no numpy type: .npy files hold it widened to f32.
#define NPUSCOPE_DTYPES(X)                                                                                  \
  X(kF32, 0, 4, "f32", "<f4", true, "float32 float fp32", "32-bit float (4 bytes).")                        \
  X(kF16, 1, 2, "f16", "<f2", true, "float16 half fp16", "IEEE half (2 bytes).")                            \
  X(kBF16, 2, 2, "bf16", "<f4", true, "bfloat16", "bfloat16 (2 bytes); .npy files hold it widened to f32.") \
  X(kI8, 3, 1, "i8", "|i1", false, "int8", "Signed 8-bit integer.")                                         \
  X(kU8, 4, 1, "u8", "|u1", false, "uint8", "Unsigned 8-bit integer.")                                      \
  X(kI32, 5, 4, "i32", "<i4", false, "int32", "Signed 32-bit integer.")                                     \
  X(kI64, 6, 8, "i64", "<i8", false, "int64 long", "Signed 64-bit integer.")                                \
  X(kBool, 7, 1, "bool", "|b1", false, "", "Boolean, one byte (0 or 1).")                                   \
  X(kF64, 8, 8, "f64", "<f8", true, "float64 double fp64", "64-bit float (8 bytes); the CPU golden side only.")

enum class DType : std::uint8_t {
#define NPUSCOPE_X(e, v, ...) e = v,
  NPUSCOPE_DTYPES(NPUSCOPE_X)
#undef NPUSCOPE_X
};

struct DTypeInfo {
  DType dtype;
  std::size_t size;            // bytes per element
  std::string_view name;       // "f32", "bf16", ...: what users read and type
  std::string_view npy_descr;  // the .npy type a tensor of this dtype is written as
  bool floating;
  std::string_view aliases;  // other names parse_dtype accepts, space-separated
  std::string_view doc;
};

inline constexpr DTypeInfo kDTypes[] = {
#define NPUSCOPE_X(e, v, size, name, npy, floating, aliases, doc) {DType::e, size, name, npy, floating, aliases, doc},
    NPUSCOPE_DTYPES(NPUSCOPE_X)
#undef NPUSCOPE_X
};
inline constexpr int kNumDTypes = static_cast<int>(std::size(kDTypes));

namespace vocab_detail {
template <class Table>
constexpr bool values_are_indexes(const Table& table) {
  for (std::size_t i = 0; i < std::size(table); ++i) {
    if (static_cast<std::size_t>(table[i].dtype) != i) return false;
  }
  return true;
}
}  // namespace vocab_detail
static_assert(vocab_detail::values_are_indexes(kDTypes), "dtype values must be 0, 1, 2, ... in order");

constexpr const DTypeInfo& dtype_info(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }
constexpr std::size_t dtype_size(DType t) { return dtype_info(t).size; }
constexpr std::string_view dtype_name(DType t) { return dtype_info(t).name; }
constexpr bool is_floating(DType t) { return dtype_info(t).floating; }

// A stored value (TENSOR.dtype, TASK.compute_dtype) this build knows, else nullopt.
constexpr std::optional<DType> dtype_from_value(std::int64_t value) {
  if (value < 0 || value >= kNumDTypes) return std::nullopt;
  return static_cast<DType>(value);
}

// Our names and the aliases ("float32", "half", "bfloat16", "int64", ...); nullopt for anything else.
constexpr std::optional<DType> find_dtype(std::string_view text) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == text) return d.dtype;
    std::string_view rest = d.aliases;
    while (!rest.empty()) {
      const std::size_t end = rest.find(' ');
      if (rest.substr(0, end) == text) return d.dtype;
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  return std::nullopt;
}

// ---- the smaller enumerations: X(enumerator, stored value, name, doc) ----

// msprof's task types, plus the ones an emulator needs. TASK.task_type.
#define NPUSCOPE_TASK_TYPES(X)                                                                                    \
  X(kAiCore, 0, "AI_CORE", "Cube unit (MatMul, Gemm, BatchMatMul, Conv).")                                        \
  X(kAiVectorCore, 1, "AI_VECTOR_CORE", "Vector unit (element-wise ops, reductions, data movement).")             \
  X(kAiCpu, 2, "AI_CPU", "The device's CPU: an op with no NPU kernel ran its CPU kernel (`fallback` = 1). Slow.") \
  X(kMemcpy, 3, "MEMCPY", "A copy on a stream (copies are recorded in MEMCPY, with their direction and size).")   \
  X(kEventRecord, 4, "EVENT_RECORD", "An event recorded on a stream.")                                            \
  X(kEventWait, 5, "EVENT_WAIT", "A stream waiting for an event.")                                                \
  X(kHostCpu, 6, "HOST_CPU", "An op run on the `cpu` device (the golden backend), `device_id` = -1.")             \
  X(kCommunication, 7, "HCCL", "A collective or send/recv between ranks (COMMUNICATION has its detail).")         \
  X(kMixAiCore, 8, "MIX_AIC", "A mix kernel led by the cube: AI Cores with their vector cores (real Ascend).")    \
  X(kMixAiVector, 9, "MIX_AIV", "A mix kernel led by the vector cores (real Ascend).")                            \
  X(kKernel, 10, "KERNEL", "A GPU's (or another accelerator's) kernel, from a Kineto trace: no unit split.")      \
  X(kMemset, 11, "MEMSET", "A memset on a stream.")                                                               \
  X(kCommunicationTask, 12, "HCCL_TASK",                                                                          \
    "A link-level task of a collective (notify, SDMA/RDMA transfer, reduce): its HCCL op is an HCCL task.")       \
  X(kOtherDeviceTask, 13, "OTHER", "A device task a real profile records that is no op (STARS_COMMON, ...).")     \
  X(kDsa, 14, "DSA_SQE",                                                                                          \
    "An op run on the Data Stream Accelerator (real Ascend: DropoutGenMask's DSAGenBitMask, random numbers).")

// Nsight Systems' copyKind values. MEMCPY.copy_kind.
#define NPUSCOPE_COPY_KINDS(X)                                                                   \
  X(kUnknown, 0, "unknown", "Not said (a real profile's copy whose export does not record it).") \
  X(kHostToDevice, 1, "HtoD", "Host to device.")                                                 \
  X(kDeviceToHost, 2, "DtoH", "Device to host.")                                                 \
  X(kDeviceToDevice, 8, "DtoD", "Device to device.")                                             \
  X(kHostToHost, 10, "HtoH", "Host to host (a real profile's).")

// What the caching allocator did. MEMORY_RECORD.op.
#define NPUSCOPE_MEMORY_OPS(X)                                                                      \
  X(kAlloc, 0, "alloc", "A tensor block was allocated (allocated_bytes grows).")                    \
  X(kFree, 1, "free", "A tensor block was freed; the allocator keeps it cached.")                   \
  X(kReserve, 2, "reserve", "The allocator took a segment from the device (reserved_bytes grows).") \
  X(kRelease, 3, "release", "The allocator gave a cached segment back to the device.")

// What a MARKER row is. MARKER.kind.
#define NPUSCOPE_MARKER_KINDS(X)                                         \
  X(kRange, 0, "range", "A named range the workload pushed and popped.") \
  X(kStep, 1, "step", "A training/inference step; `step` holds its number.")

// Which side of a task a tensor is. TENSOR.role, COMPARE_RESULT.role.
#define NPUSCOPE_TENSOR_ROLES(X)             \
  X(kInput, 0, "input", "The task read it.") \
  X(kOutput, 1, "output", "The task wrote it.")

// What a host runtime API call does, so that tools never guess it from the call's name. API.kind.
#define NPUSCOPE_API_KINDS(X)                                                                                     \
  X(kOther, 0, "other",                                                                                           \
    "Anything else (and every call of a trace recorded before API kinds existed, unless named below).")           \
  X(kLaunch, 1, "launch", "Launches a kernel (`aclnn*`); returns without waiting for the device.")                \
  X(kSynchronize, 2, "synchronize", "Blocks the host until the device (a stream, an event, the device) is done.") \
  X(kMemcpy, 3, "memcpy", "A blocking copy (`aclrtMemcpy`): the host waits for it and for the stream before it.") \
  X(kMemcpyAsync, 4, "memcpy_async", "A copy queued on a stream (`aclrtMemcpyAsync`); the host goes on.")         \
  X(kMalloc, 5, "malloc", "Device memory allocation (`aclrtMalloc`).")                                            \
  X(kFree, 6, "free", "Device memory release (`aclrtFree`).")                                                     \
  X(kEvent, 7, "event", "Records an event on a stream, or makes a stream wait for one; the host goes on.")

// The layer of the software stack an API call belongs to (msprof's ENUM_API_TYPE, Kineto's runtime
// and driver categories). API.level.
#define NPUSCOPE_API_LEVELS(X)                                                                                 \
  X(kUnknown, 0, "unknown", "Not said (a trace recorded before API levels, or a source that does not say).")   \
  X(kAcl, 1, "acl", "AscendCL, the application's API (`aclrtMemcpy`, `aclnnAdd`, ...); the emulator's calls.") \
  X(kModel, 2, "model", "CANN's model layer (GE graph execution).")                                            \
  X(kNode, 3, "node", "CANN's node layer (an op's launch inside CANN).")                                       \
  X(kHccl, 4, "hccl", "HCCL's API (`HcclAllReduce`, ...).")                                                    \
  X(kRuntime, 5, "runtime", "The runtime: CANN's runtime, CUDA's (`cuda_runtime`), HIP's, a PrivateUse1 one.") \
  X(kDriver, 6, "driver", "The driver API under the runtime (`cuda_driver`: `cuLaunchKernelEx`, ...).")

// What a PYTORCH_API row is: a framework op on the host timeline (what torch_npu's profiler records
// through PyTorch's RecordFunction, and the module hierarchy msprobe names). PYTORCH_API.kind.
#define NPUSCOPE_HOST_OP_KINDS(X)                                                                                      \
  X(kAtenOp, 0, "aten_op", "An aten op (`aten::addmm`, ...), as PyTorch's RecordFunction reports it.")                 \
  X(kBackwardFunction, 1, "backward_function",                                                                         \
    "An autograd node run by the backward pass (`autograd::engine::evaluate_function: AddmmBackward0`).")              \
  X(kModule, 2, "module",                                                                                              \
    "An `nn.Module` call, named as msprobe names it (`Module.layer1.0.conv1.Conv2d.forward.0`).")                      \
  X(kOptimizer, 3, "optimizer", "An optimizer call (`Optimizer.step#SGD.step`, `Optimizer.zero_grad#SGD.zero_grad`).") \
  X(kUserScope, 4, "user_scope", "A range the script opened (`torch.autograd.profiler.record_function`).")             \
  X(kPythonFunction, 5, "python_function",                                                                             \
    "A Python function a real profile's stack tracer recorded (with_stack: `torch/nn/modules/conv.py(443): "           \
    "forward`).")                                                                                                      \
  X(kApi, 6, "api",                                                                                                    \
    "A part of msprobe's dump a PyTorch script recorded under `npuscope run --dump` (Note [msprobe fragments]): a "    \
    "Python API call (`Functional.conv2d.0.forward`, `Tensor.add_.0.forward`), its backward "                          \
    "(`Functional.conv2d.0.backward`), a gradient of a module's (`Module.fc.Linear.backward.0`, "                      \
    "`Module.fc.Linear.parameters_grad.0`); `args_id` holds its arguments.")

// Which pass of a training step a framework op (and the device tasks it launched) belongs to.
// PYTORCH_API.pass.
#define NPUSCOPE_MODEL_PASSES(X)                                                                    \
  X(kForward, 0, "forward", "The forward pass, and everything outside backward and the optimizer.") \
  X(kBackward, 1, "backward", "The backward pass (autograd's engine: gradients).")                  \
  X(kOptimizer, 2, "optimizer", "The optimizer's step and zero_grad.")

// msprobe's API precision standards (api_precision_standard.yaml): how an op's output is judged
// against its f64 golden. OP_CHECK.standard.
#define NPUSCOPE_OP_CHECK_STANDARDS(X)                                                                       \
  X(kBinary, 0, "binary", "Bit-exact (二进制一致法): integer outputs and exact ops (relu, max, copies...).") \
  X(kAbsoluteThreshold, 1, "absolute_threshold",                                                             \
    "Element-wise thresholds (绝对阈值法): add, sub, mul, div and their kin.")                               \
  X(kUlp, 2, "ulp", "Units in the last place (ULP误差): matmuls.")                                           \
  X(kThousandth, 3, "thousandth", "Share of elements within 0.1 % (双千指标法): convolutions.")              \
  X(kBenchmark, 4, "benchmark", "Small-value error ratio, RMSE and relative errors (标杆比对法): the rest.")

// An online op check's verdict. OP_CHECK.status.
#define NPUSCOPE_CHECK_STATUSES(X)                                                \
  X(kPass, 0, "pass", "Within the standard.")                                     \
  X(kWarning, 1, "warning", "Within the error bound but past the warning bound.") \
  X(kError, 2, "error", "Beyond the standard's error bound.")

// The AI Core's pipes an opkit kernel's instructions run on (Note [Pipe timing] in opkit/block_state.h),
// named as the op simulator's lanes. Each runs its instructions in order; pipes run concurrently.
// PIPE_INSTRUCTION.pipe; KERNEL_BLOCK has one busy column per pipe.
#define NPUSCOPE_PIPES(X)                                                                                 \
  X(kScalar, 0, "SCALAR", "The scalar unit: issues every instruction (1 cycle each), GetValue/SetValue.") \
  X(kVector, 1, "VECTOR", "The vector unit: element-wise, reductions, Cast, Duplicate (UB to UB).")       \
  X(kCube, 2, "CUBE", "The cube unit: Mmad (L0A x L0B into L0C).")                                        \
  X(kMte1, 3, "MTE1", "Memory transfer engine 1: L1 to L0A/L0B (LoadData).")                              \
  X(kMte2, 4, "MTE2", "Memory transfer engine 2: global memory to UB or L1 (DataCopy in).")               \
  X(kMte3, 5, "MTE3", "Memory transfer engine 3: UB to global memory (DataCopy out).")                    \
  X(kFix, 6, "FIXP", "The fixpipe: L0C to global memory (Fixpipe).")

// The sanitizer's checks on an opkit kernel (msSanitizer's memcheck / racecheck and the CPU twin's
// checks, shared/REFERENCE.md "Ascend C"). KERNEL_FINDING.check_kind.
#define NPUSCOPE_KERNEL_CHECKS(X)                                                                                \
  X(kGmReadOutOfRange, 0, "gm_read_out_of_range", "A read of global memory outside every tensor of the launch.") \
  X(kGmWriteOutOfRange, 1, "gm_write_out_of_range", "A write to global memory outside every output.")            \
  X(kBufferOverflow, 2, "buffer_overflow", "The pipe's buffers need more of a memory (UB, L1, L0) than it has.") \
  X(kLocalOutOfRange, 3, "local_out_of_range", "An access past the end of a local tensor.")                      \
  X(kMisalignedCopy, 4, "misaligned_copy",                                                                       \
    "A DataCopy whose length or local address is not a multiple of 32 bytes (use DataCopyPad).")                 \
  X(kUninitializedRead, 5, "uninitialized_read", "A read of local memory nothing wrote.")                        \
  X(kDeQueEmpty, 6, "deque_without_enque", "DeQue on a queue with nothing enqueued.")                            \
  X(kQueueFull, 7, "enque_full_queue", "EnQue on a queue already holding its depth of tensors.")                 \
  X(kAllocExhausted, 8, "alloc_without_free_buffer", "AllocTensor with every buffer of the queue in use.")       \
  X(kDoubleFree, 9, "double_free", "FreeTensor of a tensor already freed (or never allocated).")                 \
  X(kLeak, 10, "tensor_leak", "A tensor still allocated or enqueued when the kernel ends.")                      \
  X(kGmWriteOverlap, 11, "gm_write_overlap", "Two blocks wrote the same global memory bytes (not atomic add).")  \
  X(kMmadParams, 12, "mmad_params", "Mmad parameters or buffer addresses out of range.")                         \
  X(kBadArgument, 13, "bad_argument", "An instruction's argument out of its range (count, repeat, dtype).")

// Collectives (Note [Link model] in emulator/link_model.h), named as HCCL names them. COMMUNICATION.kind.
#define NPUSCOPE_COLLECTIVE_KINDS(X)                                                                                 \
  X(kAllReduce, 0, "allreduce", "Every rank gets the reduction of every rank's buffer (HcomAllReduce).")             \
  X(kAllGather, 1, "allgather", "Every rank gets every rank's buffer, in rank order (HcomAllGather).")               \
  X(kReduceScatter, 2, "reduce_scatter", "Rank r gets chunk r of the reduction (HcomReduceScatter).")                \
  X(kBroadcast, 3, "broadcast", "Every rank gets the root's buffer (HcomBroadcast).")                                \
  X(kAllToAll, 4, "all_to_all", "Rank r sends its chunk d to rank d and gets chunk r of every rank (HcomAllToAll).") \
  X(kSend, 5, "send", "Sends a buffer to one peer (HcomSend).")                                                      \
  X(kRecv, 6, "recv", "Receives a buffer from one peer (HcomReceive).")                                              \
  X(kBarrier, 7, "barrier", "Every rank waits for the last one to arrive.")

// The algorithm a collective ran with (HCCL_ALGO's names). COMMUNICATION.algorithm.
#define NPUSCOPE_COLLECTIVE_ALGORITHMS(X)                                                                    \
  X(kFullMesh, 0, "fullmesh", "Inside a server's HCCS full mesh: every rank talks to every peer at once.")   \
  X(kRing, 1, "ring", "Ring: p - 1 steps per phase, each rank sends to the next one.")                       \
  X(kHalvingDoubling, 2, "H-D_R", "Recursive halving-doubling: log2(p) steps; extra ranks folded in first.") \
  X(kPairwise, 3, "pairwise", "All-to-all in p - 1 pairwise exchanges.")                                     \
  X(kPointToPoint, 4, "p2p", "One transfer to one peer (send / recv), or none (barrier of one rank).")

// Reduction of a reducing collective (HcclReduceOp). COMMUNICATION.reduce_op.
#define NPUSCOPE_REDUCE_OPS(X)                 \
  X(kSum, 0, "sum", "Element-wise sum.")       \
  X(kProd, 1, "prod", "Element-wise product.") \
  X(kMax, 2, "max", "Element-wise maximum.")   \
  X(kMin, 3, "min", "Element-wise minimum.")   \
  X(kNone, 4, "none", "Not a reducing collective.")

// The link a transfer took, as msprof's communication matrix names it. COMMUNICATION_LINK.transport.
#define NPUSCOPE_LINK_TRANSPORTS(X)                                                  \
  X(kLocal, 0, "LOCAL", "A rank to itself (a copy in device memory).")               \
  X(kHccs, 1, "HCCS", "Between two devices of one server (HCCS mesh).")              \
  X(kPcie, 2, "PCIE", "Between two devices of one server over PCIe (not modelled).") \
  X(kRdma, 3, "RDMA", "Between servers (RoCE).")

// msprobe's verdict on a compared tensor, and on an op (Note [Verdicts] in comparator/src/verdict.h).
// COMPARE_RESULT.verdict.
#define NPUSCOPE_VERDICTS(X)                                                                              \
  X(kPass, 0, "pass",                                                                                     \
    "Within msprobe's thresholds (Cosine >= 0.99 or MaxAbsErr <= 0.001; Cosine >= 0.9; MaxAbsErr <= 1).") \
  X(kFail, 1, "fail", "Outside them, or not comparable (shapes differ, NaN/Inf at other places).")        \
  X(kNotApplicable, 2, "n/a", "Nothing to compare: no counterpart, or neither data nor statistics on one side.")

// Where a failing op's error came from (Note [Verdicts]). COMPARE_RESULT.origin.
#define NPUSCOPE_ERROR_ORIGINS(X)                                                                                 \
  X(kNone, 0, "none", "The op did not fail.")                                                                     \
  X(kIntroduced, 1, "introduced", "The op failed although its inputs matched the golden run: it made the error.") \
  X(kInherited, 2, "inherited", "The op failed and so did one of its inputs: the error came from earlier.")

// How an op of one run was paired with an op of the other (Note [Op pairing] in
// analyzer/op_pairing.h): `npuscope compare`'s and `npuscope diff`'s match columns. Not stored.
#define NPUSCOPE_PAIRING_STAGES(X)                                                                \
  X(kName, 0, "name", "Same op name and call index.")                                             \
  X(kNameMap, 1, "name map",                                                                      \
    "Same call index, the name renamed by the name map (compare --mapping, diff --op-name-map).") \
  X(kTypeShape, 2, "type+shape", "Same op type and input shapes, in execution order.")            \
  X(kTypeOrder, 3, "type+order", "Same op type, in execution order.")

// Which kind of device. Not stored in a table (device_id -1 is the cpu device); the emulator's own.
#define NPUSCOPE_DEVICE_KINDS(X)               \
  X(kCpu, 0, "cpu", "The CPU golden backend.") \
  X(kNpu, 1, "npu", "The emulated NPU.")

#define NPUSCOPE_ENUM_VALUE(e, v, name, doc) e = v,
enum class TaskType : std::uint8_t { NPUSCOPE_TASK_TYPES(NPUSCOPE_ENUM_VALUE) };
enum class CopyKind : std::uint8_t { NPUSCOPE_COPY_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class MemoryOp : std::uint8_t { NPUSCOPE_MEMORY_OPS(NPUSCOPE_ENUM_VALUE) };
enum class MarkerKind : std::uint8_t { NPUSCOPE_MARKER_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class TensorRole : std::uint8_t { NPUSCOPE_TENSOR_ROLES(NPUSCOPE_ENUM_VALUE) };
enum class ApiKind : std::uint8_t { NPUSCOPE_API_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class ApiLevel : std::uint8_t { NPUSCOPE_API_LEVELS(NPUSCOPE_ENUM_VALUE) };
enum class DeviceKind : std::uint8_t { NPUSCOPE_DEVICE_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class HostOpKind : std::uint8_t { NPUSCOPE_HOST_OP_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class ModelPass : std::uint8_t { NPUSCOPE_MODEL_PASSES(NPUSCOPE_ENUM_VALUE) };
enum class OpCheckStandard : std::uint8_t { NPUSCOPE_OP_CHECK_STANDARDS(NPUSCOPE_ENUM_VALUE) };
enum class CheckStatus : std::uint8_t { NPUSCOPE_CHECK_STATUSES(NPUSCOPE_ENUM_VALUE) };
enum class Pipe : std::uint8_t { NPUSCOPE_PIPES(NPUSCOPE_ENUM_VALUE) };
enum class KernelCheck : std::uint8_t { NPUSCOPE_KERNEL_CHECKS(NPUSCOPE_ENUM_VALUE) };
enum class CollectiveKind : std::uint8_t { NPUSCOPE_COLLECTIVE_KINDS(NPUSCOPE_ENUM_VALUE) };
enum class CollectiveAlgorithm : std::uint8_t { NPUSCOPE_COLLECTIVE_ALGORITHMS(NPUSCOPE_ENUM_VALUE) };
enum class ReduceOp : std::uint8_t { NPUSCOPE_REDUCE_OPS(NPUSCOPE_ENUM_VALUE) };
enum class LinkTransport : std::uint8_t { NPUSCOPE_LINK_TRANSPORTS(NPUSCOPE_ENUM_VALUE) };
enum class Verdict : std::uint8_t { NPUSCOPE_VERDICTS(NPUSCOPE_ENUM_VALUE) };
enum class ErrorOrigin : std::uint8_t { NPUSCOPE_ERROR_ORIGINS(NPUSCOPE_ENUM_VALUE) };
enum class PairingStage : std::uint8_t { NPUSCOPE_PAIRING_STAGES(NPUSCOPE_ENUM_VALUE) };
#undef NPUSCOPE_ENUM_VALUE

// One value of an enumeration, for names and docs.
template <class E>
struct EnumValue {
  E value;
  std::string_view name;
  std::string_view doc;
};

// The values of each enumeration, in declaration order: `enum_values<TaskType>()`.
template <class E>
struct EnumTraits;

#define NPUSCOPE_ENUM_ENTRY(e, v, name, doc) {Enum::e, name, doc},
// kDocName names the enumeration in docs/schema.md; kColumns says where the trace stores it.
#define NPUSCOPE_DECLARE_ENUM_TRAITS(E, LIST, DOC_NAME, COLUMNS)           \
  template <>                                                              \
  struct EnumTraits<E> {                                                   \
    using Enum = E;                                                        \
    static constexpr std::string_view kDocName = DOC_NAME;                 \
    static constexpr std::string_view kColumns = COLUMNS;                  \
    static constexpr EnumValue<E> kValues[] = {LIST(NPUSCOPE_ENUM_ENTRY)}; \
  };
NPUSCOPE_DECLARE_ENUM_TRAITS(TaskType, NPUSCOPE_TASK_TYPES, "task_type", "TASK.task_type")
NPUSCOPE_DECLARE_ENUM_TRAITS(CopyKind, NPUSCOPE_COPY_KINDS, "copy_kind", "MEMCPY.copy_kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(MemoryOp, NPUSCOPE_MEMORY_OPS, "memory_op", "MEMORY_RECORD.op")
NPUSCOPE_DECLARE_ENUM_TRAITS(MarkerKind, NPUSCOPE_MARKER_KINDS, "marker_kind", "MARKER.kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(TensorRole, NPUSCOPE_TENSOR_ROLES, "role", "TENSOR.role, COMPARE_RESULT.role")
NPUSCOPE_DECLARE_ENUM_TRAITS(ApiKind, NPUSCOPE_API_KINDS, "api_kind", "API.kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(ApiLevel, NPUSCOPE_API_LEVELS, "api_level", "API.level")
NPUSCOPE_DECLARE_ENUM_TRAITS(DeviceKind, NPUSCOPE_DEVICE_KINDS, "device_kind", "")
NPUSCOPE_DECLARE_ENUM_TRAITS(HostOpKind, NPUSCOPE_HOST_OP_KINDS, "host_op_kind", "PYTORCH_API.kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(ModelPass, NPUSCOPE_MODEL_PASSES, "pass", "PYTORCH_API.pass")
NPUSCOPE_DECLARE_ENUM_TRAITS(OpCheckStandard, NPUSCOPE_OP_CHECK_STANDARDS, "op_check_standard", "OP_CHECK.standard")
NPUSCOPE_DECLARE_ENUM_TRAITS(CheckStatus, NPUSCOPE_CHECK_STATUSES, "check_status", "OP_CHECK.status")
NPUSCOPE_DECLARE_ENUM_TRAITS(Pipe, NPUSCOPE_PIPES, "pipe", "PIPE_INSTRUCTION.pipe")
NPUSCOPE_DECLARE_ENUM_TRAITS(KernelCheck, NPUSCOPE_KERNEL_CHECKS, "kernel_check", "KERNEL_FINDING.check_kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(CollectiveKind, NPUSCOPE_COLLECTIVE_KINDS, "collective_kind", "COMMUNICATION.kind")
NPUSCOPE_DECLARE_ENUM_TRAITS(CollectiveAlgorithm, NPUSCOPE_COLLECTIVE_ALGORITHMS, "collective_algorithm",
                             "COMMUNICATION.algorithm")
NPUSCOPE_DECLARE_ENUM_TRAITS(ReduceOp, NPUSCOPE_REDUCE_OPS, "reduce_op", "COMMUNICATION.reduce_op")
NPUSCOPE_DECLARE_ENUM_TRAITS(LinkTransport, NPUSCOPE_LINK_TRANSPORTS, "link_transport", "COMMUNICATION_LINK.transport")
NPUSCOPE_DECLARE_ENUM_TRAITS(Verdict, NPUSCOPE_VERDICTS, "verdict", "COMPARE_RESULT.verdict")
NPUSCOPE_DECLARE_ENUM_TRAITS(ErrorOrigin, NPUSCOPE_ERROR_ORIGINS, "origin", "COMPARE_RESULT.origin")
NPUSCOPE_DECLARE_ENUM_TRAITS(PairingStage, NPUSCOPE_PAIRING_STAGES, "pairing_stage", "")
#undef NPUSCOPE_DECLARE_ENUM_TRAITS
#undef NPUSCOPE_ENUM_ENTRY

template <class E>
constexpr const auto& enum_values() {
  return EnumTraits<E>::kValues;
}

// A stored value this build knows, else nullopt (a newer trace, or a damaged one).
template <class E>
constexpr std::optional<E> enum_from_value(std::int64_t value) {
  for (const auto& v : enum_values<E>()) {
    if (static_cast<std::int64_t>(v.value) == value) return v.value;
  }
  return std::nullopt;
}

// "AI_CORE", "HtoD", "alloc", ...; "?" for a value outside the list (never for a declared one).
template <class E>
constexpr std::string_view enum_name(E e) {
  for (const auto& v : enum_values<E>()) {
    if (v.value == e) return v.name;
  }
  return "?";
}

template <class E>
constexpr std::optional<E> find_enum(std::string_view name) {
  for (const auto& v : enum_values<E>()) {
    if (v.name == name) return v.value;
  }
  return std::nullopt;
}

// Whether a stored value (a row's integer column) is this enumerator: `is(t.task_type, TaskType::kAiCpu)`.
template <class E>
constexpr bool is(std::int64_t stored, E e) {
  return stored == static_cast<std::int64_t>(e);
}

// Note [What is an op]
// Every tool that pairs or counts ops asks of a task's type (a stored value) one of these:
// - is_device_kernel: it ran an op's kernel on a device unit (AI Core, AI Vector, AI CPU, a real
//   Ascend's mix kernels, a GPU's kernel): the analyzer's per-kernel findings and msprof's op_statistic.
// - is_kernel_op: it ran an op's kernel at all, on a device unit or on the CPU golden backend
//   (HOST_CPU): an op whose outputs a kernel computed, which `npuscope compare` judges and pairs.
// - is_kernel_or_collective_op: that, or a collective (HCCL): every op whose device time a profile
//   accounts, which `npuscope diff` pairs and the viewer's Diff panel looks up. A collective moves
//   data rather than computing it: compare judges its effect in the next op's inputs.
// Copies and events are none of these (MEMCPY and the stream's own bookkeeping).
// A DSA op is one (msprof's op_summary, op_statistic and step_trace_time's Computing count it).
constexpr bool is_device_kernel(std::int64_t task_type) {
  return is(task_type, TaskType::kAiCore) || is(task_type, TaskType::kAiVectorCore) ||
         is(task_type, TaskType::kAiCpu) || is(task_type, TaskType::kMixAiCore) ||
         is(task_type, TaskType::kMixAiVector) || is(task_type, TaskType::kKernel) || is(task_type, TaskType::kDsa);
}
constexpr bool is_kernel_op(std::int64_t task_type) {
  return is_device_kernel(task_type) || is(task_type, TaskType::kHostCpu);
}
constexpr bool is_kernel_or_collective_op(std::int64_t task_type) {
  return is_kernel_op(task_type) || is(task_type, TaskType::kCommunication);
}

// The pipes, and the sanitizer's checks, as many as there are (values are 0, 1, ... in order).
inline constexpr int kNumPipes = static_cast<int>(std::size(EnumTraits<Pipe>::kValues));
inline constexpr int kNumKernelChecks = static_cast<int>(std::size(EnumTraits<KernelCheck>::kValues));

// The calls that make the host wait for the device: the idle-time analysis's "sync wait".
constexpr bool blocks_host(ApiKind k) { return k == ApiKind::kSynchronize || k == ApiKind::kMemcpy; }

}  // namespace npuscope
