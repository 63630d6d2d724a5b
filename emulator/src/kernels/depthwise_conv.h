// Depthwise Conv2d as a direct kernel (conv_ops.cpp picks it, see Note [Direct grouped convolution]).
#pragma once

#include "conv_util.h"

namespace npuscope::emulator::kernels {

// Note [Direct grouped convolution]
// im2col + GEMM per group (conv_ops.cpp) costs one im2col and one BLAS call per (image, group) for
// a product whose K is Cin/group · kH · kW: a depthwise 3x3 layer of MobileNet is 32 to 960 GEMMs of
// K = 9 and M = the channel multiplier (1), each padded, packed and threaded by the BLAS. That made
// depthwise models 6-15x slower than PyTorch. When each group reads one input channel (depthwise,
// any channel multiplier) and there is more than one group, the convolution runs directly instead:
// per output plane and output row, each input row adds its kernel taps into the output row (3-, 5-
// and 7-wide rows in one pass, the valid columns found once per tap: no bounds checks inside). The
// output row stays in L1 and nothing is copied. A 3x3 depthwise layer [1, 144, 56, 56] on cpu, one
// thread: 2.94 -> 1.48 ms. Wider groups stay on the GEMM, which beat this loop (it re-reads the
// output row per input channel): 3x3, 56x56, 48 channels in groups of 2 / 4 / 8: GEMM 0.57 / 0.82 /
// 0.90 ms, direct 0.67 / 1.30 / 1.76 ms (/tmp bench of ops::conv2d, best of 30).
//
// Numerics are those of the GEMM (Note [Cube numerics]): T = float reads the f16/bf16-rounded
// operands as f32 and accumulates in f32; the CPU golden accumulates f32 inputs in f32 and f64 in
// f64. Only the summation order differs (bias first, then taps in (channel, row, column) order),
// which the cube does not fix either. The inner loops are compiled twice, for baseline x86-64 and
// for AVX2 (picked at run time); each lane does the same multiply then add (no FMA), so both give
// the same bits.
// True when conv_ops runs conv_direct rather than im2col + GEMM.
inline bool conv_direct_applies(const ConvGeom& g) { return g.group > 1 && g.cin_g() == 1; }

// y [N, Cout, Ho, Wo] = conv(x [N, C, H, W], w [Cout, C/group, kH, kW]) + bias (bias may be null).
void conv_direct(const ConvGeom& g, const float* x, const float* w, const float* bias, float* y);
void conv_direct(const ConvGeom& g, const double* x, const double* w, const double* bias, double* y);

}  // namespace npuscope::emulator::kernels
