// Depthwise and narrow grouped Conv2d as a direct kernel (conv_ops.cpp picks it, see
// Note [Direct grouped convolution]).
#pragma once

#include "conv_util.h"

namespace npuscope::emulator::kernels {

// Note [Direct grouped convolution]
// im2col + GEMM per group (conv_ops.cpp) costs one im2col and one BLAS call per (image, group) for
// a product whose K is Cin/group · kH · kW: a depthwise 3x3 layer of MobileNet is 32 to 960 GEMMs of
// K = 9 and M = the channel multiplier (1), each padded, packed and threaded by the BLAS. That made
// depthwise models 6-15x slower than PyTorch. When each group reads few input channels
// (Cin/group <= kDirectConvMaxGroupChannels) and there is more than one group, the convolution runs
// directly instead: per output plane and output row, each kernel tap adds weight · input row into
// the output row (a scaled vector add over the valid columns, found once per tap: no bounds checks
// inside). The output row stays in L1 across the taps and nothing is copied.
//
// Numerics are those of the GEMM (Note [Cube numerics]): T = float reads the f16/bf16-rounded
// operands as f32 and accumulates in f32; the CPU golden accumulates f32 inputs in f32 and f64 in
// f64. Only the summation order differs (bias first, then taps in (channel, row, column) order),
// which the cube does not fix either. The inner loops are compiled twice, for baseline x86-64 and
// for AVX2 (picked at run time); each lane does the same multiply then add (no FMA), so both give
// the same bits.
inline constexpr std::int64_t kDirectConvMaxGroupChannels = 16;

// True when conv_ops runs conv_direct rather than im2col + GEMM.
inline bool conv_direct_applies(const ConvGeom& g) { return g.group > 1 && g.cin_g() <= kDirectConvMaxGroupChannels; }

// y [N, Cout, Ho, Wo] = conv(x [N, C, H, W], w [Cout, C/group, kH, kW]) + bias (bias may be null).
void conv_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y);
void conv_direct(const ConvGeom& g, const double* x, const double* w, const double* bias, double* y);

}  // namespace npuscope::emulator::kernels
