// What the sample kernels' CPU goldens share: reading a tensor as doubles and writing doubles back,
// rounded once to the tensor's dtype (f32, f16, bf16).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::samples {

inline std::vector<double> read_doubles(const emulator::TensorView& v) {
  std::vector<double> out(static_cast<std::size_t>(v.numel));
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (v.dtype) {
      case DType::kF16: out[i] = emulator::half_bits_to_float(v.as<std::uint16_t>()[i]); break;
      case DType::kBF16: out[i] = emulator::bf16_bits_to_float(v.as<std::uint16_t>()[i]); break;
      case DType::kF32: out[i] = v.as<float>()[i]; break;
      default: out[i] = 0; break;
    }
  }
  return out;
}

inline void write_doubles(const emulator::TensorView& v, const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    switch (v.dtype) {
      case DType::kF16: v.as<std::uint16_t>()[i] = emulator::float_to_half_bits(f); break;
      case DType::kBF16: v.as<std::uint16_t>()[i] = emulator::float_to_bf16_bits(f); break;
      case DType::kF32: v.as<float>()[i] = f; break;
      default: break;
    }
  }
}

// The dtypes a sample kernel takes; InvalidArgument naming the op otherwise.
inline void require_dtype(const char* op, DType got, std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (d == got) return;
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : " or ") + std::string(dtype_name(d));
  throw emulator::InvalidArgument(std::string(op) + ": takes " + names + " tensors, got " +
                                  std::string(dtype_name(got)));
}

}  // namespace npuscope::samples
