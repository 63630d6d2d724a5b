// y = gelu(x), tanh form, f16 or f32 of any length: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))),
// computed in f32 as x / (1 + exp(-2u)) (the same function: 0.5(1 + tanh(u)) = 1 / (1 + e^-2u)).
// Planted bug (attr bug=1): an off-by-one tile loop copies one tile past the block's slice.
#include <algorithm>
#include <cmath>

#include "golden_util.h"
#include "npuscope/opkit/custom_op.h"
#include "npuscope/opkit/kernel_operator.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
using npuscope::DType;

constexpr int kBufferNum = 2;
constexpr std::uint32_t kTileLength = 8192;
constexpr float kSqrt2OverPi = 0.7978845608028654f;

struct GeluTiling {
  std::uint32_t total_length;
  std::uint32_t block_length;
  std::uint32_t is_f32;
  std::uint32_t bug;
};

template <class T>
class KernelGelu {
 public:
  static constexpr std::uint32_t kAlign = 32 / sizeof(T);  // elements per 32-byte block

  __aicore__ void Init(GM_ADDR x, GM_ADDR y, const GeluTiling& td) {
    const std::uint32_t start = td.block_length * static_cast<std::uint32_t>(GetBlockIdx());
    length_ = std::min(td.block_length, td.total_length - start);
    bug_ = td.bug != 0;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, length_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, length_);
    pipe_.InitBuffer(inQueue_, kBufferNum, kTileLength * sizeof(T));
    pipe_.InitBuffer(outQueue_, kBufferNum, kTileLength * sizeof(T));
    pipe_.InitBuffer(tmp_, kTileLength * sizeof(float));
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(xf_, kTileLength * sizeof(float));
  }
  __aicore__ void Process() {
    const std::uint32_t tiles = (length_ + kTileLength - 1) / kTileLength;
    for (std::uint32_t i = 0; i < tiles + (bug_ ? 1 : 0); ++i) {  // the bug: i <= tiles
      // Past the last tile this wraps to a whole tile beyond the block's slice.
      const std::uint32_t count = std::min(kTileLength, length_ - i * kTileLength);
      CopyIn(i, count);
      Compute(count);
      CopyOut(i, count);
    }
  }

 private:
  __aicore__ void CopyIn(std::uint32_t tile, std::uint32_t count) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    if (count % kAlign == 0) {
      DataCopy(x, xGm_[tile * kTileLength], count);
    } else {
      DataCopyPad(x, xGm_[tile * kTileLength],
                  DataCopyExtParams{1, static_cast<std::uint32_t>(count * sizeof(T)), 0, 0, 0},
                  DataCopyPadExtParams<T>{true, 0, 0, T(0.0f)});
    }
    inQueue_.EnQue(x);
  }
  __aicore__ void Compute(std::uint32_t count) {
    const std::uint32_t n = (count + kAlign - 1) / kAlign * kAlign;
    LocalTensor<T> x = inQueue_.template DeQue<T>();
    LocalTensor<T> y = outQueue_.template AllocTensor<T>();
    LocalTensor<float> t = tmp_.Get<float>();
    LocalTensor<float> xf;
    if constexpr (std::is_same_v<T, float>) {
      xf = x;
    } else {
      xf = xf_.Get<float>();
      Cast(xf, x, RoundMode::CAST_NONE, n);
    }
    Mul(t, xf, xf, n);                    // x^2
    Mul(t, t, xf, n);                     // x^3
    Muls(t, t, 0.044715f, n);             // 0.044715 x^3
    Add(t, t, xf, n);                     // x + 0.044715 x^3
    Muls(t, t, -2.0f * kSqrt2OverPi, n);  // -2u
    Mins(t, t, 80.0f, n);                 // exp(-2u) stays finite; x / (1 + e^80) is 0 in f32 anyway
    Exp(t, t, n);
    Adds(t, t, 1.0f, n);
    if constexpr (std::is_same_v<T, float>) {
      Div(y, xf, t, n);
    } else {
      Div(t, xf, t, n);
      Cast(y, t, RoundMode::CAST_RINT, n);
    }
    outQueue_.EnQue(y);
    inQueue_.FreeTensor(x);
  }
  __aicore__ void CopyOut(std::uint32_t tile, std::uint32_t count) {
    LocalTensor<T> y = outQueue_.template DeQue<T>();
    if (count % kAlign == 0) {
      DataCopy(yGm_[tile * kTileLength], y, count);
    } else {
      DataCopyPad(yGm_[tile * kTileLength], y,
                  DataCopyExtParams{1, static_cast<std::uint32_t>(count * sizeof(T)), 0, 0, 0});
    }
    outQueue_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inQueue_;
  TQue<TPosition::VECOUT, kBufferNum> outQueue_;
  TBuf<TPosition::VECCALC> tmp_, xf_;
  GlobalTensor<T> xGm_, yGm_;
  std::uint32_t length_ = 0;
  bool bug_ = false;
};

extern "C" __global__ __aicore__ void gelu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling, GeluTiling);
  if (td.is_f32 != 0) {
    KernelGelu<float> op;
    op.Init(x, y, td);
    op.Process();
  } else {
    KernelGelu<half> op;
    op.Init(x, y, td);
    op.Process();
  }
}

void gelu_tiling(npuscope::opkit::TilingContext& ctx) {
  npuscope::samples::require_dtype("GeluCustom", ctx.inputs[0].dtype, {DType::kF16, DType::kF32});
  if (ctx.inputs[0].numel() >= (std::int64_t{1} << 31)) {
    throw npuscope::emulator::InvalidArgument("GeluCustom: at most 2^31 - 1 elements");
  }
  const auto total = static_cast<std::uint32_t>(ctx.inputs[0].numel());
  const std::uint32_t blocks = std::min(std::max(1u, (total + kTileLength - 1) / kTileLength), ctx.GetCoreNum());
  const std::uint32_t per_block = std::max(16u, ((total + blocks - 1) / blocks + 15) / 16 * 16);
  ctx.block_dim = std::max(1u, (total + per_block - 1) / per_block);
  ctx.SetTiling(GeluTiling{total, per_block, ctx.inputs[0].dtype == DType::kF32 ? 1u : 0u,
                           static_cast<std::uint32_t>(ctx.attrs->get_int("bug", 0))});
}

// The golden: PyTorch's gelu(approximate="tanh") in double, rounded once to the dtype.
void gelu_golden(npuscope::emulator::KernelContext& ctx) {
  auto x = npuscope::samples::read_doubles(ctx.inputs[0]);
  for (double& v : x) v = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  npuscope::samples::write_doubles(ctx.outputs[0], x);
}

}  // namespace

NPUSCOPE_OPKIT_OP(gelu_custom, {.type = "GeluCustom", .num_inputs = 1, .tiling = gelu_tiling, .golden = gelu_golden});
