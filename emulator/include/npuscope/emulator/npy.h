// NumPy .npy files (format versions 1-3, little-endian, C order) <-> tensors, for `npuscope exec`
// inputs and outputs. bf16 has no NumPy type: it is written as f32 (exactly).
#pragma once

#include <string>

#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// A cpu tensor. Throws ModelError naming the file for anything unreadable or unsupported
// (big-endian, Fortran order, object arrays, dtypes the emulator lacks).
Tensor load_npy(const std::string& path);
// Writes a cpu or npu tensor (copied to the host first). Throws InvalidArgument if the file cannot
// be written.
void save_npy(const std::string& path, const Tensor& tensor);

}  // namespace npuscope::emulator
