// One op, declared once; kernels register beside themselves (STYLE.md point 2).
//
// Each kernel file declares the op's schema (shape/dtype inference and cost) and registers an NPU
// kernel and a CPU golden kernel at its bottom:
//
//   NPUSCOPE_REGISTER_OP(OpSchema{.type = "Relu", .category = OpCategory::kVector, ...});
//   NPUSCOPE_REGISTER_KERNEL("Relu", Backend::kNpu, relu_npu);
//   NPUSCOPE_REGISTER_KERNEL("Relu", Backend::kCpu, relu_cpu);
//
// Most ops write one kernel template over the element type and register it in one line:
//   NPUSCOPE_REGISTER_FLOAT_KERNELS("Relu", relu_kernel);  // relu_kernel<float> on the NPU, <double> on the CPU
// and an op with nothing to round (data movement) registers one kernel for both backends:
//   NPUSCOPE_REGISTER_KERNEL_FOR_BOTH("Pad", pad_kernel);
//
// A second registration of the same op/backend fails at start-up naming both files and lines. An
// op with no NPU kernel (or whose NPU kernel declines the dtypes) runs its CPU kernel as an AI CPU
// task: that is the one generic fallback rule, not per-op code.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/numerics.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

enum class Backend : std::uint8_t { kNpu = 0, kCpu = 1 };

// How the precision mode treats an op.
enum class OpCategory : std::uint8_t {
  kCube,                // MatMul, Conv: f16/bf16 inputs, f32 accumulation
  kVector,              // element-wise and friends: computed per element, rounded per op
  kPrecisionSensitive,  // vector ops kept f32 under allow_mix_precision (Softmax, LayerNorm, Exp...)
  kDataMovement,        // copies, reshapes, gathers: no arithmetic, no rounding
};

struct TensorMeta {
  Shape shape;
  DType dtype = DType::kF32;
  bool present = true;  // false for an optional input left out (e.g. no bias)
  // The tensor's private format tag and its C0 (Tensor::format()); the trace shows a tagged tensor's
  // storage shape (Note [Private formats] in formats.h). Infer functions leave them at kND.
  Format format = Format::kND;
  std::uint8_t c0 = 0;
  std::int64_t numel() const { return shape_numel(shape); }
  std::uint64_t nbytes() const { return present ? static_cast<std::uint64_t>(numel()) * dtype_size(dtype) : 0; }
};

// What a kernel sees: raw, contiguous, host-readable buffers.
struct TensorView {
  std::byte* data = nullptr;  // null for an optional input left out
  DType dtype = DType::kF32;
  const Shape* shape = nullptr;
  std::int64_t numel = 0;

  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

struct KernelContext {
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  const Attrs& attrs;
  Backend backend = Backend::kCpu;
  // NPU: the dtype arithmetic is rounded to (f16 when a precision mode lowers an f32 op).
  // CPU: the output storage dtype (golden kernels compute in f32/f64 regardless).
  DType compute_dtype = DType::kF32;
  OverflowMode overflow_mode = OverflowMode::kInfNan;
  // Set by the store helpers (kernels/kernel_util.h).
  bool overflow = false;   // some output is inf/nan (inf_nan) or was clamped (saturation)
  bool saturated = false;  // saturation mode clamped at least one value
  // Results narrowed to f16/bf16 that were finite and non-zero and became zero (underflow) or
  // subnormal: Note [Underflow counts] in kernel_util.h.
  std::int64_t underflow = 0;
  std::int64_t subnormal = 0;
  // Bad data met by the kernel (an index out of range), first one only; see Note [Kernel faults].
  std::string fault;
  // The device the kernel runs on (null on the cpu device).
  const DeviceSpec* spec = nullptr;
  // Set by a kernel that models its own device time (an opkit kernel: the critical path of its
  // pipes); the task then lasts this long instead of the cost model's estimate, on device_block_dim
  // blocks when that is set (the tiling's, on the device's own spec).
  std::uint64_t device_ns = 0;
  std::uint32_t device_block_dim = 0;
  // The task the kernel runs as and its device start (NPU only): what a kernel that sends its own
  // detail to the hook listener puts in the records (Note [Kernel detail records] in hook_api.h).
  std::uint64_t task_id = 0;
  std::uint64_t start_ns = 0;
};

using KernelFn = void (*)(KernelContext& ctx);
using InferFn = std::vector<TensorMeta> (*)(std::span<const TensorMeta> inputs, const Attrs& attrs);
using CostFn = KernelCost (*)(std::span<const TensorMeta> inputs, std::span<const TensorMeta> outputs,
                              const Attrs& attrs);
// Optional: may an NPU kernel run these inputs? (false -> AI CPU fallback)
using SupportsFn = bool (*)(std::span<const TensorMeta> inputs, const Attrs& attrs);

struct OpSchema {
  const char* type = nullptr;
  OpCategory category = OpCategory::kVector;
  int min_inputs = 1;
  int max_inputs = 1;       // -1: variadic
  InferFn infer = nullptr;  // throws InvalidArgument naming the op and the bad input
  CostFn cost = nullptr;
  // A view (Reshape, Flatten, Squeeze, Unsqueeze, Identity): the output shares the input's storage
  // with a new shape, and no task runs, as torch_npu's view ops launch no kernel. (Tensors are never
  // written in place, so sharing is safe.) Its kernels still exist and copy, for direct tests.
  bool is_view = false;
  const char* file = nullptr;
  int line = 0;
  // Set at registration, not by the declaration: the host API the op's launch shows as ("aclnn" +
  // type, interned), so the per-op path builds no string for it.
  const char* api_name = nullptr;
};

struct KernelEntry {
  KernelFn fn = nullptr;
  SupportsFn supports = nullptr;
  const char* file = nullptr;
  int line = 0;
};

class OpRegistry {
 public:
  static OpRegistry& instance();

  void register_op(const OpSchema& schema);
  void register_kernel(std::string_view type, Backend backend, const KernelEntry& entry);

  // Throws InvalidArgument ("unknown op 'Foo'") for an op nobody declared.
  const OpSchema& schema(std::string_view type) const;
  const OpSchema* find_schema(std::string_view type) const;
  const KernelEntry* kernel(std::string_view type, Backend backend) const;
  std::vector<std::string> op_types() const;  // sorted

 private:
  struct Entry {
    OpSchema schema;
    KernelEntry kernels[2];
  };
  Entry& entry(std::string_view type);
  std::vector<std::pair<std::string, Entry>> entries_;  // sorted by type
};

namespace detail {
bool register_op(OpSchema schema, const char* file, int line);
bool register_kernel(const char* type, Backend backend, KernelFn fn, SupportsFn supports, const char* file, int line);
bool register_kernels(const char* type, KernelFn npu, KernelFn cpu, const char* file, int line);
}  // namespace detail

}  // namespace npuscope::emulator

#define NPUSCOPE_CONCAT_INNER(a, b) a##b
#define NPUSCOPE_CONCAT(a, b) NPUSCOPE_CONCAT_INNER(a, b)
#define NPUSCOPE_REGISTER_OP(...)                                                         \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_op_registered_, __LINE__) = \
      ::npuscope::emulator::detail::register_op(__VA_ARGS__, __FILE__, __LINE__)
// The kernel is variadic so that a template with several arguments (f<float, true>) needs no parentheses.
#define NPUSCOPE_REGISTER_KERNEL(type, backend, ...)                                          \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_kernel_registered_, __LINE__) = \
      ::npuscope::emulator::detail::register_kernel(type, backend, __VA_ARGS__, nullptr, __FILE__, __LINE__)
#define NPUSCOPE_REGISTER_KERNEL_IF(type, backend, fn, supports)                              \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_kernel_registered_, __LINE__) = \
      ::npuscope::emulator::detail::register_kernel(type, backend, fn, supports, __FILE__, __LINE__)
// kernel<float> on the NPU (f32 arithmetic, rounded to the compute dtype as it stores) and
// kernel<double> as the CPU golden. Template arguments after the element type follow the kernel:
// NPUSCOPE_REGISTER_FLOAT_KERNELS(kReduceSum, reduce_kernel, Reduce::kSum).
#define NPUSCOPE_REGISTER_FLOAT_KERNELS(type, kernel, ...)                                           \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_kernel_registered_, __LINE__) =        \
      ::npuscope::emulator::detail::register_kernels(type, kernel<float __VA_OPT__(, ) __VA_ARGS__>, \
                                                     kernel<double __VA_OPT__(, ) __VA_ARGS__>, __FILE__, __LINE__)
// One kernel for both backends: an op with nothing to round (copies, gathers, integer-exact ops).
#define NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(type, ...)                                          \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_kernel_registered_, __LINE__) = \
      ::npuscope::emulator::detail::register_kernels(type, __VA_ARGS__, __VA_ARGS__, __FILE__, __LINE__)
