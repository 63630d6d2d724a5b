// The vocabulary of an opkit kernel, with Ascend C's names (shared/REFERENCE.md "Ascend C"): element
// types, buffer positions, pipes and the global-memory address a kernel receives.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "npuscope/emulator/float16.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::opkit {

// A kernel argument: the address of a tensor (or of the tiling data) in global memory.
using GM_ADDR = std::uint8_t*;  // NOLINT(readability-identifier-naming): Ascend C's name

// IEEE binary16 as a kernel stores it. Arithmetic goes through float; assignments round to nearest even.
struct half {  // NOLINT(readability-identifier-naming): Ascend C's name
  std::uint16_t bits = 0;
  half() = default;
  half(float f) : bits(emulator::float_to_half_bits(f)) {}               // NOLINT(google-explicit-constructor)
  operator float() const { return emulator::half_bits_to_float(bits); }  // NOLINT(google-explicit-constructor)
};

struct bfloat16_t {  // NOLINT(readability-identifier-naming): Ascend C's name
  std::uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(emulator::float_to_bf16_bits(f)) {}         // NOLINT(google-explicit-constructor)
  operator float() const { return emulator::bf16_bits_to_float(bits); }  // NOLINT(google-explicit-constructor)
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2);

// Where a local tensor lives. GM is global memory; the rest are the AI Core's buffers.
enum class TPosition : std::uint8_t {
  GM,
  VECIN,    // UB, filled by MTE2, read by Vector
  VECOUT,   // UB, written by Vector, read by MTE3
  VECCALC,  // UB scratch (TBuf): Vector only
  A1,       // L1, filled by MTE2, read by MTE1
  B1,
  A2,   // L0A, filled by MTE1, read by Cube
  B2,   // L0B
  CO1,  // L0C, written by Cube, read by FIX
};
using QuePosition = TPosition;  // the older Ascend C name

// The on-chip memories the positions map to; their capacities come from the device spec.
enum class Memory : std::uint8_t { kUB, kL1, kL0A, kL0B, kL0C, kGM };
inline constexpr int kNumLocalMemories = 5;
Memory memory_of(TPosition p);
std::string_view memory_name(Memory m);
std::string_view position_name(TPosition p);

// The AI Core's pipes (Pipe, kNumPipes) are the trace vocabulary's (runtime_hooks/vocabulary.h):
// the pipe view in the trace names them as opkit does.
using npuscope::kNumPipes;
using npuscope::Pipe;
inline std::string_view pipe_name(Pipe p) { return enum_name(p); }

// The pipe that fills a position (EnQue's side) and the one that reads it (DeQue's side).
Pipe producer_pipe(TPosition p);
Pipe consumer_pipe(TPosition p);

// Cast rounding modes (Ascend C's RoundMode).
enum class RoundMode : std::uint8_t {
  CAST_NONE,   // the default: round to nearest even where precision is lost
  CAST_RINT,   // nearest even
  CAST_FLOOR,  // toward -inf
  CAST_CEIL,   // toward +inf
  CAST_ROUND,  // nearest, ties away from zero
  CAST_TRUNC,  // toward zero
  CAST_ODD,    // von Neumann rounding (f32 -> f16)
};

// Compare modes (Ascend C's CMPMODE).
enum class CMPMODE : std::uint8_t { LT, GT, EQ, LE, GE, NE };

}  // namespace npuscope::opkit
