// A program on the emulated NPU through the installed SDK: (x @ w) + b on npu:0 in f16, checked
// against the values worked out by hand. Exit status 0 when they match.
#include <cstdio>
#include <vector>

#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/tensor.h"

namespace emu = npuscope::emulator;

int main() {
  const emu::DeviceRef npu = emu::DeviceRef::npu(0);
  const std::vector<float> x{1, 2, 3, 4}, w{1, 0, 1, 1}, b{0.5f, -1};
  const emu::Tensor y = emu::ops::add(emu::ops::matmul(emu::Tensor::from_floats(x, {2, 2}, emu::DType::kF16, npu),
                                                       emu::Tensor::from_floats(w, {2, 2}, emu::DType::kF16, npu)),
                                      emu::Tensor::from_floats(b, {2}, emu::DType::kF16, npu));
  const std::vector<float> got = y.to_floats(), want{3.5f, 1, 7.5f, 3};
  for (float v : got) std::printf("%g ", v);
  std::printf("\n");
  return got == want ? 0 : 1;
}
