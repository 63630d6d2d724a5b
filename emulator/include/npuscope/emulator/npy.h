// NumPy .npy files (format versions 1-3, little-endian, C order) <-> tensors, for `npuscope exec`
// inputs and outputs. bf16 has no NumPy type: it is written as f32 (exactly). The header is read
// and written by runtime_hooks' npy_format.h (Note [Reading .npy headers]), shared with the
// collector's exports and the importer's msprobe dumps.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "npuscope/emulator/tensor.h"
#include "npuscope/runtime_hooks/npy_format.h"

namespace npuscope::emulator {

inline constexpr std::size_t kMaxNpyHeaderBytes = npy::kMaxHeaderBytes;
inline constexpr std::size_t kMaxNpyRank = npy::kMaxRank;

// A whole .npy file in memory -> a cpu tensor (what a fuzzer calls). Throws ModelError for anything
// unreadable or unsupported (big-endian, Fortran order, object arrays, dtypes the emulator lacks),
// and when the data is not exactly the shape's size, saying what is wrong.
Tensor parse_npy(std::span<const std::byte> file, const std::string& name);

// A cpu tensor from a file: parse_npy, reading the data straight into the tensor. Throws ModelError
// naming the file.
Tensor load_npy(const std::string& path);

// The header (magic to padding) of a tensor of `descr` and `shape`: version 1.0 if it fits, else 2.0.
std::string npy_header(std::string_view descr, const Shape& shape);

// Writes a cpu or npu tensor (copied to the host first). Throws InvalidArgument if the file cannot
// be written.
void save_npy(const std::string& path, const Tensor& tensor);

}  // namespace npuscope::emulator
