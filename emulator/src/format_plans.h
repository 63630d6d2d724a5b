// Which ops want their operands in private formats, and what the conversions cost (Note [Private
// formats] in formats.h). Private to the emulator: the table is format_plans.cpp, the TransData and
// MemSet ops are kernels/trans_data_ops.cpp and kernels/memset_ops.cpp, the dispatcher
// (dispatch.cpp, Note [TransData tasks]) launches what a plan says.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/formats.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator {

// One operand of a planned op.
struct FormatSlot {
  Format format = Format::kND;  // kND: the operand is taken as it is
  std::uint8_t c0 = 0;          // 0: c0_of(dtype)
  // false: the operand is in `format` without a conversion (the pool's argmax mask, which the pool
  // writes and its gradient reads in 5HD); the trace still shows it in `format`.
  bool convert = true;
  // The n of its TransData's name "trans_TransData_<n>" (FormatPlan::transdata_name unset), as the
  // shared 910B profile numbers the conversions around each convolution.
  std::uint8_t number = 0;
};

inline constexpr std::size_t kMaxPlannedInputs = 4, kMaxPlannedOutputs = 2;

struct FormatPlan {
  std::array<FormatSlot, kMaxPlannedInputs> inputs{};
  std::array<FormatSlot, kMaxPlannedOutputs> outputs{};
  // Every TransData's name, when the op converts inside its own API (aclnn's MaxPool2dWithMask:
  // "<api>_TransDataSpecial_TransData"); null: aclop's "trans_TransData_<number>".
  const char* transdata_name = nullptr;
  // True for conversions inside an aclnn op: they happen whatever allow_internal_format says, and the
  // op's outputs are never left in a private format.
  bool inside_api = false;
  // A MemSet task zeroes the output before the op (its output is accumulated atomically:
  // Conv2DBackpropFilter), named "<op instance>_MemSet".
  bool memset_output = false;
};

// A TransData of a tensor of logical shape `base` from `src` to `dst` (storage shapes from
// storage_shape()): its bytes read and written, each contiguous run shorter than
// spec.transdata_burst_bytes paying a whole burst, plus spec.transdata_fixed_ns.
KernelCost trans_data_cost(const Shape& base, DType dtype, Format src, Format dst, int c0, const DeviceSpec& spec);

// A MemSet of `bytes`: one write pass.
KernelCost memset_cost(double bytes);

}  // namespace npuscope::emulator
