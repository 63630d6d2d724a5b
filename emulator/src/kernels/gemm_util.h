// Shared by the cube kernels (matmul_ops.cpp, conv_ops.cpp): operands as f32/f64 buffers and a GEMM
// over OpenBLAS.
//
// Note [Cube numerics]
// The NPU cube reads f16/bf16 (an f32 op lowered by the precision mode arrives rounded to f16 by
// load: see Note [Kernel numerics]), multiplies and accumulates in f32, and rounds each result to the
// output dtype once. cblas_sgemm on f32 copies of the inputs gives exactly that: the product of two
// f16 values is exact in f32 and the sums accumulate in f32. The CPU golden runs the same sgemm on
// its f32/f16/bf16 inputs (as PyTorch's CPU backend does for f32); f64 and integer inputs go through
// dgemm (integers are exact up to 2^53, then stored by truncation).
#pragma once

#include <cstdint>
#include <memory>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {

// True for the dtypes the NPU cube reads (f32 only as the precision mode leaves or lowers it).
bool cube_dtype(DType t);
// NPU `supports` predicate of the cube ops: every present input is f16, bf16 or f32. Anything else
// (integers) runs the CPU kernel as an AI CPU task.
bool cube_supports(std::span<const TensorMeta> in, const Attrs& attrs);
// The CPU golden computes in double for f64 and integer inputs, in float otherwise.
bool golden_wide(DType t);

// The cost of `batch` GEMMs [m, k] x [k, n] on the cube, moving `bytes` of which `written` are
// written (the cost model's view of a cube op: Note [Cube numerics] for what the GEMM computes).
inline KernelCost cube_cost(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, double bytes,
                            double written = 0) {
  KernelCost c;
  c.unit = ComputeUnit::kCube;
  c.m = m;
  c.n = n;
  c.k = k;
  c.batch = batch;
  c.flops = 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  c.bytes = bytes;
  c.bytes_written = written;
  return c;
}

// The CPU golden of a cube op: kernel<float> (sgemm) for f32/f16/bf16 inputs, kernel<double> (dgemm)
// for f64 and integers (Note [Cube numerics]).
template <KernelFn kFloat, KernelFn kDouble>
void cube_golden(KernelContext& ctx) {
  golden_wide(ctx.inputs[0].dtype) ? kDouble(ctx) : kFloat(ctx);
}

// A block from this thread's pool of scratch buffers, given back when destroyed. The cube kernels'
// f32 copies run to megabytes, and a fresh allocation per call costs page faults that rival the GEMM
// itself (large blocks are mapped afresh each time), so blocks are reused.
class ScratchBlock {
 public:
  ScratchBlock() = default;
  ~ScratchBlock();
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;

  template <class T>
  T* get(std::int64_t count) {
    acquire(static_cast<std::size_t>(count) * sizeof(T));
    return reinterpret_cast<T*>(data_.get());
  }

 private:
  void acquire(std::size_t bytes);
  std::unique_ptr<std::byte[]> data_;
  std::size_t bytes_ = 0;
};

// An operand as the GEMM reads it (T = float or double): the tensor's own buffer when it already has
// type T and needs no rounding, else a converted copy (load_into: NPU rounding applied).
template <class T>
class GemmOperand {
 public:
  GemmOperand(const TensorView& v, const KernelContext& ctx);
  const T* data() const { return data_; }

 private:
  ScratchBlock owned_;
  const T* data_ = nullptr;
};

// The buffer the GEMM writes: the output tensor's own when it has type T, else scratch. finish()
// stores it (rounding and overflow mode, see Note [Kernel numerics]).
template <class T>
class GemmResult {
 public:
  explicit GemmResult(const TensorView& v);
  T* data() const { return data_; }
  void finish(KernelContext& ctx);

 private:
  TensorView view_;
  ScratchBlock owned_;
  T* data_ = nullptr;
};

// Row-major C = alpha · op(A) · op(B) + beta · C, op(A) [m, k], op(B) [k, n]. Handles empty
// dimensions (k = 0 scales C by beta) so that callers need not.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
          std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc);

extern template class GemmOperand<float>;
extern template class GemmOperand<double>;
extern template class GemmResult<float>;
extern template class GemmResult<double>;

}  // namespace npuscope::emulator::kernels

// A cube op's kernels: kernel<float> on the NPU for the inputs `supports` accepts (others run the
// CPU kernel as an AI CPU task), cube_golden on the CPU.
#define NPUSCOPE_REGISTER_CUBE_KERNELS(type, kernel, supports)                                                \
  [[maybe_unused]] static const bool NPUSCOPE_CONCAT(npuscope_kernel_registered_, __LINE__) =                 \
      ::npuscope::emulator::detail::register_kernel(type, ::npuscope::emulator::Backend::kNpu, kernel<float>, \
                                                    supports, __FILE__, __LINE__) &&                          \
      ::npuscope::emulator::detail::register_kernel(                                                          \
          type, ::npuscope::emulator::Backend::kCpu,                                                          \
          ::npuscope::emulator::kernels::cube_golden<kernel<float>, kernel<double>>, nullptr, __FILE__, __LINE__)
