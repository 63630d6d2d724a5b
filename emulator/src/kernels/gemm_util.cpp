// See Note [Cube numerics] in gemm_util.h.
#include "gemm_util.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace npuscope::emulator::kernels {
namespace {

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
}

// Mirrors load_into: the NPU rounds a floating input to a narrower compute dtype.
bool needs_rounding(const TensorView& v, const KernelContext& ctx) {
  return ctx.backend == Backend::kNpu && is_floating(v.dtype) && dtype_size(ctx.compute_dtype) < dtype_size(v.dtype);
}

template <class T>
void scale_rows(std::int64_t m, std::int64_t n, T beta, T* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (std::int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// Empty shapes: nothing to multiply; C = beta · C. Returns true when handled.
template <class T>
bool gemm_degenerate(std::int64_t m, std::int64_t n, std::int64_t k, T beta, T* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  scale_rows(m, n, beta, c, ldc);
  return true;
}

CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

// Free scratch blocks of this thread (device worker or host thread); a few stay for reuse, within a
// byte budget so that one huge GEMM does not pin its buffers for the life of the thread.
struct ScratchPool {
  static constexpr std::size_t kMaxBlocks = 8;
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  std::vector<std::pair<std::unique_ptr<std::byte[]>, std::size_t>> free;
  std::size_t free_bytes = 0;
};
thread_local ScratchPool t_pool;

}  // namespace

bool cube_dtype(DType t) { return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32; }

bool cube_supports(std::span<const TensorMeta> in, const Attrs&) {
  return std::all_of(in.begin(), in.end(), [](const TensorMeta& m) { return !m.present || cube_dtype(m.dtype); });
}

bool golden_wide(DType t) { return t == DType::kF64 || !is_floating(t); }

ScratchBlock::~ScratchBlock() {
  if (!data_) return;
  if (t_pool.free.size() < ScratchPool::kMaxBlocks && t_pool.free_bytes + bytes_ <= ScratchPool::kMaxBytes) {
    t_pool.free_bytes += bytes_;
    t_pool.free.emplace_back(std::move(data_), bytes_);
  }
}

// Best fit among the free blocks; else the largest free one is replaced by a new, bigger block.
void ScratchBlock::acquire(std::size_t bytes) {
  auto& free = t_pool.free;
  auto best = free.end(), largest = free.end();
  for (auto it = free.begin(); it != free.end(); ++it) {
    if (it->second >= bytes && (best == free.end() || it->second < best->second)) best = it;
    if (largest == free.end() || it->second > largest->second) largest = it;
  }
  if (best != free.end()) {
    data_ = std::move(best->first);
    bytes_ = best->second;
    t_pool.free_bytes -= bytes_;
    free.erase(best);
    return;
  }
  if (largest != free.end()) {
    t_pool.free_bytes -= largest->second;
    free.erase(largest);
  }
  bytes_ = std::max<std::size_t>(bytes, 64);
  data_ = std::make_unique_for_overwrite<std::byte[]>(bytes_);
}

template <class T>
GemmOperand<T>::GemmOperand(const TensorView& v, const KernelContext& ctx) {
  if (v.dtype == dtype_of<T>() && !needs_rounding(v, ctx)) {
    data_ = v.as<const T>();
    return;
  }
  T* copy = owned_.get<T>(v.numel);
  load_into<T>(v, ctx, copy);
  data_ = copy;
}

template <class T>
GemmResult<T>::GemmResult(const TensorView& v) : view_(v) {
  if (v.dtype == dtype_of<T>()) {
    data_ = v.as<T>();
    return;
  }
  data_ = owned_.get<T>(v.numel);
}

// The result in the output's own buffer, with nothing to round: store<T> would copy it onto itself
// after an overflow pass; finish_in_place gives the same values and flags in one scan.
template <class T>
void GemmResult<T>::finish(KernelContext& ctx) {
  const bool npu = ctx.backend == Backend::kNpu;
  if (data_ != view_.as<T>() || (npu && ctx.compute_dtype != view_.dtype)) {
    store<T>(view_, data_, ctx);
    return;
  }
  finish_in_place(data_, view_.numel, ctx);
}

template class GemmOperand<float>;
template class GemmOperand<double>;
template class GemmResult<float>;
template class GemmResult<double>;

// cblas takes int dimensions; the tensors an emulated device holds stay far below 2^31 per matrix.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (gemm_degenerate(m, n, k, beta, c, ldc)) return;
  cblas_sgemm(CblasRowMajor, trans(trans_a), trans(trans_b), static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
          std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  if (gemm_degenerate(m, n, k, beta, c, ldc)) return;
  cblas_dgemm(CblasRowMajor, trans(trans_a), trans(trans_b), static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}

}  // namespace npuscope::emulator::kernels
