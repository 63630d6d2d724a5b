// C = A x B, f16 [M, K] x [K, N] -> f16 [M, N], tiled for the cube: each block computes 128 x 128
// tiles of C, taking K in steps of 64 through L1 (Nd2Nz), L0A / L0B (LoadData) and L0C (Mmad,
// f32 accumulation), and writes each tile with Fixpipe. Planted bug (attr bug=1): the A tile is
// copied into L1 16 bytes past its buffer's start, which the cube's 32-byte rule refuses.
#include <algorithm>

#include "golden_util.h"
#include "npuscope/opkit/custom_op.h"
#include "npuscope/opkit/kernel_operator.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
using npuscope::DType;

constexpr std::uint32_t kBaseM = 128, kBaseN = 128, kBaseK = 64;

struct MatmulTiling {
  std::uint32_t m, n, k;
  std::uint32_t bug;
};

std::uint32_t round16(std::uint32_t v) { return (v + 15) / 16 * 16; }

class KernelMatmul {
 public:
  __aicore__ void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const MatmulTiling& td) {
    td_ = td;
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), std::uint64_t{td.m} * td.k);
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), std::uint64_t{td.k} * td.n);
    cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(c), std::uint64_t{td.m} * td.n);
    pipe_.InitBuffer(qA1_, 2, kBaseM * kBaseK * sizeof(half) + 32);  // + 32: room for the planted bug
    pipe_.InitBuffer(qB1_, 2, kBaseK * kBaseN * sizeof(half));
    pipe_.InitBuffer(qA2_, 2, kBaseM * kBaseK * sizeof(half));
    pipe_.InitBuffer(qB2_, 2, kBaseK * kBaseN * sizeof(half));
    pipe_.InitBuffer(qCO1_, 2, kBaseM * kBaseN * sizeof(float));
  }
  __aicore__ void Process() {
    const std::uint32_t tiles_m = (td_.m + kBaseM - 1) / kBaseM, tiles_n = (td_.n + kBaseN - 1) / kBaseN;
    for (std::uint32_t t = static_cast<std::uint32_t>(GetBlockIdx()); t < tiles_m * tiles_n;
         t += static_cast<std::uint32_t>(GetBlockNum())) {
      ComputeTile(t / tiles_n, t % tiles_n);
    }
  }

 private:
  __aicore__ void ComputeTile(std::uint32_t tm, std::uint32_t tn) {
    const std::uint32_t m = std::min(kBaseM, td_.m - tm * kBaseM), n = std::min(kBaseN, td_.n - tn * kBaseN);
    LocalTensor<float> c = qCO1_.AllocTensor<float>();
    for (std::uint32_t k0 = 0; k0 < td_.k; k0 += kBaseK) {
      const std::uint32_t k = std::min(kBaseK, td_.k - k0);
      CopyIn(tm * kBaseM, tn * kBaseN, k0, m, n, k);
      SplitFractals(qA1_, qA2_, m, k, false);
      SplitFractals(qB1_, qB2_, k, n, true);
      LocalTensor<half> a2 = qA2_.DeQue<half>(), b2 = qB2_.DeQue<half>();
      Mmad(c, a2, b2,
           MmadParams{static_cast<std::uint16_t>(m), static_cast<std::uint16_t>(n), static_cast<std::uint16_t>(k),
                      false, 0, false, false, false, 0, false, false, k0 == 0});
      qA2_.FreeTensor(a2);
      qB2_.FreeTensor(b2);
    }
    qCO1_.EnQue(c);
    c = qCO1_.DeQue<float>();
    Fixpipe(cGm_[std::uint64_t{tm} * kBaseM * td_.n + tn * kBaseN], c, FixpipeParams{n, m, round16(m), td_.n});
    qCO1_.FreeTensor(c);
  }
  // GM (row-major) -> L1 (NZ): the A tile m x k and the B tile k x n.
  __aicore__ void CopyIn(std::uint32_t row, std::uint32_t col, std::uint32_t k0, std::uint32_t m, std::uint32_t n,
                         std::uint32_t k) {
    LocalTensor<half> a1 = qA1_.AllocTensor<half>(), b1 = qB1_.AllocTensor<half>();
    LocalTensor<half> a1_dst = td_.bug != 0 ? a1[8] : a1;  // the bug: 16 bytes in
    DataCopy(a1_dst, aGm_[std::uint64_t{row} * td_.k + k0],
             Nd2NzParams{1, static_cast<std::uint16_t>(m), static_cast<std::uint16_t>(k), 0,
                         static_cast<std::uint16_t>(td_.k), static_cast<std::uint16_t>(round16(m)), 1, 0});
    DataCopy(b1, bGm_[std::uint64_t{k0} * td_.n + col],
             Nd2NzParams{1, static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(n), 0,
                         static_cast<std::uint16_t>(td_.n), static_cast<std::uint16_t>(round16(k)), 1, 0});
    qA1_.EnQue(a1);
    qB1_.EnQue(b1);
  }
  // A rows x cols tile's NZ fractals (column blocks of 16) from L1 into L0A / L0B in row-major
  // fractal order: A as they are, B each transposed (column-major inside).
  template <class L1Queue, class L0Queue>
  __aicore__ void SplitFractals(L1Queue& l1, L0Queue& l0, std::uint32_t rows, std::uint32_t cols, bool transpose) {
    const std::uint32_t r1 = round16(rows) / 16, c1 = round16(cols) / 16;
    LocalTensor<half> src = l1.template DeQue<half>(), dst = l0.template AllocTensor<half>();
    for (std::uint32_t i = 0; i < r1; ++i) {
      LoadData(dst[i * c1 * 256], src,
               LoadData2DParams{static_cast<std::uint16_t>(i), static_cast<std::uint8_t>(c1),
                                static_cast<std::uint16_t>(r1), 0, 0, transpose, 0});
    }
    l1.FreeTensor(src);
    l0.EnQue(dst);
  }

  MatmulTiling td_{};
  TPipe pipe_;
  TQue<TPosition::A1, 2> qA1_;
  TQue<TPosition::B1, 2> qB1_;
  TQue<TPosition::A2, 2> qA2_;
  TQue<TPosition::B2, 2> qB2_;
  TQue<TPosition::CO1, 2> qCO1_;
  GlobalTensor<half> aGm_, bGm_, cGm_;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling, MatmulTiling);
  KernelMatmul op;
  op.Init(a, b, c, td);
  op.Process();
}

void matmul_tiling(npuscope::opkit::TilingContext& ctx) {
  using npuscope::emulator::InvalidArgument;
  const auto& a = ctx.inputs[0];
  const auto& b = ctx.inputs[1];
  npuscope::samples::require_dtype("MatmulCustom", a.dtype, {DType::kF16});
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0] || b.dtype != a.dtype) {
    throw InvalidArgument("MatmulCustom: takes f16 matrices [M, K] and [K, N], got " +
                          npuscope::emulator::shape_str(a.shape) + " and " + npuscope::emulator::shape_str(b.shape));
  }
  if (a.shape[0] < 1 || a.shape[1] < 1 || b.shape[1] < 1 || a.shape[0] > 65535 || a.shape[1] > 65535 ||
      b.shape[1] > 65535) {
    throw InvalidArgument("MatmulCustom: M, K and N must be in [1, 65535]");
  }
  const auto m = static_cast<std::uint32_t>(a.shape[0]), k = static_cast<std::uint32_t>(a.shape[1]);
  const auto n = static_cast<std::uint32_t>(b.shape[1]);
  const std::uint32_t tiles = ((m + kBaseM - 1) / kBaseM) * ((n + kBaseN - 1) / kBaseN);
  ctx.block_dim = std::min(tiles, ctx.GetCoreNum());
  ctx.SetTiling(MatmulTiling{m, n, k, static_cast<std::uint32_t>(ctx.attrs->get_int("bug", 0))});
}

std::vector<npuscope::emulator::TensorMeta> matmul_infer(std::span<const npuscope::emulator::TensorMeta> in,
                                                         const npuscope::emulator::Attrs&) {
  if (in[0].shape.size() != 2 || in[1].shape.size() != 2) {
    throw npuscope::emulator::InvalidArgument("MatmulCustom: takes 2-D matrices");
  }
  return {{{in[0].shape[0], in[1].shape[1]}, in[0].dtype, true}};
}

void matmul_golden(npuscope::emulator::KernelContext& ctx) {
  const auto a = npuscope::samples::read_doubles(ctx.inputs[0]);
  const auto b = npuscope::samples::read_doubles(ctx.inputs[1]);
  const auto m = static_cast<std::size_t>((*ctx.inputs[0].shape)[0]);
  const auto k = static_cast<std::size_t>((*ctx.inputs[0].shape)[1]);
  const auto n = static_cast<std::size_t>((*ctx.inputs[1].shape)[1]);
  std::vector<double> c(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t kk = 0; kk < k; ++kk)
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + kk] * b[kk * n + j];
  npuscope::samples::write_doubles(ctx.outputs[0], c);
}

}  // namespace

NPUSCOPE_OPKIT_OP(matmul_custom, {.type = "MatmulCustom",
                                  .core = npuscope::opkit::CoreType::kCube,
                                  .num_inputs = 2,
                                  .tiling = matmul_tiling,
                                  .golden = matmul_golden,
                                  .infer = matmul_infer,
                                  .category = npuscope::emulator::OpCategory::kCube});
