// z = x + y on f16 tensors of any length: the Ascend C tutorial's Add, with double buffering.
// docs/opkit.md writes it step by step. Planted bug (attr bug=1): the copied-in tile of x is never
// enqueued, so the compute stage's DeQue finds the queue empty.
#include <algorithm>

#include "golden_util.h"
#include "npuscope/opkit/custom_op.h"
#include "npuscope/opkit/kernel_operator.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace): as Ascend C kernels are written
using npuscope::DType;

constexpr int kBufferNum = 2;                // two buffers per queue: copy tile i+1 while computing tile i
constexpr std::uint32_t kTileLength = 4096;  // halves per tile: 3 queues x 2 x 8 KiB of the 192 KiB UB

struct AddTiling {
  std::uint32_t total_length;  // elements of x
  std::uint32_t block_length;  // elements per block (the last may have fewer)
  std::uint32_t bug;
};

class KernelAdd {
 public:
  __aicore__ void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& td) {
    const std::uint32_t start = td.block_length * static_cast<std::uint32_t>(GetBlockIdx());
    length_ = std::min(td.block_length, td.total_length - start);
    bug_ = td.bug != 0;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x) + start, length_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y) + start, length_);
    zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(z) + start, length_);
    pipe_.InitBuffer(inQueueX_, kBufferNum, kTileLength * sizeof(half));
    pipe_.InitBuffer(inQueueY_, kBufferNum, kTileLength * sizeof(half));
    pipe_.InitBuffer(outQueueZ_, kBufferNum, kTileLength * sizeof(half));
  }
  __aicore__ void Process() {
    const std::uint32_t tiles = (length_ + kTileLength - 1) / kTileLength;
    for (std::uint32_t i = 0; i < tiles; ++i) {
      const std::uint32_t count = std::min(kTileLength, length_ - i * kTileLength);
      CopyIn(i, count);
      Compute(count);
      CopyOut(i, count);
    }
  }

 private:
  // Lengths of DataCopy are whole 32-byte blocks (16 halves); a tail goes through DataCopyPad.
  static void Load(const LocalTensor<half>& dst, const GlobalTensor<half>& src, std::uint32_t count) {
    if (count % 16 == 0) {
      DataCopy(dst, src, count);
    } else {
      DataCopyPad(dst, src, DataCopyExtParams{1, static_cast<std::uint32_t>(count * sizeof(half)), 0, 0, 0},
                  DataCopyPadExtParams<half>{true, 0, 0, half(0.0f)});
    }
  }
  __aicore__ void CopyIn(std::uint32_t tile, std::uint32_t count) {
    LocalTensor<half> x = inQueueX_.AllocTensor<half>();
    LocalTensor<half> y = inQueueY_.AllocTensor<half>();
    Load(x, xGm_[tile * kTileLength], count);
    Load(y, yGm_[tile * kTileLength], count);
    if (!bug_) inQueueX_.EnQue(x);
    inQueueY_.EnQue(y);
  }
  __aicore__ void Compute(std::uint32_t count) {
    LocalTensor<half> x = inQueueX_.DeQue<half>();
    LocalTensor<half> y = inQueueY_.DeQue<half>();
    LocalTensor<half> z = outQueueZ_.AllocTensor<half>();
    Add(z, x, y, (count + 15) / 16 * 16);
    outQueueZ_.EnQue(z);
    inQueueX_.FreeTensor(x);
    inQueueY_.FreeTensor(y);
  }
  __aicore__ void CopyOut(std::uint32_t tile, std::uint32_t count) {
    LocalTensor<half> z = outQueueZ_.DeQue<half>();
    if (count % 16 == 0) {
      DataCopy(zGm_[tile * kTileLength], z, count);
    } else {
      DataCopyPad(zGm_[tile * kTileLength], z,
                  DataCopyExtParams{1, static_cast<std::uint32_t>(count * sizeof(half)), 0, 0, 0});
    }
    outQueueZ_.FreeTensor(z);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, kBufferNum> inQueueX_, inQueueY_;
  TQue<TPosition::VECOUT, kBufferNum> outQueueZ_;
  GlobalTensor<half> xGm_, yGm_, zGm_;
  std::uint32_t length_ = 0;
  bool bug_ = false;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling, AddTiling);
  KernelAdd op;
  op.Init(x, y, z, td);
  op.Process();
}

// Host side: one block per 16 Ki elements, at most one per vector core; block lengths a whole
// number of 32-byte blocks, so that only the last block has a tail.
void add_tiling(npuscope::opkit::TilingContext& ctx) {
  npuscope::samples::require_dtype("AddCustom", ctx.inputs[0].dtype, {DType::kF16});
  if (ctx.inputs[1].shape != ctx.inputs[0].shape || ctx.inputs[1].dtype != ctx.inputs[0].dtype) {
    throw npuscope::emulator::InvalidArgument("AddCustom: x and y must have one shape and dtype");
  }
  if (ctx.inputs[0].numel() >= (std::int64_t{1} << 31)) {
    throw npuscope::emulator::InvalidArgument("AddCustom: at most 2^31 - 1 elements");
  }
  const auto total = static_cast<std::uint32_t>(ctx.inputs[0].numel());
  const std::uint32_t want = std::max(1u, (total + 16383) / 16384);
  const std::uint32_t blocks = std::min(want, ctx.GetCoreNum());
  const std::uint32_t per_block = std::max(16u, ((total + blocks - 1) / blocks + 15) / 16 * 16);
  ctx.block_dim = std::max(1u, (total + per_block - 1) / per_block);
  ctx.SetTiling(AddTiling{total, per_block, static_cast<std::uint32_t>(ctx.attrs->get_int("bug", 0))});
}

void add_golden(npuscope::emulator::KernelContext& ctx) {
  const auto x = npuscope::samples::read_doubles(ctx.inputs[0]);
  const auto y = npuscope::samples::read_doubles(ctx.inputs[1]);
  std::vector<double> z(x.size());
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = x[i] + y[i];
  npuscope::samples::write_doubles(ctx.outputs[0], z);
}

}  // namespace

NPUSCOPE_OPKIT_OP(add_custom, {.type = "AddCustom", .num_inputs = 2, .tiling = add_tiling, .golden = add_golden});
