// The online op check (`npuscope run --check-ops`): each NPU kernel re-run on the CPU golden kernels
// with the very inputs it had, as it happens. Private to the emulator (the device worker calls it).
//
// Note [Online op check]
// msprobe's API accuracy checker (REFERENCE.md "API accuracy checker") replays each API on the CPU in
// high precision and judges the device's outputs by a standard per API. Here every kernel task of an
// NPU device that ran an NPU kernel (not an AI CPU fallback, which is the CPU kernel already) is
// checked on the device worker, right after it ran and any perturbation touched its outputs:
//  - before the kernel runs, its inputs are copied (an in-place kernel overwrites them);
//  - the op's CPU golden kernel runs twice on the copies: on the floating inputs widened to f64 (the
//    golden, msprobe's CPU high-precision bench), and on the inputs as they are (the bench, standing
//    in for msprobe's GPU run: what a standard-precision implementation gets);
//  - each output is judged by the op's standard (op_check_standard): bit-exact for data movement and
//    exact ops, element-wise thresholds for add/sub/mul/div, ULPs for matmuls, the 0.1 % share for
//    convolutions, and for the rest msprobe's benchmark comparison: the NPU's small-value error ratio,
//    RMSE and relative errors against the golden, each divided by the bench's (or a floor), error past
//    2x (10x for the largest relative error); error balance is reported, not judged;
//  - one OpCheckRecord per floating (or judged) output goes to the listener.
// An op whose CPU kernel refuses f64 (or whose golden faults) is left unchecked. The check costs two
// CPU kernel runs and a copy of the inputs per task: a checked run is several times slower.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npuscope/emulator/device.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {

// The standard an op type is judged by (msprobe's api_precision_standard.yaml, in our op names).
OpCheckStandard op_check_standard(const OpSchema& schema, DType output_dtype);

class OpCheck {
 public:
  // Copies the inputs of the kernel about to run; null when it is not to be checked.
  static std::unique_ptr<OpCheck> before(const KernelLaunch& k);
  // After the kernel (and perturbations) ran: runs the goldens, judges each output, sends the records.
  void after(const KernelLaunch& k, std::uint64_t task_id, const hooks::SubscriberTable& sub) noexcept;

 private:
  explicit OpCheck(const OpSchema& schema) : schema_(schema) {}
  void judge(const KernelLaunch& k, std::uint64_t task_id, const hooks::SubscriberTable& sub);
  const OpSchema& schema_;
  std::vector<Tensor> inputs_;  // host copies of the kernel's inputs, as they were
};

}  // namespace npuscope::emulator
