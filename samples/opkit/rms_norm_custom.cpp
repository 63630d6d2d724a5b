// y = gamma * (x / sqrt(mean(x^2) + eps)) over the last dimension, as LLaMA's RMSNorm computes it
// (HF LlamaRMSNorm: the normalisation in f32, cast to the input dtype, then times gamma in it).
// Inputs x [..., H] and gamma [H], f16 or f32; attr epsilon (default 1e-6). Each block takes a range
// of rows, a tile holds as many rows as the UB allows. Planted bug (attr bug=1): the host tiling
// sizes a tile by the input and output buffers only, forgetting the f32 working buffers, and the
// pipe's buffers overflow the UB.
#include <algorithm>
#include <cmath>

#include "golden_util.h"
#include "npuscope/opkit/custom_op.h"
#include "npuscope/opkit/kernel_operator.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
using npuscope::DType;

constexpr int kBufferNum = 2;

struct RmsNormTiling {
  std::uint32_t rows;            // all rows
  std::uint32_t hidden;          // H
  std::uint32_t hidden_padded;   // H rounded up to 32 bytes
  std::uint32_t rows_per_block;  // the last block may have fewer
  std::uint32_t rows_per_tile;
  std::uint32_t is_f32;
  float epsilon;
};

template <class T>
class KernelRmsNorm {
 public:
  __aicore__ void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const RmsNormTiling& td) {
    td_ = td;
    const std::uint32_t start = td.rows_per_block * static_cast<std::uint32_t>(GetBlockIdx());
    rows_ = std::min(td.rows_per_block, td.rows - start);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + std::uint64_t{start} * td.hidden, rows_ * td.hidden);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + std::uint64_t{start} * td.hidden, rows_ * td.hidden);
    gammaGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(gamma), td.hidden);
    const std::uint32_t tile = td.rows_per_tile * td.hidden_padded;
    pipe_.InitBuffer(inQueue_, kBufferNum, tile * sizeof(T));
    pipe_.InitBuffer(outQueue_, kBufferNum, tile * sizeof(T));
    pipe_.InitBuffer(gammaQueue_, 1, td.hidden_padded * sizeof(T));
    pipe_.InitBuffer(squares_, tile * sizeof(float));
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(xf_, tile * sizeof(float));
    pipe_.InitBuffer(work_, td.hidden_padded * sizeof(float));
    pipe_.InitBuffer(sums_, td.rows_per_tile * sizeof(float));
  }
  __aicore__ void Process() {
    LocalTensor<T> g = gammaQueue_.template AllocTensor<T>();
    DataCopyPad(g, gammaGm_, Rows(1), DataCopyPadExtParams<T>{true, 0, 0, T(0.0f)});
    gammaQueue_.EnQue(g);
    gamma_ = gammaQueue_.template DeQue<T>();
    for (std::uint32_t first = 0; first < rows_; first += td_.rows_per_tile) {
      const std::uint32_t rows = std::min(td_.rows_per_tile, rows_ - first);
      CopyIn(first, rows);
      Compute(rows);
      CopyOut(first, rows);
    }
    gammaQueue_.FreeTensor(gamma_);
  }

 private:
  // `rows` rows of H elements: contiguous in GM, each starting on a 32-byte boundary in the UB.
  DataCopyExtParams Rows(std::uint32_t rows) const {
    return {static_cast<std::uint16_t>(rows), static_cast<std::uint32_t>(td_.hidden * sizeof(T)), 0, 0, 0};
  }
  __aicore__ void CopyIn(std::uint32_t first, std::uint32_t rows) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    DataCopyPad(x, xGm_[std::uint64_t{first} * td_.hidden], Rows(rows), DataCopyPadExtParams<T>{true, 0, 0, T(0.0f)});
    inQueue_.EnQue(x);
  }
  __aicore__ void Compute(std::uint32_t rows) {
    const std::uint32_t hp = td_.hidden_padded, n = rows * hp;
    LocalTensor<T> x = inQueue_.template DeQue<T>();
    LocalTensor<T> y = outQueue_.template AllocTensor<T>();
    LocalTensor<float> xf, sq = squares_.Get<float>(), sums = sums_.Get<float>();
    if constexpr (std::is_same_v<T, float>) {
      xf = x;
    } else {
      xf = xf_.Get<float>();
      Cast(xf, x, RoundMode::CAST_NONE, n);
    }
    Mul(sq, xf, xf, n);
    for (std::uint32_t r = 0; r < rows; ++r) {
      ReduceSum(sums[r], sq[r * hp], work_.Get<float>(), td_.hidden);
      const float mean = sums.GetValue(r) / static_cast<float>(td_.hidden);
      Muls(xf[r * hp], xf[r * hp], 1.0f / std::sqrt(mean + td_.epsilon), hp);
    }
    if constexpr (!std::is_same_v<T, float>) Cast(y, xf, RoundMode::CAST_RINT, n);
    for (std::uint32_t r = 0; r < rows; ++r) {
      if constexpr (std::is_same_v<T, float>)
        Mul(y[r * hp], xf[r * hp], gamma_, hp);
      else
        Mul(y[r * hp], y[r * hp], gamma_, hp);
    }
    outQueue_.EnQue(y);
    inQueue_.FreeTensor(x);
  }
  __aicore__ void CopyOut(std::uint32_t first, std::uint32_t rows) {
    LocalTensor<T> y = outQueue_.template DeQue<T>();
    DataCopyPad(yGm_[std::uint64_t{first} * td_.hidden], y, Rows(rows));
    outQueue_.FreeTensor(y);
  }

  RmsNormTiling td_{};
  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inQueue_;
  TQue<TPosition::VECOUT, kBufferNum> outQueue_;
  TQue<TPosition::VECIN, 1> gammaQueue_;
  TBuf<TPosition::VECCALC> squares_, xf_, work_, sums_;
  GlobalTensor<T> xGm_, yGm_, gammaGm_;
  LocalTensor<T> gamma_;
  std::uint32_t rows_ = 0;
};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling, RmsNormTiling);
  if (td.is_f32 != 0) {
    KernelRmsNorm<float> op;
    op.Init(x, gamma, y, td);
    op.Process();
  } else {
    KernelRmsNorm<half> op;
    op.Init(x, gamma, y, td);
    op.Process();
  }
}

void rms_norm_tiling(npuscope::opkit::TilingContext& ctx) {
  using npuscope::emulator::InvalidArgument;
  const auto& x = ctx.inputs[0];
  const auto& gamma = ctx.inputs[1];
  npuscope::samples::require_dtype("RmsNormCustom", x.dtype, {DType::kF16, DType::kF32});
  if (x.shape.empty() || gamma.shape.size() != 1 || gamma.shape[0] != x.shape.back() || gamma.dtype != x.dtype) {
    throw InvalidArgument("RmsNormCustom: gamma must be a 1-D tensor of x's last dimension and dtype");
  }
  const std::uint32_t size = x.dtype == DType::kF32 ? 4 : 2;
  const auto hidden = static_cast<std::uint32_t>(x.shape.back());
  const std::uint32_t align = 32 / size;
  const std::uint32_t hp = (hidden + align - 1) / align * align;
  const std::uint64_t rows = hidden == 0 ? 0 : static_cast<std::uint64_t>(x.numel()) / hidden;
  if (hidden == 0 || rows >= (1u << 31)) throw InvalidArgument("RmsNormCustom: needs 1 to 2^31 - 1 rows of H > 0");
  // UB per row of a tile: two in and two out buffers, the squares and (f16) the f32 copy; fixed:
  // gamma, the reduction's scratch and the row sums.
  const bool bug = ctx.attrs->get_int("bug", 0) != 0;
  const std::uint64_t per_row = bug ? 4ull * hp * size : 4ull * hp * size + (size == 4 ? 4ull : 8ull) * hp;
  const std::uint64_t fixed = std::uint64_t{hp} * size + 4ull * hp + 256;
  const std::uint64_t ub = ctx.GetUbSize();
  if (fixed + per_row > ub) {
    throw InvalidArgument("RmsNormCustom: a row of " + std::to_string(hidden) + " elements does not fit in the " +
                          std::to_string(ub) + "-byte UB");
  }
  const auto blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, ctx.GetCoreNum()));
  const auto per_block = static_cast<std::uint32_t>((rows + blocks - 1) / blocks);
  std::uint64_t per_tile = (ub - fixed) / per_row;
  if (!bug) per_tile = std::min<std::uint64_t>(per_tile, per_block);
  ctx.block_dim = static_cast<std::uint32_t>((rows + per_block - 1) / per_block);
  ctx.SetTiling(RmsNormTiling{static_cast<std::uint32_t>(rows), hidden, hp, per_block,
                              static_cast<std::uint32_t>(std::min<std::uint64_t>(per_tile, 65535)), size == 4 ? 1u : 0u,
                              static_cast<float>(ctx.attrs->get_float("epsilon", 1e-6))});
}

void rms_norm_golden(npuscope::emulator::KernelContext& ctx) {
  const auto x = npuscope::samples::read_doubles(ctx.inputs[0]);
  const auto gamma = npuscope::samples::read_doubles(ctx.inputs[1]);
  const double eps = ctx.attrs.get_float("epsilon", 1e-6);
  const std::size_t h = gamma.size();
  std::vector<double> y(x.size());
  for (std::size_t row = 0; row < x.size() / h; ++row) {
    double sum = 0;
    for (std::size_t i = 0; i < h; ++i) sum += x[row * h + i] * x[row * h + i];
    const double rstd = 1.0 / std::sqrt(sum / static_cast<double>(h) + eps);
    for (std::size_t i = 0; i < h; ++i) {
      double normed = x[row * h + i] * rstd;
      if (ctx.inputs[0].dtype == DType::kF16) normed = npuscope::emulator::round_to_half(static_cast<float>(normed));
      y[row * h + i] = gamma[i] * normed;
    }
  }
  npuscope::samples::write_doubles(ctx.outputs[0], y);
}

}  // namespace

NPUSCOPE_OPKIT_OP(rms_norm_custom,
                  {.type = "RmsNormCustom", .num_inputs = 2, .tiling = rms_norm_tiling, .golden = rms_norm_golden});
