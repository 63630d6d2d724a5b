// The tasks around an op with a format plan, allow_internal_format's tags (Note [TransData tasks]),
// and which of a launch's inputs the L2 holds (Note [L2 residency] in l2_residency.h). Private to the
// emulator: the dispatcher's.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "format_plans.h"
#include "npuscope/emulator/device.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// The bytes of the inputs the L2 holds, for cost.hot_bytes; the inputs and outputs are then its
// newest data. Undefined and empty tensors take no part; 0 on a spec without an L2 term.
double l2_hot_bytes(Device& dev, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);

// A kernel that does nothing: the tasks that are only timed.
void noop_kernel(KernelContext&);

// Note [TransData tasks]
// On a spec with private_formats, an op with a format plan (format_plans.cpp) runs as the shared
// 910B profile shows it: a TransData task for each input not in the format its kernel wants, a
// MemSet where the plan asks for one, the op itself with its operands' storage shapes and formats,
// then a TransData back to the base format for each private output. torch_npu keeps base formats
// between ops unless allow_internal_format is on (its default is off: npu_sys_ctrl.cpp); with it on
// (RuntimeOptions, NPUSCOPE_ALLOW_INTERNAL_FORMAT, npuscope.torch's config), a converted input and a
// private output keep their format tag (Tensor::format()), so a later op that wants that format
// converts nothing. An op without a plan that gets a tagged tensor converts it back to its base
// format first, in place (the tag goes), so each tensor is converted once each way at most: the
// model of what the option saves. (torch_npu's aclnn ops convert such an input into a temporary
// and leave the tensor private, so a real run may convert a tensor read by several base-format ops
// more often.) Conversions inside an aclnn op (MaxPool2dWithMask's TransDataSpecial) happen
// whatever the option says.
//
// These TransData and MemSet tasks are timed (trans_data_cost, memset_cost) and carry their shapes
// and formats for the trace, but move no data and hold no tensors: a format is metadata and the op
// computes on the logical tensor (Note [Private formats] in formats.h), so converting bytes only to
// convert them back would cost host time and change nothing. Having no tensors, they send no
// tensor records: a golden run (NPUSCOPE_GOLDEN=1) launches the same tasks under the same names and
// call indexes, the comparator pairs them 1:1 with the NPU run's and, finding no tensors on either
// side, skips them as it skips undumped ops. What is left out: the converted copies' device memory
// (a real TransData allocates its output), and views and host copies of a tagged tensor, which
// convert nothing here. Ops without a plan pay one test of OpSchema::device and one relaxed load of
// allow_internal_format() per launch.
struct LayoutTasks {
  Device& dev;
  Stream stream;
  std::uint64_t connection;
  bool listener;

  // A timed task that moves no data, its signatures built for a listener only.
  void launch(std::string_view name, const char* op_type, KernelCost cost, DType dtype, const TensorMeta* in,
              const TensorMeta* out);
  // A TransData of `m` (logical shape, its format and C0; `t`'s data) into `to`; `m` then says `to`.
  void trans_data(std::string_view name, TensorMeta& m, const Tensor& t, Format to, int c0);
  // Back to the base format for an op that reads it, in place: the tensor loses its tag.
  void to_base(TensorMeta& m, const Tensor& t);
};

// allow_internal_format: the inputs' tags into their metas, and the outputs' old tags gone (the
// op writes them; a planned op tags its own).
void read_format_tags(const std::vector<Tensor>& inputs, std::vector<TensorMeta>& in_meta,
                      const std::vector<Tensor>& outputs);

// The plan applies when every planned operand has the rank its format needs (a CHW pool has not).
bool plan_fits(const FormatPlan& plan, std::span<const TensorMeta> in);

// Inputs from `from` on that carry a private tag, back to their base format (an op without a plan,
// or the operands a plan does not name).
void inputs_to_base(LayoutTasks& tasks, std::vector<Tensor>& inputs, std::vector<TensorMeta>& in_meta,
                    std::size_t from = 0);

// Before a planned op: its inputs' conversions (in the order of their numbers) and its MemSet;
// in_meta then says what the kernel reads.
void convert_inputs(LayoutTasks& tasks, const FormatPlan& plan, const char* op_name, std::vector<Tensor>& inputs,
                    std::vector<TensorMeta>& in_meta, const std::vector<Tensor>& outputs);

// The outputs as the planned op writes them (for its signature).
const char* planned_output_signature(const FormatPlan& plan, const std::vector<Tensor>& outputs);

// After a planned op: its private outputs back to their base format, or tagged (allow_internal_format).
void convert_outputs(LayoutTasks& tasks, const FormatPlan& plan, std::vector<Tensor>& outputs);

}  // namespace npuscope::emulator
