// A kernel registered as an op of the emulator's dispatcher, so that `npuscope run`, `analyze`,
// `compare` and the viewer treat it like any op: its NPU kernel is the opkit kernel (run over the
// blocks its tiling asks for, its task lasting the kernel's critical path), its CPU golden a
// function the author gives.
//
//   struct AddTiling { std::uint32_t total, tile; };
//   void add_tiling(opkit::TilingContext& t) {           // the host tiling function
//     t.block_dim = 8;
//     t.SetTiling(AddTiling{...});
//   }
//   extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
//     GET_TILING_DATA(td, tiling, AddTiling);
//     ...
//   }
//   NPUSCOPE_OPKIT_OP(add_custom, {.type = "AddCustom", .num_inputs = 2, .tiling = add_tiling,
//                                  .golden = add_golden});
//
// The kernel's parameters are the op's inputs, then its outputs, then (when the tiling asks for
// workspace) the workspace, then the tiling data: the order of an Ascend C kernel's.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "npuscope/emulator/op_registry.h"
#include "npuscope/opkit/pipe_costs.h"
#include "npuscope/opkit/types.h"

namespace npuscope::opkit {

// What a host tiling function sees and fills (Ascend C's TilingContext, reduced).
struct TilingContext {
  std::span<const emulator::TensorMeta> inputs;
  std::span<const emulator::TensorMeta> outputs;
  const emulator::Attrs* attrs = nullptr;
  const emulator::DeviceSpec* spec = nullptr;
  CoreType core = CoreType::kVector;

  std::uint32_t block_dim = 1;        // out: blocks to launch
  std::uint64_t workspace_bytes = 0;  // out: global scratch the kernel gets before its tiling argument
  std::vector<std::byte> tiling;      // out: the tiling data (SetTiling)

  template <class T>
  void SetTiling(const T& data) {  // NOLINT(readability-identifier-naming): Ascend C's spelling
    static_assert(std::is_trivially_copyable_v<T>, "tiling data must be trivially copyable");
    tiling.resize(sizeof(T));
    std::memcpy(tiling.data(), &data, sizeof(T));
  }
  std::uint32_t GetCoreNum() const { return core_count(*spec, core); }  // NOLINT
  std::uint64_t GetUbSize() const { return spec->ub_bytes; }            // NOLINT
};

struct CustomOpDef {
  const char* type = nullptr;  // the op type, e.g. "AddCustom"
  CoreType core = CoreType::kVector;
  int num_inputs = 1;
  int num_outputs = 1;
  void (*tiling)(TilingContext&) = nullptr;
  emulator::KernelFn golden = nullptr;  // the CPU golden kernel
  emulator::InferFn infer = nullptr;    // default: every output shaped and typed as input 0
  emulator::OpCategory category = emulator::OpCategory::kVector;
};

namespace detail {
using KernelCall = void (*)(std::span<const GM_ADDR> args);

template <class... P, std::size_t... I>
void call_with(void (*kernel)(P...), std::span<const GM_ADDR> args, std::index_sequence<I...>) {
  kernel(args[I]...);
}
template <class... P>
void call_kernel(void (*kernel)(P...), std::span<const GM_ADDR> args) {
  static_assert((std::is_same_v<P, GM_ADDR> && ...), "an opkit kernel takes GM_ADDR parameters only");
  call_with(kernel, args, std::index_sequence_for<P...>{});
}
template <class... P>
constexpr int arity(void (*)(P...)) {
  return sizeof...(P);
}

void run_custom_op(const CustomOpDef& def, int arity, KernelCall call, emulator::KernelContext& ctx);
emulator::KernelCost custom_op_cost(const CustomOpDef& def, std::span<const emulator::TensorMeta> inputs,
                                    std::span<const emulator::TensorMeta> outputs, const emulator::Attrs& attrs);
std::vector<emulator::TensorMeta> custom_op_infer(const CustomOpDef& def, std::span<const emulator::TensorMeta> inputs,
                                                  const emulator::Attrs& attrs);
bool register_custom_op(const CustomOpDef& def, int arity, emulator::KernelFn npu, emulator::CostFn cost,
                        emulator::InferFn infer, const char* file, int line);
}  // namespace detail

// The tiling data inside a kernel (Ascend C's GET_TILING_DATA, with the struct named).
template <class T>
T get_tiling(GM_ADDR tiling) {
  T t;
  std::memcpy(&t, tiling, sizeof(T));
  return t;
}

}  // namespace npuscope::opkit

#define GET_TILING_DATA(var, tiling, Type) const Type var = ::npuscope::opkit::get_tiling<Type>(tiling)

// Registers `kernel` (a function of GM_ADDR parameters) as the op `def` describes.
#define NPUSCOPE_OPKIT_OP(kernel, ...)                                                                                 \
  namespace {                                                                                                          \
  const ::npuscope::opkit::CustomOpDef npuscope_opkit_def_##kernel = __VA_ARGS__;                                      \
  void npuscope_opkit_call_##kernel(std::span<const ::npuscope::opkit::GM_ADDR> args) {                                \
    ::npuscope::opkit::detail::call_kernel(kernel, args);                                                              \
  }                                                                                                                    \
  void npuscope_opkit_npu_##kernel(::npuscope::emulator::KernelContext& ctx) {                                         \
    ::npuscope::opkit::detail::run_custom_op(npuscope_opkit_def_##kernel, ::npuscope::opkit::detail::arity(kernel),    \
                                             npuscope_opkit_call_##kernel, ctx);                                       \
  }                                                                                                                    \
  ::npuscope::emulator::KernelCost npuscope_opkit_cost_##kernel(std::span<const ::npuscope::emulator::TensorMeta> in,  \
                                                                std::span<const ::npuscope::emulator::TensorMeta> out, \
                                                                const ::npuscope::emulator::Attrs& attrs) {            \
    return ::npuscope::opkit::detail::custom_op_cost(npuscope_opkit_def_##kernel, in, out, attrs);                     \
  }                                                                                                                    \
  std::vector<::npuscope::emulator::TensorMeta> npuscope_opkit_infer_##kernel(                                         \
      std::span<const ::npuscope::emulator::TensorMeta> in, const ::npuscope::emulator::Attrs& attrs) {                \
    return ::npuscope::opkit::detail::custom_op_infer(npuscope_opkit_def_##kernel, in, attrs);                         \
  }                                                                                                                    \
  [[maybe_unused]] const bool npuscope_opkit_registered_##kernel = ::npuscope::opkit::detail::register_custom_op(      \
      npuscope_opkit_def_##kernel, ::npuscope::opkit::detail::arity(kernel), npuscope_opkit_npu_##kernel,              \
      npuscope_opkit_cost_##kernel, npuscope_opkit_infer_##kernel, __FILE__, __LINE__);                                \
  }
