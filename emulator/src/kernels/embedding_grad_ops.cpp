// EmbeddingDenseGrad: PyTorch 1.13's CPU embedding_dense_backward.
//   (dy [..., D], indices int64/int32 [...]; num_weights, padding_idx = -1, scale_grad_by_freq = 0)
//   -> dW [num_weights, D] with dW[k] = Σ over positions i with indices[i] == k of dy[i] (times
//   1 / count(k) when scale_grad_by_freq); positions whose index is padding_idx add nothing
//   (padding_idx -1: none; compared to the raw index, as aten does after F.embedding normalised it).
// An index outside [0, num_weights) is a kernel fault (Note [Kernel faults]); the others still
// accumulate. NPU: f32, each row's occurrences summed over 8 lanes; CPU golden: f64 in index order.
#include <string>
#include <vector>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kEmbeddingDenseGrad[] = "EmbeddingDenseGrad";

std::vector<TensorMeta> infer_embedding_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kEmbeddingDenseGrad);
  require_index_dtype(in, 1, kEmbeddingDenseGrad, "indices");
  const Shape &dy = in[0].shape, &idx = in[1].shape;
  Shape want = idx;
  if (dy.empty()) fail(kEmbeddingDenseGrad, "dy must be [..., D], got a scalar");
  want.push_back(dy.back());
  if (dy != want) {
    fail(kEmbeddingDenseGrad,
         "dy " + shape_str(dy) + " must be indices' shape " + shape_str(idx) + " followed by the embedding dim");
  }
  if (!attrs.has("num_weights")) fail(kEmbeddingDenseGrad, "needs the 'num_weights' attribute");
  const std::int64_t n = attrs.get_int("num_weights", 0);
  if (n < 0) fail(kEmbeddingDenseGrad, "num_weights must be >= 0, got " + std::to_string(n));
  attrs.get_int("padding_idx", -1);
  attrs.get_int("scale_grad_by_freq", 0);
  checked_mul(n, dy.back(), kEmbeddingDenseGrad, "num_weights * D");
  return {{{n, dy.back()}, in[0].dtype}};
}

KernelCost cost_embedding_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(in[0].numel());  // one add per dy element
  return c;
}

// The positions of each row, grouped by row (counting sort), after the range check.
struct Groups {
  std::vector<std::int64_t> start, order;  // row k's positions: order[start[k] .. start[k + 1])
};

Groups group_indices(KernelContext& ctx, std::int64_t rows) {
  const TensorView& iv = ctx.inputs[1];
  std::vector<std::int64_t> idx(static_cast<std::size_t>(iv.numel));
  load_i64(iv, idx.data());
  const std::int64_t padding = ctx.attrs.get_int("padding_idx", -1);
  Groups g;
  g.start.assign(static_cast<std::size_t>(rows + 1), 0);
  for (std::int64_t& k : idx) {
    if (k < 0 || k >= rows) {
      if (ctx.fault.empty()) {
        set_fault(ctx, std::string(kEmbeddingDenseGrad) + ": index " + std::to_string(k) + " is out of range [0, " +
                           std::to_string(rows - 1) + "] for num_weights " + std::to_string(rows));
      }
      k = -1;
    } else if (k == padding) {
      k = -1;
    } else {
      ++g.start[static_cast<std::size_t>(k + 1)];
    }
  }
  for (std::size_t k = 1; k < g.start.size(); ++k) g.start[k] += g.start[k - 1];
  g.order.resize(static_cast<std::size_t>(g.start.back()));
  std::vector<std::int64_t> fill(g.start.begin(), g.start.end() - 1);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] >= 0)
      g.order[static_cast<std::size_t>(fill[static_cast<std::size_t>(idx[i])]++)] = static_cast<std::int64_t>(i);
  }
  return g;
}

// Row k = Σ dy[p] over its positions p. kLanes: 8 interleaved partial sums (NPU), else one running
// sum in index order (CPU, f64).
template <class T, bool kLanes>
void embedding_grad_kernel(KernelContext& ctx) {
  const TensorView& out = ctx.outputs[0];
  const std::int64_t rows = out.shape->at(0), d = out.shape->at(1);
  const std::vector<T> dy = load<T>(ctx.inputs[0], ctx);
  const Groups g = group_indices(ctx, rows);
  const bool by_freq = ctx.attrs.get_int("scale_grad_by_freq", 0) != 0;
  std::vector<T> w(static_cast<std::size_t>(rows * d), T(0));
  std::vector<T> lanes(kLanes ? static_cast<std::size_t>(8 * d) : 0);
  for (std::int64_t k = 0; k < rows; ++k) {
    const std::int64_t begin = g.start[static_cast<std::size_t>(k)], end = g.start[static_cast<std::size_t>(k + 1)];
    if (begin == end) continue;
    T* row = w.data() + k * d;
    if constexpr (kLanes) {
      std::fill(lanes.begin(), lanes.end(), T(0));
      for (std::int64_t t = begin; t < end; ++t) {
        const T* src = dy.data() + g.order[static_cast<std::size_t>(t)] * d;
        T* acc = lanes.data() + ((t - begin) & 7) * d;
        for (std::int64_t j = 0; j < d; ++j) acc[j] += src[j];
      }
      const T* l = lanes.data();
      for (std::int64_t j = 0; j < d; ++j) {
        row[j] = ((l[j] + l[d + j]) + (l[2 * d + j] + l[3 * d + j])) +
                 ((l[4 * d + j] + l[5 * d + j]) + (l[6 * d + j] + l[7 * d + j]));
      }
    } else {
      for (std::int64_t t = begin; t < end; ++t) {
        const T* src = dy.data() + g.order[static_cast<std::size_t>(t)] * d;
        for (std::int64_t j = 0; j < d; ++j) row[j] += src[j];
      }
    }
    if (by_freq) {
      const T inv = T(1) / static_cast<T>(end - begin);
      for (std::int64_t j = 0; j < d; ++j) row[j] *= inv;
    }
  }
  store<T>(out, w.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kEmbeddingDenseGrad,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_embedding_grad,
                              .cost = cost_embedding_grad});

NPUSCOPE_REGISTER_KERNEL(kEmbeddingDenseGrad, Backend::kNpu, embedding_grad_kernel<float, true>);
NPUSCOPE_REGISTER_KERNEL(kEmbeddingDenseGrad, Backend::kCpu, embedding_grad_kernel<double, false>);

}  // namespace npuscope::emulator::kernels
