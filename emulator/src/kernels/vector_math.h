// Element-wise transcendental functions (exp, tanh, sigmoid, erf) over arrays, through glibc's vector math library
// where the CPU has AVX2: Note [Vector math].
//
// Note [Vector math]
// The activations' scalar libm calls were most of their kernels' time: glibc's scalar tanhf takes
// ~23 ns an element on the CI machines, where libmvec (in libc6 since 2.35) takes 2 ns for eight
// lanes' worth per element, within 1 ulp (its documented bound is 4 ulp). A GRU step is a tanh and two
// sigmoids of [batch, hidden] per time step, so the device's RNNs waited on them. These functions
// are what the NPU kernels (float) and the CPU golden (double) compute with:
//  - NPU: within an ulp or two of the scalar call, which is what an Ascend vector unit's own
//    approximations are too (they are not correctly rounded either);
//  - golden: libmvec's f64 results are within 4 ulp of f64, 2^29 times finer than the f32 rounding
//    every golden result gets, so the golden keeps its meaning (Note [Vector erf] measured the same).
// Machines without AVX2 run the scalar loops. r may be a.
#pragma once

#include <cstdint>

namespace npuscope::emulator::kernels {

void exp_n(const float* a, float* r, std::int64_t m);
void exp_n(const double* a, double* r, std::int64_t m);
void tanh_n(const float* a, float* r, std::int64_t m);
void tanh_n(const double* a, double* r, std::int64_t m);
// 1 / (1 + exp(-x)): exp(-x) overflowing to inf for very negative x gives 0, the right limit.
void sigmoid_n(const float* a, float* r, std::int64_t m);
void sigmoid_n(const double* a, double* r, std::int64_t m);
void erf_n(const float* a, float* r, std::int64_t m);
void erf_n(const double* a, double* r, std::int64_t m);

}  // namespace npuscope::emulator::kernels
