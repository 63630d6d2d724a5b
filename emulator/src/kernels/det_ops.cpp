// Det (ONNX opset 11, torch.linalg.det): X [..., M, M] -> the determinant of each matrix, [...].
// LU factorisation with partial pivoting (the largest pivot in each column), as LAPACK's getrf that
// PyTorch calls; the determinant is the pivots' product, its sign flipped per row swap. A singular
// matrix gives 0 (or -0). Vector op (small matrices: M^3 / 3 multiply-adds each); NPU in f32,
// CPU golden in f64.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "Det";

std::vector<TensorMeta> infer_det(std::span<const TensorMeta> in, const Attrs&) {
  require_floating(in, 0, kOp);
  const Shape& x = in[0].shape;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2]) {
    fail(kOp, "needs square matrices [..., M, M], got " + shape_str(x));
  }
  return {{Shape(x.begin(), x.end() - 2), in[0].dtype}};
}

KernelCost cost_det(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  const auto m = static_cast<double>(in[0].shape.back());
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(out[0].numel()) * 2 * m * m * m / 3;
  return c;
}

// The determinant of the m x m matrix a (overwritten by its LU factors).
template <class T>
T lu_det(T* a, std::int64_t m) {
  T det = 1;
  for (std::int64_t k = 0; k < m; ++k) {
    std::int64_t p = k;
    for (std::int64_t r = k + 1; r < m; ++r) {
      if (std::fabs(a[r * m + k]) > std::fabs(a[p * m + k])) p = r;
    }
    if (a[p * m + k] == 0) return 0 * det;
    if (p != k) {
      std::swap_ranges(a + k * m, a + (k + 1) * m, a + p * m);
      det = -det;
    }
    const T pivot = a[k * m + k];
    det *= pivot;
    for (std::int64_t r = k + 1; r < m; ++r) {
      const T f = a[r * m + k] / pivot;
      for (std::int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
    }
  }
  return det;
}

template <class T>
void det_kernel(KernelContext& ctx) {
  const std::int64_t m = ctx.inputs[0].shape->back();
  std::vector<T> x = load<T>(ctx.inputs[0], ctx);
  std::vector<T> y(static_cast<std::size_t>(ctx.outputs[0].numel));
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = lu_det(x.data() + static_cast<std::int64_t>(i) * m * m, m);
  store<T>(ctx.outputs[0], y.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kOp, .category = OpCategory::kPrecisionSensitive, .infer = infer_det, .cost = cost_det});
NPUSCOPE_REGISTER_FLOAT_KERNELS(kOp, det_kernel);

}  // namespace npuscope::emulator::kernels
