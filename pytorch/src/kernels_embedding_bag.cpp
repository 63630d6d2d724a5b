// Native embedding bags (nn.EmbeddingBag, F.embedding_bag) in modes sum, mean and max: _embedding_bag
// and _embedding_bag_forward_only run EmbeddingBag (an AI CPU task, as torch_npu's), whose offset2bag,
// bag_size and (mode max) max_indices are what the backward needs. _embedding_bag_dense_backward is
// aten's own CPU algorithm on the device: in modes sum and mean the output's gradient gathered by
// offset2bag (Gather), scaled by the per-sample weights or divided by the bag sizes (Mul / Div), and
// summed into the weight's rows (EmbeddingDenseGrad); in mode max each element scattered to the row
// that won it (ScatterElements add). _embedding_bag_per_sample_weights_backward (the per-sample
// weights' own gradient) is a row-wise dot of the bags' gradient and the rows (Gather, Mul, ReduceSum).
// Sparse gradients and float64 go to the CPU fallback (Note [Native or fallback]).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

constexpr std::int64_t kSum = 0, kMean = 1, kMax = 2;

using Bags = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

bool native_bag(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, std::int64_t mode,
                const c10::optional<at::Tensor>& per_sample_weights) {
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  return is_float(weight.scalar_type()) && weight.dim() == 2 && indices.dim() == 1 && offsets.dim() == 1 &&
         index_dtype(indices.scalar_type()) && index_dtype(offsets.scalar_type()) && mode >= kSum && mode <= kMax &&
         (!weighted || (mode == kSum && per_sample_weights->scalar_type() == weight.scalar_type()));
}

Bags run_embedding_bag(const char* aten, const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                       std::int64_t mode, const c10::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                       std::int64_t padding_idx) {
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  check_same_device(aten, weight, {indices, offsets, weighted ? *per_sample_weights : at::Tensor()});
  TORCH_CHECK(!include_last_offset || offsets.numel() >= 1, aten,
              ": include_last_offset: number of offsets should be at least 1");
  const std::int64_t bags = offsets.numel() - (include_last_offset ? 1 : 0);
  at::Tensor out = at::empty({bags, weight.size(1)}, weight.options());
  at::Tensor offset2bag = at::empty({indices.numel()}, indices.options().dtype(at::kLong));
  at::Tensor bag_size = at::empty({bags}, indices.options().dtype(at::kLong));
  const bool max = mode == kMax;
  at::Tensor max_indices = at::empty({max ? bags : 0, max ? weight.size(1) : 0}, indices.options().dtype(at::kLong));
  std::vector<at::Tensor> outputs{out, offset2bag, bag_size};
  if (max) outputs.push_back(max_indices);
  run_op("EmbeddingBag", aten,
         {contiguous(weight, aten), contiguous(indices, aten), contiguous(offsets, aten),
          weighted ? contiguous(*per_sample_weights, aten) : at::Tensor()},
         {{"mode", mode}, {"include_last_offset", std::int64_t{include_last_offset}}, {"padding_idx", padding_idx}},
         outputs);
  return {out, offset2bag, bag_size, max_indices};
}

// _embedding_bag and _embedding_bag_forward_only (the same kernel, which autograd does not record):
// `Fallback` is the at::_ops type of the one called.
template <class Fallback>
Bags embedding_bag_or_fallback(const char* aten, const at::Tensor& weight, const at::Tensor& indices,
                               const at::Tensor& offsets, bool scale_grad_by_freq, std::int64_t mode, bool sparse,
                               const c10::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                               std::int64_t padding_idx) {
  if (!native_bag(weight, indices, offsets, mode, per_sample_weights))
    return at::native::call_fallback_fn<&cpu_fallback_boxed, Fallback>::call(
        weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
        padding_idx);
  return run_embedding_bag(aten, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx);
}

Bags embedding_bag_kernel(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                          bool scale_grad_by_freq, std::int64_t mode, bool sparse,
                          const c10::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                          std::int64_t padding_idx) {
  return embedding_bag_or_fallback<at::_ops::_embedding_bag>("aten::_embedding_bag", weight, indices, offsets,
                                                             scale_grad_by_freq, mode, sparse, per_sample_weights,
                                                             include_last_offset, padding_idx);
}

Bags embedding_bag_forward_only_kernel(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                                       bool scale_grad_by_freq, std::int64_t mode, bool sparse,
                                       const c10::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                                       std::int64_t padding_idx) {
  return embedding_bag_or_fallback<at::_ops::_embedding_bag_forward_only>(
      "aten::_embedding_bag_forward_only", weight, indices, offsets, scale_grad_by_freq, mode, sparse,
      per_sample_weights, include_last_offset, padding_idx);
}

// aten's _embedding_bag_dense_backward_cpu_max: element j of a bag's gradient goes to row
// max_indices[bag][j]; a bag with no index (bag_size 0: empty or all padding, its max_indices 0)
// gives nothing. scale_grad_by_freq does not apply, as in aten.
at::Tensor max_dense_backward(const at::Tensor& grad, const at::Tensor& bag_size, const at::Tensor& max_indices,
                              std::int64_t num_weights) {
  const at::Tensor kept = at::where(bag_size.ne(0).unsqueeze(1), grad, at::zeros({}, grad.options()));
  return at::zeros({num_weights, grad.size(1)}, grad.options()).scatter_add_(0, max_indices.to(at::kLong), kept);
}

// aten's _embedding_bag_dense_backward_cpu_sum_mean: row i of the bags' gradient is the gradient of its
// bag, scaled; the rows are then summed per weight row as embedding's backward sums them.
at::Tensor sum_mean_dense_backward(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& offset2bag,
                                   const at::Tensor& bag_size, std::int64_t num_weights, bool scale_grad_by_freq,
                                   std::int64_t mode, const c10::optional<at::Tensor>& per_sample_weights,
                                   std::int64_t padding_idx) {
  at::Tensor rows = grad.index_select(0, offset2bag);
  if (per_sample_weights.has_value() && per_sample_weights->defined()) rows = rows * per_sample_weights->unsqueeze(1);
  if (mode == kMean) rows = rows / bag_size.to(grad.scalar_type()).index_select(0, offset2bag).unsqueeze(1);
  return at::embedding_dense_backward(rows, indices, num_weights, padding_idx, scale_grad_by_freq);
}

at::Tensor embedding_bag_dense_backward_kernel(const at::Tensor& grad, const at::Tensor& indices,
                                               const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                               const at::Tensor& maximum_indices, std::int64_t num_weights,
                                               bool scale_grad_by_freq, std::int64_t mode,
                                               const c10::optional<at::Tensor>& per_sample_weights,
                                               std::int64_t padding_idx) {
  const bool native_max = mode == kMax && maximum_indices.defined() && index_dtype(maximum_indices.scalar_type()) &&
                          maximum_indices.sizes() == grad.sizes() && bag_size.numel() == grad.size(0);
  const bool native_sum_mean = (mode == kSum || mode == kMean) && offset2bag.numel() == indices.numel();
  if (!is_float(grad.scalar_type()) || grad.dim() != 2 || !index_dtype(indices.scalar_type()) ||
      !(native_max || native_sum_mean))
    return NPUSCOPE_FALLBACK(_embedding_bag_dense_backward, grad, indices, offset2bag, bag_size, maximum_indices,
                             num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx);
  if (native_max) return max_dense_backward(grad, bag_size, maximum_indices, num_weights);
  return sum_mean_dense_backward(grad, indices, offset2bag, bag_size, num_weights, scale_grad_by_freq, mode,
                                 per_sample_weights, padding_idx);
}

// aten's _embedding_bag_per_sample_weights_backward_cpu (mode sum only; aten raises otherwise):
// sample i's gradient is grad[offset2bag[i]] . weight[indices[i]], 0 where indices[i] is padding_idx.
at::Tensor per_sample_weights_backward_kernel(const at::Tensor& grad, const at::Tensor& weight,
                                              const at::Tensor& indices, const at::Tensor& offsets,
                                              const at::Tensor& offset2bag, std::int64_t mode,
                                              std::int64_t padding_idx) {
  constexpr const char* kAten = "aten::_embedding_bag_per_sample_weights_backward";
  if (mode != kSum || !is_float(grad.scalar_type()) || grad.dim() != 2 || weight.dim() != 2 ||
      weight.scalar_type() != grad.scalar_type() || indices.dim() != 1 || !index_dtype(indices.scalar_type()) ||
      !index_dtype(offset2bag.scalar_type()) || offset2bag.numel() != indices.numel())
    return NPUSCOPE_FALLBACK(_embedding_bag_per_sample_weights_backward, grad, weight, indices, offsets, offset2bag,
                             mode, padding_idx);
  check_same_device(kAten, grad, {weight, indices, offset2bag});
  if (indices.numel() == 0) return at::zeros({0}, grad.options());
  const at::Tensor dots = (grad.index_select(0, offset2bag) * weight.index_select(0, indices)).sum(1);
  if (padding_idx < 0) return dots;
  return at::where(indices.eq(padding_idx), at::zeros({}, grad.options()), dots);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag", TORCH_FN(embedding_bag_kernel));
  m.impl("_embedding_bag_forward_only", TORCH_FN(embedding_bag_forward_only_kernel));
  m.impl("_embedding_bag_dense_backward", TORCH_FN(embedding_bag_dense_backward_kernel));
  m.impl("_embedding_bag_per_sample_weights_backward", TORCH_FN(per_sample_weights_backward_kernel));
}

}  // namespace npuscope::pytorch
