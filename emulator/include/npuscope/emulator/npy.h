// NumPy .npy files (format versions 1-3, little-endian, C order) <-> tensors, for `npuscope exec`
// inputs and outputs. bf16 has no NumPy type: it is written as f32 (exactly).
//
// Note [Reading .npy headers]
// The header is a Python dict literal, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), },
// which NumPy reads with ast.literal_eval. It is parsed here by a small hand-written scanner that
// loops over the characters once and never recurses, so a hostile header costs time linear in its
// length and constant stack (std::regex recursed per character and overflowed the stack on a 30 KB
// descr). It accepts what NumPy writes and what a person might: either quote, any spacing, the keys
// in any order, trailing commas, Python 2's `3L`. It refuses anything else: unknown, missing or
// repeated keys, structured dtypes, negative or oversized dimensions. Limits: the header is at
// most kMaxNpyHeaderBytes and the shape has at most kMaxNpyRank dimensions; the data must be exactly
// the shape's size (a file with bytes missing or left over is refused, not read in part).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// Version 1.0 stores the header length in 16 bits; 2.0 and 3.0 in 32. save_npy writes 1.0 when the
// header fits, else 2.0 (as numpy.save does); load_npy reads all three.
inline constexpr std::size_t kMaxNpyHeaderBytes = std::size_t{1} << 24;
inline constexpr std::size_t kMaxNpyRank = std::size_t{1} << 16;

struct NpyHeader {
  DType dtype = DType::kF32;
  Shape shape;
  std::size_t data_offset = 0;  // where the elements start in the file
  std::size_t data_bytes = 0;   // numel * element size (checked not to overflow)
};

// The header of a .npy file whose first bytes are `prefix` (it must hold the whole header:
// npy_header_bytes_needed() says how many bytes that is). `name` names the file in errors. Throws
// ModelError for anything unreadable or unsupported (big-endian, Fortran order, object arrays,
// dtypes the emulator lacks), saying what is wrong.
NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& name);
// How many bytes of the file parse_npy_header needs, from its first kNpyPreambleBytes (the magic,
// the version and the header length). Throws ModelError if they are not a .npy preamble.
inline constexpr std::size_t kNpyPreambleBytes = 12;
std::size_t npy_header_bytes_needed(std::span<const std::byte> prefix, const std::string& name);

// A whole .npy file in memory -> a cpu tensor (what a fuzzer calls). Throws ModelError as above,
// and when the data is not exactly the shape's size.
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
