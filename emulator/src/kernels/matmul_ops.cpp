// MatMul (numpy semantics: 1-D promotion, batch dims broadcast), BatchMatMul (adj_x / adj_y, batch
// dims broadcast) and Gemm (alpha·op(A)·op(B) + beta·C). Cube ops: see Note [Cube numerics] in
// gemm_util.h. NPU and CPU golden share one sgemm path; the golden uses dgemm for f64 and integers.
#include "gemm_util.h"

namespace npuscope::emulator::kernels {
namespace {

// The shapes of one (batched) matrix product, after 1-D promotion.
struct MatmulShape {
  Shape a_batch, b_batch, out_batch, out;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;  // numel of out_batch
};

// numpy matmul shapes. `promote_1d`: MatMul promotes a 1-D operand to a matrix (and drops that
// dimension from the result); BatchMatMul demands rank >= 2.
MatmulShape matmul_shape(Shape a, Shape b, bool adj_a, bool adj_b, bool promote_1d, const char* op) {
  const std::string shapes = shape_str(a) + " x " + shape_str(b);
  const std::size_t min_rank = promote_1d ? 1 : 2;
  if (a.size() < min_rank || b.size() < min_rank) {
    fail(op, "inputs must have rank >= " + std::to_string(min_rank) + ", got " + shapes);
  }
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatmulShape s;
  const std::size_t ra = a.size(), rb = b.size();
  s.m = adj_a ? a[ra - 1] : a[ra - 2];
  s.k = adj_a ? a[ra - 2] : a[ra - 1];
  const std::int64_t kb = adj_b ? b[rb - 1] : b[rb - 2];
  s.n = adj_b ? b[rb - 2] : b[rb - 1];
  if (s.k != kb) {
    fail(op, "inner dimensions differ (" + std::to_string(s.k) + " vs " + std::to_string(kb) + ") in " + shapes);
  }
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  s.out_batch = broadcast_shapes(s.a_batch, s.b_batch, op);
  s.batch = shape_numel(s.out_batch);
  s.out = s.out_batch;
  if (!a_vec) s.out.push_back(s.m);
  if (!b_vec) s.out.push_back(s.n);
  return s;
}

// ---- schemas -------------------------------------------------------------------------------------

void require_no_bool(std::span<const TensorMeta> in, const char* op) {
  if (in[0].dtype == DType::kBool) fail(op, "bool inputs are not supported");
}

std::vector<TensorMeta> infer_matmul(std::span<const TensorMeta> in, const Attrs&) {
  require_same_dtype(in, "MatMul");
  require_no_bool(in, "MatMul");
  return {{matmul_shape(in[0].shape, in[1].shape, false, false, true, "MatMul").out, in[0].dtype}};
}

std::vector<TensorMeta> infer_batch_matmul(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, "BatchMatMul");
  require_no_bool(in, "BatchMatMul");
  const auto s = matmul_shape(in[0].shape, in[1].shape, attrs.get_int("adj_x", 0) != 0, attrs.get_int("adj_y", 0) != 0,
                              false, "BatchMatMul");
  return {{s.out, in[0].dtype}};
}

KernelCost cost_matmul(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  const auto s = matmul_shape(in[0].shape, in[1].shape, false, false, true, "MatMul");
  return cube_cost(s.batch, s.m, s.n, s.k, io_bytes(in, out), out_bytes(out));
}

KernelCost cost_batch_matmul(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const auto s = matmul_shape(in[0].shape, in[1].shape, attrs.get_int("adj_x", 0) != 0, attrs.get_int("adj_y", 0) != 0,
                              false, "BatchMatMul");
  return cube_cost(s.batch, s.m, s.n, s.k, io_bytes(in, out), out_bytes(out));
}

// Gemm: A [M, K] ([K, M] with transA), B [K, N] ([N, K] with transB), C unidirectionally
// broadcastable to [M, N].
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

GemmShape gemm_shape(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape &a = in[0].shape, &b = in[1].shape;
  if (a.size() != 2 || b.size() != 2) fail("Gemm", "A and B must be 2-D, got " + shape_str(a) + " and " + shape_str(b));
  const bool ta = attrs.get_int("transA", 0) != 0, tb = attrs.get_int("transB", 0) != 0;
  GemmShape s{ta ? a[1] : a[0], tb ? b[0] : b[1], ta ? a[0] : a[1]};
  const std::int64_t kb = tb ? b[1] : b[0];
  if (s.k != kb) {
    fail("Gemm", "inner dimensions differ (" + std::to_string(s.k) + " vs " + std::to_string(kb) + ") in " +
                     shape_str(a) + " x " + shape_str(b) + (ta ? " transA" : "") + (tb ? " transB" : ""));
  }
  if (in.size() > 2 && in[2].present) {
    const Shape& c = in[2].shape;
    const bool ok =
        c.size() <= 2 && (c.empty() || c.back() == 1 || c.back() == s.n) && (c.size() < 2 || c[0] == 1 || c[0] == s.m);
    if (!ok)
      fail("Gemm",
           "C " + shape_str(c) + " cannot be broadcast to [" + std::to_string(s.m) + ", " + std::to_string(s.n) + "]");
  }
  return s;
}

std::vector<TensorMeta> infer_gemm(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_same_dtype(in, "Gemm");
  require_no_bool(in, "Gemm");
  const GemmShape s = gemm_shape(in, attrs);
  return {{{s.m, s.n}, in[0].dtype}};
}

KernelCost cost_gemm(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  const GemmShape s = gemm_shape(in, attrs);
  return cube_cost(1, s.m, s.n, s.k, io_bytes(in, out), out_bytes(out));
}

// ---- kernels -------------------------------------------------------------------------------------

// All batches of C = op(A) · op(B). One GEMM when B is shared and A's matrices are stacked rows
// ([B, M, K] x [K, N], the linear-layer case); else one GEMM per output matrix.
template <class T>
void batched_matmul(const MatmulShape& s, bool adj_a, bool adj_b, const T* a, const T* b, T* c) {
  const std::int64_t lda = adj_a ? s.m : s.k, ldb = adj_b ? s.k : s.n;
  const std::int64_t a_mat = s.m * s.k, b_mat = s.k * s.n, c_mat = s.m * s.n;
  if (shape_numel(s.b_batch) == 1 && !adj_a && shape_numel(s.a_batch) == s.batch) {
    gemm(false, adj_b, s.batch * s.m, s.n, s.k, T(1), a, lda, b, ldb, T(0), c, s.n);
    return;
  }
  std::vector<std::int64_t> ia, ib;
  BroadcastIndex(s.a_batch, s.out_batch).fill(ia);
  BroadcastIndex(s.b_batch, s.out_batch).fill(ib);
  for (std::int64_t i = 0; i < s.batch; ++i) {
    gemm(adj_a, adj_b, s.m, s.n, s.k, T(1), a + ia[i] * a_mat, lda, b + ib[i] * b_mat, ldb, T(0), c + i * c_mat, s.n);
  }
}

template <class T>
void matmul_run(KernelContext& ctx, bool adj_a, bool adj_b, bool promote_1d) {
  const TensorView &x = ctx.inputs[0], &y = ctx.inputs[1];
  // Validated by infer already: cannot throw here.
  const MatmulShape s = matmul_shape(*x.shape, *y.shape, adj_a, adj_b, promote_1d, "MatMul");
  GemmOperand<T> a(x, ctx), b(y, ctx);
  GemmResult<T> c(ctx.outputs[0]);
  batched_matmul(s, adj_a, adj_b, a.data(), b.data(), c.data());
  c.finish(ctx);
}

template <class T>
void matmul_kernel(KernelContext& ctx) {
  matmul_run<T>(ctx, false, false, true);
}

template <class T>
void batch_matmul_kernel(KernelContext& ctx) {
  matmul_run<T>(ctx, ctx.attrs.get_int("adj_x", 0) != 0, ctx.attrs.get_int("adj_y", 0) != 0, false);
}

// Fills the [m, n] result with C broadcast (C: [], [n], [1, n], [m, 1], [m, n], ...).
template <class T>
void broadcast_c(const TensorView& cv, const T* cdata, std::int64_t m, std::int64_t n, T* y) {
  const Shape& cs = *cv.shape;
  const std::int64_t cols = cs.empty() ? 1 : cs.back();
  const std::int64_t rows = cs.size() < 2 ? 1 : cs[0];
  for (std::int64_t i = 0; i < m; ++i) {
    const T* src = cdata + (rows == 1 ? 0 : i * cols);
    T* dst = y + i * n;
    if (cols == 1) {
      std::fill(dst, dst + n, src[0]);
    } else {
      std::copy(src, src + n, dst);
    }
  }
}

template <class T>
void gemm_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &w = ctx.inputs[1];
  const bool ta = ctx.attrs.get_int("transA", 0) != 0, tb = ctx.attrs.get_int("transB", 0) != 0;
  const T alpha = static_cast<T>(ctx.attrs.get_float("alpha", 1.0));
  T beta = static_cast<T>(ctx.attrs.get_float("beta", 1.0));
  const Shape &as = *x.shape, &bs = *w.shape;
  const std::int64_t m = ta ? as[1] : as[0], k = ta ? as[0] : as[1], n = tb ? bs[0] : bs[1];
  GemmOperand<T> a(x, ctx), b(w, ctx);
  GemmResult<T> y(ctx.outputs[0]);
  const bool has_c = ctx.inputs.size() > 2 && ctx.inputs[2].data != nullptr;
  if (has_c && beta != T(0)) {
    GemmOperand<T> c(ctx.inputs[2], ctx);
    broadcast_c(ctx.inputs[2], c.data(), m, n, y.data());
  } else {
    beta = T(0);
  }
  gemm(ta, tb, m, n, k, alpha, a.data(), as[1], b.data(), bs[1], beta, y.data(), n);
  y.finish(ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "MatMul",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_matmul,
                              .cost = cost_matmul});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "BatchMatMul",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_batch_matmul,
                              .cost = cost_batch_matmul});
NPUSCOPE_REGISTER_OP(OpSchema{.type = "Gemm",
                              .category = OpCategory::kCube,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .infer = infer_gemm,
                              .cost = cost_gemm});

NPUSCOPE_REGISTER_CUBE_KERNELS("MatMul", matmul_kernel, cube_supports);
NPUSCOPE_REGISTER_CUBE_KERNELS("BatchMatMul", batch_matmul_kernel, cube_supports);
NPUSCOPE_REGISTER_CUBE_KERNELS("Gemm", gemm_kernel, cube_supports);

}  // namespace npuscope::emulator::kernels
