// TEMPORARY stub of runtime_hooks/include/npuscope/runtime_hooks/cann_op_types.h (issue 39's
// contract, the profile helper's): deleted when main has the real table.
#pragma once

#include <string_view>

namespace npuscope {

inline std::string_view cann_op_of(std::string_view emulator_op) {
  struct Row {
    std::string_view emulator, cann;
  };
  static constexpr Row kRows[] = {{"Conv2d", "Conv2D"},
                                  {"MatMul", "MatMulV2"},
                                  {"Gemm", "MatMulV2"},
                                  {"ThresholdGrad", "ReluGrad"},
                                  {"ViewCopy", "TensorMove"},
                                  {"MaxPoolWithArgmax", "MaxPoolWithArgmaxV1"},
                                  {"MaxPoolGradWithArgmax", "MaxPoolGradWithArgmaxV1"},
                                  {"Muls", "Mul"},
                                  {"LogSoftmax", "LogSoftmaxV2"},
                                  {"DropoutDoMask", "DropOutDoMask"},
                                  {"TopK", "TopKV2"},
                                  {"Div", "RealDiv"},
                                  {"Adds", "Add"},
                                  {"Expand", "BroadcastTo"}};
  for (const Row& r : kRows) {
    if (r.emulator == emulator_op) return r.cann;
  }
  return emulator_op;
}

}  // namespace npuscope
