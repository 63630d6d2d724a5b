// Helpers shared by the tests of the ONNX extension ops (shape_ext, pad_tile, reduce_ext, index,
// scatter_gather, matrix): integer tensors, and running one op on both backends.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/op_test_util.h"

namespace npuscope::emulator::testing {

using I64s = std::vector<std::int64_t>;
using Doubles = std::vector<double>;

inline Tensor ints(const I64s& v, Shape shape, DType dtype = DType::kI64) {
  return Tensor::from_ints(v, std::move(shape), dtype);
}

// Runs `op` on cpu and on npu:0 and returns both output lists (npu outputs copied back to the host).
struct BothBackends {
  std::vector<Tensor> cpu, npu;
};
inline BothBackends run_both(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  BothBackends r;
  r.cpu = call_op(op, inputs, attrs);
  for (const Tensor& t : call_op(op, on_npu(inputs), attrs)) r.npu.push_back(t.cpu());
  return r;
}

// Data movement: every output of the NPU run has the CPU run's shape, dtype and bytes.
inline ::testing::AssertionResult npu_bytes_match_cpu(const char* op, const std::vector<Tensor>& inputs,
                                                      const Attrs& attrs = {}) {
  const BothBackends r = run_both(op, inputs, attrs);
  for (std::size_t i = 0; i < r.cpu.size(); ++i) {
    if (r.npu[i].shape() != r.cpu[i].shape() || r.npu[i].dtype() != r.cpu[i].dtype()) {
      return ::testing::AssertionFailure() << op << " output " << i << ": npu " << shape_str(r.npu[i].shape())
                                           << " vs cpu " << shape_str(r.cpu[i].shape());
    }
    if (bytes_of(r.npu[i]) != bytes_of(r.cpu[i])) {
      return ::testing::AssertionFailure() << op << " output " << i << ": npu and cpu bytes differ";
    }
  }
  return ::testing::AssertionSuccess();
}

// Arithmetic: output 0 of the NPU run is within (rtol, atol) of the CPU run.
inline ::testing::AssertionResult npu_close_to_cpu(const char* op, const std::vector<Tensor>& inputs,
                                                   const Attrs& attrs, double rtol, double atol) {
  const BothBackends r = run_both(op, inputs, attrs);
  if (r.npu[0].shape() != r.cpu[0].shape()) {
    return ::testing::AssertionFailure() << op << ": npu " << shape_str(r.npu[0].shape()) << " vs cpu "
                                         << shape_str(r.cpu[0].shape());
  }
  return all_close(to_vec(r.npu[0]), to_vec(r.cpu[0]), rtol, atol);
}

}  // namespace npuscope::emulator::testing
