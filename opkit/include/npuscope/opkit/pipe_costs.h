// Cycles per instruction on each pipe, from the device spec.
//
// Note [Pipe costs]
// Approximate, as the op simulator's own model is: what matters for a kernel author is which pipe
// is the bottleneck and whether pipes overlap, and those follow from bandwidths and widths.
// - MTE2 / MTE3 / FIXP move global memory at the core's share of the effective HBM bandwidth:
//   memory_bandwidth x memory_efficiency / (the cores the launch occupies) / clock, bytes per cycle,
//   at most kMaxCoreGmBytesPerCycle (one core's port), plus kGmLatencyCycles per transfer.
// - MTE1 (L1 -> L0A/L0B) and local copies move kLocalBytesPerCycle.
// - Vector: one repeat reads 256 bytes of each operand per cycle (128 f16, 64 f32 elements;
//   shared/REFERENCE.md "vector and cube data basics"), plus kVectorStartupCycles per instruction.
//   Div, Exp, Ln, Sqrt and Reciprocal take kVectorTranscendentalRepeatCycles per repeat.
// - Cube: one 16x16x16 fractal per cycle for f16/bf16 (the 910B's 16x16x16 cube, as cube_peak_f16
//   counts it), f32 at cube_f32_rate, plus kCubeStartupCycles.
// - Scalar: one cycle to issue any instruction; GetValue/SetValue on local memory kScalarAccessCycles.
#pragma once

#include <cstdint>

#include "npuscope/emulator/device_spec.h"

namespace npuscope::opkit {

inline constexpr std::uint64_t kGmLatencyCycles = 64;
inline constexpr double kMaxCoreGmBytesPerCycle = 128;
inline constexpr double kLocalBytesPerCycle = 256;
inline constexpr std::uint64_t kVectorStartupCycles = 4;
inline constexpr std::uint64_t kVectorRepeatBytes = 256;
inline constexpr std::uint64_t kVectorTranscendentalRepeatCycles = 2;
inline constexpr std::uint64_t kCubeStartupCycles = 8;
inline constexpr std::uint64_t kScalarIssueCycles = 1;
inline constexpr std::uint64_t kScalarAccessCycles = 4;

// Which cores a kernel runs on: vector cores (AIV) or cube cores (AIC), 910B's split.
enum class CoreType : std::uint8_t { kVector, kCube };

struct PipeCosts {
  double gm_bytes_per_cycle = 0;  // this core's share of HBM
  double local_bytes_per_cycle = kLocalBytesPerCycle;
  double cube_f32_rate = 0.25;
  double clock_hz = 0;
};

// Cores of `core` on the spec (vector cores fall back to cube cores on chips without separate ones).
std::uint32_t core_count(const emulator::DeviceSpec& spec, CoreType core);
PipeCosts pipe_costs(const emulator::DeviceSpec& spec, CoreType core, std::uint32_t block_dim);

// Cycles of one GM transfer and of one local copy of `bytes`.
std::uint64_t gm_copy_cycles(const PipeCosts& c, std::uint64_t bytes);
std::uint64_t local_copy_cycles(const PipeCosts& c, std::uint64_t bytes);
// Cycles of a vector instruction reading `bytes` per operand (repeats of 256 B).
std::uint64_t vector_cycles(std::uint64_t bytes, bool transcendental);
// Cycles of an Mmad of m x n x k (fractal-padded), f16/bf16 or f32 inputs.
std::uint64_t cube_cycles(const PipeCosts& c, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool f32);

}  // namespace npuscope::opkit
