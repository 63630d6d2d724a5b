// EmbeddingBag: PyTorch 1.13's CPU _embedding_bag for modes sum and mean (nn.EmbeddingBag,
// F.embedding_bag). An AI CPU op on Ascend, as torch_npu's EmbeddingBag: it has only the CPU kernel,
// which the dispatcher runs as an AI CPU task on the NPU (the fallback rule of op_registry.h).
//   (weight [V, D] float, indices [n] int32/int64, offsets [B] (or [B + 1] with include_last_offset)
//    int32/int64, per_sample_weights [n] (optional, mode sum only); mode 0 sum | 1 mean,
//    include_last_offset 0 | 1, padding_idx (-1: none))
//   -> output [B, D] in weight's dtype, offset2bag [n] int64 (the bag of each index), bag_size [B]
//      int64 (the bag's indices that are not padding_idx)
// Bag b holds indices[offsets[b] .. offsets[b + 1]) (the last bag runs to n, or to offsets[B] with
// include_last_offset). Its row is the sum of weight[k] (times its per-sample weight) over those k
// that are not padding_idx; mean divides by their count; an empty bag is zeros. The backward is
// PyTorch's own: gather the output's gradient by offset2bag, scale it, and EmbeddingDenseGrad.
// Offsets that do not start at 0, decrease or pass n, and indices outside [0, V), are bad data: a
// kernel fault (Note [Kernel faults]) and zeros for what they touch.
#include <string>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "EmbeddingBag";

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
  if (mode != 0 && mode != 1) fail(kOp, "mode must be 0 (sum) or 1 (mean), got " + std::to_string(mode));
  if (in.size() > 3 && in[3].present) {
    if (mode != 0) fail(kOp, "per_sample_weights are only supported with mode 0 (sum)");
    if (in[3].shape != idx || in[3].dtype != in[0].dtype) {
      fail(kOp, "per_sample_weights must be like indices " + shape_str(idx) + " in weight's dtype, got " +
                    shape_str(in[3].shape) + ' ' + std::string(dtype_name(in[3].dtype)));
    }
  }
  const std::int64_t bags = bag_count(in[2], attrs);
  if (bags < 0) fail(kOp, "include_last_offset needs at least one offset");
  return {{{bags, w[1]}, in[0].dtype}, {idx, DType::kI64}, {{bags}, DType::kI64}};
}

KernelCost cost_embedding_bag(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  c.bytes = static_cast<double>(in[1].numel() * in[0].shape[1]) * dtype_size(in[0].dtype) +  // the rows read
            static_cast<double>(out[0].numel()) * dtype_size(out[0].dtype);
  c.flops = static_cast<double>(in[1].numel() * in[0].shape[1]);  // one add per element of a gathered row
  return c;
}

void embedding_bag_kernel(KernelContext& ctx) {
  const TensorView& weight = ctx.inputs[0];
  const std::int64_t rows = weight.shape->at(0), d = weight.shape->at(1), n = ctx.inputs[1].numel;
  const std::int64_t bags = ctx.outputs[0].shape->at(0), padding = ctx.attrs.get_int("padding_idx", -1);
  const bool mean = ctx.attrs.get_int("mode", 0) == 1;
  // Only the rows the bags name are read (a vocabulary can be far larger than a batch's bags).
  const Shape row_shape{d};
  const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(weight.dtype);
  std::vector<double> src(static_cast<std::size_t>(d)), psw;
  const bool weighted = ctx.inputs.size() > 3 && ctx.inputs[3].data != nullptr;
  if (weighted) {
    psw.resize(static_cast<std::size_t>(n));
    load_f64(ctx.inputs[3], psw.data());
  }
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n)), off(static_cast<std::size_t>(ctx.inputs[2].numel));
  load_i64(ctx.inputs[1], idx.data());
  load_i64(ctx.inputs[2], off.data());
  std::vector<double> out(static_cast<std::size_t>(bags * d), 0.0);
  std::vector<std::int64_t> offset2bag(static_cast<std::size_t>(n), 0), bag_size(static_cast<std::size_t>(bags), 0);
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
    double* row = out.data() + b * d;
    for (std::int64_t i = begin; i < end; ++i) {
      offset2bag[static_cast<std::size_t>(i)] = b;
      const std::int64_t k = idx[static_cast<std::size_t>(i)];
      if (k == padding) continue;
      if (k < 0 || k >= rows) {
        set_index_fault(ctx, kOp, k, rows, "weight's rows");
        continue;
      }
      const double scale = weighted ? psw[static_cast<std::size_t>(i)] : 1.0;
      load_f64(TensorView{weight.data + static_cast<std::size_t>(k) * row_bytes, weight.dtype, &row_shape, d},
               src.data());
      for (std::int64_t j = 0; j < d; ++j) row[j] += scale * src[static_cast<std::size_t>(j)];
      ++bag_size[static_cast<std::size_t>(b)];
    }
    if (mean && bag_size[static_cast<std::size_t>(b)] > 0) {
      const double count = static_cast<double>(bag_size[static_cast<std::size_t>(b)]);
      for (std::int64_t j = 0; j < d; ++j) row[j] /= count;
    }
  }
  store<double>(ctx.outputs[0], out.data(), ctx);
  store_i64(ctx.outputs[1], offset2bag.data());
  store_i64(ctx.outputs[2], bag_size.data());
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
