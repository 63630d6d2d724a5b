// EmbeddingBag: PyTorch 1.13's CPU _embedding_bag in modes sum, mean and max (nn.EmbeddingBag,
// F.embedding_bag). An AI CPU op on Ascend, as torch_npu's EmbeddingBag: it has only the CPU kernel,
// which the dispatcher runs as an AI CPU task on the NPU (the fallback rule of op_registry.h).
//   (weight [V, D] float, indices [n] int32/int64, offsets [B] (or [B + 1] with include_last_offset)
//    int32/int64, per_sample_weights [n] (optional, mode sum only); mode 0 sum | 1 mean | 2 max,
//    include_last_offset 0 | 1, padding_idx (-1: none))
//   -> output [B, D] in weight's dtype, offset2bag [n] int64 (the bag of each index), bag_size [B]
//      int64 (the bag's indices that are not padding_idx), and in mode max max_indices [B, D] int64
// Bag b holds indices[offsets[b] .. offsets[b + 1]) (the last bag runs to n, or to offsets[B] with
// include_last_offset). Its row is the sum of weight[k] (times its per-sample weight) over those k
// that are not padding_idx; mean divides by their count; an empty bag is zeros. The backward is
// PyTorch's own: gather the output's gradient by offset2bag, scale it, and EmbeddingDenseGrad.
// Mode max is Note [Embedding bag max]. Offsets that do not start at 0, decrease or pass n, and
// indices outside [0, V), are bad data: a kernel fault (Note [Kernel faults]) and zeros for what they
// touch.
//
// Note [Embedding bag max]
// As 1.13's embedding_bag_cpu_max_out: element j of bag b's row is the largest weight[k][j] over
// the bag's k that are not padding_idx, and max_indices[b][j] is that k (a row of weight, not a
// position in indices). The first k of the bag sets the row; a later one replaces it only when
// strictly greater, so a tie keeps the earlier index and a NaN is kept once it is there but never
// replaces a number. A bag with no such k (empty or all padding) is zeros with max_indices 0, and its
// bag_size 0 is what tells the backward to skip it. Comparing in double gives float's order.
#include <algorithm>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "EmbeddingBag";
constexpr std::int64_t kMean = 1, kMax = 2;

std::int64_t bag_count(const TensorMeta& offsets, const Attrs& attrs) {
  return offsets.shape.empty() ? 0 : offsets.shape[0] - (attrs.get_int("include_last_offset", 0) != 0 ? 1 : 0);
}

std::vector<TensorMeta> infer_embedding_bag(std::span<const TensorMeta> in, const Attrs& attrs) {
  require_floating(in, 0, kOp);
  const Shape &w = in[0].shape, &idx = in[1].shape, &off = in[2].shape;
  if (w.size() != 2) fail(kOp, "weight must be [num_embeddings, D], got " + shape_str(w));
  if (idx.size() != 1 || off.size() != 1) {
    fail(kOp, "indices and offsets must be 1-D, got " + shape_str(idx) + " and " + shape_str(off));
  }
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    if (in[i].dtype != DType::kI64 && in[i].dtype != DType::kI32) {
      fail(kOp, std::string(i == 1 ? "indices" : "offsets") + " must be int32 or int64, got " +
                    std::string(dtype_name(in[i].dtype)));
    }
  }
  const std::int64_t mode = attrs.get_int("mode", 0);
  if (mode < 0 || mode > kMax) fail(kOp, "mode must be 0 (sum), 1 (mean) or 2 (max), got " + std::to_string(mode));
  if (in.size() > 3 && in[3].present) {
    if (mode != 0) fail(kOp, "per_sample_weights are only supported with mode 0 (sum)");
    if (in[3].shape != idx || in[3].dtype != in[0].dtype) {
      fail(kOp, "per_sample_weights must be like indices " + shape_str(idx) + " in weight's dtype, got " +
                    shape_str(in[3].shape) + ' ' + std::string(dtype_name(in[3].dtype)));
    }
  }
  const std::int64_t bags = bag_count(in[2], attrs);
  if (bags < 0) fail(kOp, "include_last_offset needs at least one offset");
  std::vector<TensorMeta> out{{{bags, w[1]}, in[0].dtype}, {idx, DType::kI64}, {{bags}, DType::kI64}};
  if (mode == kMax) out.push_back({{bags, w[1]}, DType::kI64});
  return out;
}

KernelCost cost_embedding_bag(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.bytes = static_cast<double>(in[1].numel() * in[0].shape[1]) * dtype_size(in[0].dtype) +  // the rows read
            static_cast<double>(out[0].numel()) * dtype_size(out[0].dtype);
  c.flops = static_cast<double>(in[1].numel() * in[0].shape[1]);  // one add (or compare) per gathered element
  return c;
}

// One kernel call's inputs as the bags read them. Only the rows the bags name are loaded (a
// vocabulary can be far larger than a batch's bags).
struct BagReader {
  const TensorView& weight;
  std::int64_t rows, d, padding;
  std::vector<std::int64_t> idx;
  std::vector<double> psw;  // empty unless per-sample weights are given
  std::vector<double> row;  // the last row loaded

  // Loads weight[idx[i]] into `row`; false for padding_idx and for an index outside weight (a fault).
  bool load_row(std::int64_t i, KernelContext& ctx) {
    const std::int64_t k = idx[static_cast<std::size_t>(i)];
    if (k == padding) return false;
    if (k < 0 || k >= rows) {
      set_index_fault(ctx, kOp, k, rows, "weight's rows");
      return false;
    }
    const Shape row_shape{d};
    const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(weight.dtype);
    load_f64(TensorView{weight.data + static_cast<std::size_t>(k) * row_bytes, weight.dtype, &row_shape, d},
             row.data());
    return true;
  }
};

// Sum (or mean) of bag [begin, end) into `out`; returns the bag's size.
std::int64_t sum_bag(BagReader& r, std::int64_t begin, std::int64_t end, bool mean, double* out, KernelContext& ctx) {
  std::int64_t size = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    if (!r.load_row(i, ctx)) continue;
    const double scale = r.psw.empty() ? 1.0 : r.psw[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < r.d; ++j) out[j] += scale * r.row[static_cast<std::size_t>(j)];
    ++size;
  }
  if (mean && size > 0) {
    for (std::int64_t j = 0; j < r.d; ++j) out[j] /= static_cast<double>(size);
  }
  return size;
}

// Note [Embedding bag max]: the bag's largest row elements and their rows; returns the bag's size.
std::int64_t max_bag(BagReader& r, std::int64_t begin, std::int64_t end, double* out, std::int64_t* argmax,
                     KernelContext& ctx) {
  std::int64_t size = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    if (!r.load_row(i, ctx)) continue;
    for (std::int64_t j = 0; j < r.d; ++j) {
      const double v = r.row[static_cast<std::size_t>(j)];
      if (size == 0 || v > out[j]) {
        out[j] = v;
        argmax[j] = r.idx[static_cast<std::size_t>(i)];
      }
    }
    ++size;
  }
  return size;
}

void embedding_bag_kernel(KernelContext& ctx) {
  const TensorView& weight = ctx.inputs[0];
  const std::int64_t d = weight.shape->at(1), n = ctx.inputs[1].numel;
  BagReader r{weight, weight.shape->at(0), d, ctx.attrs.get_int("padding_idx", -1), {}, {}, {}};
  r.idx.resize(static_cast<std::size_t>(n));
  r.row.resize(static_cast<std::size_t>(d));
  load_i64(ctx.inputs[1], r.idx.data());
  if (ctx.inputs.size() > 3 && ctx.inputs[3].data != nullptr) {
    r.psw.resize(static_cast<std::size_t>(n));
    load_f64(ctx.inputs[3], r.psw.data());
  }
  std::vector<std::int64_t> off(static_cast<std::size_t>(ctx.inputs[2].numel));
  load_i64(ctx.inputs[2], off.data());
  const std::int64_t bags = ctx.outputs[0].shape->at(0), mode = ctx.attrs.get_int("mode", 0);
  std::vector<double> out(static_cast<std::size_t>(bags * d), 0.0);
  std::vector<std::int64_t> offset2bag(static_cast<std::size_t>(n), 0), bag_size(static_cast<std::size_t>(bags), 0);
  std::vector<std::int64_t> argmax(mode == kMax ? out.size() : 0, 0);
  if (!off.empty() && off[0] != 0)
    set_fault(ctx, std::string(kOp) + ": offsets[0] must be 0, got " + std::to_string(off[0]));
  for (std::int64_t b = 0; b < bags; ++b) {
    const std::int64_t begin = off[static_cast<std::size_t>(b)];
    const std::int64_t end = b + 1 < static_cast<std::int64_t>(off.size()) ? off[static_cast<std::size_t>(b + 1)] : n;
    if (begin < 0 || end < begin || end > n) {
      set_fault(ctx, std::string(kOp) + ": bag " + std::to_string(b) + " spans offsets [" + std::to_string(begin) +
                         ", " + std::to_string(end) + "), outside the " + std::to_string(n) + " indices or decreasing");
      continue;
    }
    std::fill(offset2bag.begin() + begin, offset2bag.begin() + end, b);
    bag_size[static_cast<std::size_t>(b)] = mode == kMax
                                                ? max_bag(r, begin, end, out.data() + b * d, argmax.data() + b * d, ctx)
                                                : sum_bag(r, begin, end, mode == kMean, out.data() + b * d, ctx);
  }
  store<double>(ctx.outputs[0], out.data(), ctx);
  store_i64(ctx.outputs[1], offset2bag.data());
  store_i64(ctx.outputs[2], bag_size.data());
  if (mode == kMax) store_i64(ctx.outputs[3], argmax.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 3,
                              .max_inputs = 4,
                              .infer = infer_embedding_bag,
                              .cost = cost_embedding_bag});
// No NPU kernel: an AI CPU task on the device (see the header comment).
NPUSCOPE_REGISTER_KERNEL(kOp, Backend::kCpu, embedding_bag_kernel);

}  // namespace npuscope::emulator::kernels
