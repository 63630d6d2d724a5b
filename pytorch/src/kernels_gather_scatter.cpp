// Native gathers and scatters: torch.gather (GatherElements), Tensor.scatter_ / scatter_add_
// (ScatterElements, reduction none / add / mul; gather's backward is a scatter_add), and advanced
// indexing with integer index tensors, x[idx], x[:, idx], x[i, j] and their assignments with or without
// accumulation (index_put_, which is also index's backward): Gather / GatherND, ScatterElements /
// ScatterND. Boolean masks (x[mask], x[mask] = v, masked_select, masked_scatter_) become the integer
// indices of nonzero(), as PyTorch's own indexing turns them. Indices that are not all leading
// (x[i, :, j]) and 0-d data go to the CPU fallback (Note [Native or fallback]).
//
// Note [Data-dependent shapes]
// nonzero's output has as many rows as the input has non-zero elements, which only the values say.
// torch_npu's nonzero is an AI CPU op whose output shape comes back to the host before the next
// launch; here the host reads the mask (a device-to-host copy, which waits for the tasks that write
// it), counts, and launches the emulator's NonZero with that count ([rank, n], ONNX's layout) and a
// transpose into PyTorch's [n, rank]. Every boolean-mask op pays that one wait, as on the NPU.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

bool native_data(const at::Tensor& self) { return self.dim() > 0 && to_emulator_dtype(self.scalar_type()).has_value(); }

// ---- gather, scatter ------------------------------------------------------------------------------

at::Tensor& gather_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, bool sparse_grad,
                       at::Tensor& out) {
  constexpr const char* kAten = "aten::gather";
  if (!native_data(self) || !index_dtype(index.scalar_type()) || index.dim() != self.dim())
    return NPUSCOPE_FALLBACK(gather_out, self, dim, index, sparse_grad, out);
  check_same_device(kAten, out, {self, index});
  resize_out(out, index.sizes());
  if (out.numel() == 0) return out;
  OutputSlot slot(out, kAten);
  run_op("GatherElements", kAten, {operand(self, out.scalar_type(), kAten), contiguous(index, kAten)},
         {{"axis", c10::maybe_wrap_dim(dim, self.dim())}}, {slot.tensor()});
  slot.finish();
  return out;
}

// out = self with src's values (the part of src that index covers) scattered along dim by `reduction`.
void scatter_into(const char* aten, const at::Tensor& self, std::int64_t dim, const at::Tensor& index,
                  const at::Tensor& src, const char* reduction, const at::Tensor& out) {
  check_same_device(aten, out, {self, index, src});
  resize_out(out, self.sizes());
  if (out.numel() == 0) return;
  const at::Tensor data = operand(self, out.scalar_type(), aten);
  if (index.numel() == 0) {
    if (!out.is_same(self)) copy_into(out, data, aten);
    return;
  }
  const at::Tensor part =
      src.sizes().equals(index.sizes()) ? src : src.as_strided(index.sizes(), src.strides(), src.storage_offset());
  OutputSlot slot(out, aten);
  run_op("ScatterElements", aten, {data, contiguous(index, aten), operand(part, out.scalar_type(), aten)},
         {{"axis", c10::maybe_wrap_dim(dim, self.dim())}, {"reduction", std::string(reduction)}}, {slot.tensor()});
  slot.finish();
}

bool native_scatter(const at::Tensor& self, const at::Tensor& index, const at::Tensor& src) {
  return native_data(self) && index_dtype(index.scalar_type()) && index.dim() == self.dim() && src.dim() == index.dim();
}

at::Tensor& scatter_src_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            at::Tensor& out) {
  if (!native_scatter(self, index, src)) return NPUSCOPE_FALLBACK(scatter_src_out, self, dim, index, src, out);
  scatter_into("aten::scatter", self, dim, index, src, "none", out);
  return out;
}

at::Tensor& scatter_value_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index,
                              const at::Scalar& value, at::Tensor& out) {
  if (!native_data(self) || !index_dtype(index.scalar_type()) || index.dim() != self.dim())
    return NPUSCOPE_FALLBACK(scatter_value_out, self, dim, index, value, out);
  scatter_into("aten::scatter", self, dim, index, at::full(index.sizes(), value, self.options()), "none", out);
  return out;
}

at::Tensor& scatter_reduce_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, at::Tensor& out) {
  const bool add = reduce == "add", mul = reduce == "multiply";
  if (!native_scatter(self, index, src) || !(add || mul))
    return NPUSCOPE_FALLBACK(scatter_reduce_out, self, dim, index, src, reduce, out);
  scatter_into("aten::scatter", self, dim, index, src, add ? "add" : "mul", out);
  return out;
}

at::Tensor& scatter_add_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            at::Tensor& out) {
  if (!native_scatter(self, index, src)) return NPUSCOPE_FALLBACK(scatter_add_out, self, dim, index, src, out);
  scatter_into("aten::scatter_add", self, dim, index, src, "add", out);
  return out;
}

// ---- nonzero, masks --------------------------------------------------------------------------------

bool is_mask(const at::Tensor& t) { return t.scalar_type() == at::kBool || t.scalar_type() == at::kByte; }

// torch.nonzero: [n, rank] int64 coordinates of the non-zero elements, in row-major order (Note
// [Data-dependent shapes]).
at::Tensor& nonzero_on_device_out(const at::Tensor& self, at::Tensor& out) {
  constexpr const char* kAten = "aten::nonzero";
  if (!native_data(self) || out.scalar_type() != at::kLong) return NPUSCOPE_FALLBACK(nonzero_out, self, out);
  const std::int64_t count = self.to(at::kCPU).count_nonzero().item<std::int64_t>();
  resize_out(out, {count, self.dim()});
  if (count == 0) return out;
  at::Tensor coordinates = at::empty({self.dim(), count}, self.options().dtype(at::kLong));
  run_op("NonZero", kAten, {contiguous(self, kAten)}, {{"count", count}}, {coordinates});
  OutputSlot slot(out, kAten);
  run_op("Transpose", kAten, {coordinates}, {{"perm", std::vector<std::int64_t>{1, 0}}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor nonzero_on_device(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_on_device_out(self, out);
}

// The integer index tensors a boolean (or uint8) mask over dims [d, d + mask.dim()) stands for, one per dim.
std::vector<at::Tensor> mask_indices(const at::Tensor& mask) { return nonzero_on_device(mask).unbind(1); }

// ---- advanced indexing ----------------------------------------------------------------------------

// The integer index tensors of x[...] in one of the two forms that run natively: one index tensor at
// dim `first` (x[idx], x[:, idx]), or `count` tensors at dims 0 .. count - 1 (x[i, j]), broadcast to one
// shape. Empty `tensors` when the form is another (a mask, gaps between the indexed dims).
struct IndexPlan {
  std::vector<at::Tensor> tensors;
  std::int64_t first = 0;
};

IndexPlan plan_indices(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices) {
  IndexPlan plan;
  std::int64_t last = -1, dim = 0;  // `dim`: the dim of self the next index stands at
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const c10::optional<at::Tensor> index = indices.get(i);
    if (!index.has_value() || !index->defined()) {
      ++dim;
      continue;
    }
    // A host index (x[torch.arange(n)]) is copied to the device, as CUDA's indexing does.
    const at::Tensor on_device = index->device() == self.device() ? *index : index->to(self.device());
    std::vector<at::Tensor> parts;
    if (is_mask(*index)) {
      TORCH_CHECK_INDEX(dim + index->dim() <= self.dim(), "too many indices for tensor of dimension ", self.dim(),
                        ": the mask of shape ", index->sizes(), " does not fit the indexed tensor of shape ",
                        self.sizes());
      for (std::int64_t k = 0; k < index->dim(); ++k) {
        TORCH_CHECK_INDEX(index->size(k) == self.size(dim + k), "The shape of the mask ", index->sizes(), " at index ",
                          k, " does not match the shape of the indexed tensor ", self.sizes(), " at index ", dim + k);
      }
      if (index->dim() == 0) return {};  // x[True]: a new dim, not an index
      parts = mask_indices(on_device);
    } else if (index_dtype(index->scalar_type())) {
      parts = {on_device};
    } else {
      return {};
    }
    for (at::Tensor& part : parts) {
      if (plan.tensors.empty()) plan.first = dim;
      if (last >= 0 && dim != last + 1) return {};
      last = dim++;
      plan.tensors.push_back(std::move(part));
    }
  }
  if (plan.tensors.size() > 1 && plan.first != 0) return {};  // PyTorch moves those dims to the front
  if (plan.tensors.size() > 1) plan.tensors = at::broadcast_tensors(plan.tensors);
  return plan;
}

// [B..., k] int64: the k broadcast index tensors side by side (GatherND's and ScatterND's indices).
at::Tensor stacked_indices(const IndexPlan& plan, const char* aten) {
  std::vector<at::Tensor> parts;
  for (const at::Tensor& t : plan.tensors) parts.push_back(operand(t, at::kLong, aten).unsqueeze(-1));
  return contiguous(at::cat(parts, -1), aten);
}

// The shape of x[plan]: the indexed dims replaced by the index shape.
std::vector<std::int64_t> indexed_shape(const at::Tensor& self, const IndexPlan& plan) {
  const auto first = static_cast<std::size_t>(plan.first), k = plan.tensors.size();
  std::vector<std::int64_t> shape(self.sizes().begin(), self.sizes().begin() + static_cast<std::ptrdiff_t>(first));
  for (std::int64_t s : plan.tensors[0].sizes()) shape.push_back(s);
  shape.insert(shape.end(), self.sizes().begin() + static_cast<std::ptrdiff_t>(first + k), self.sizes().end());
  return shape;
}

at::Tensor index(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices) {
  constexpr const char* kAten = "aten::index";
  const IndexPlan plan = native_data(self) ? plan_indices(self, indices) : IndexPlan{};
  if (plan.tensors.empty()) return NPUSCOPE_FALLBACK(index_Tensor, self, indices);
  const std::vector<std::int64_t> shape = indexed_shape(self, plan);
  at::Tensor out = at::empty(shape, self.options());
  if (out.numel() == 0) return out;
  const at::Tensor data = operand(self, self.scalar_type(), kAten);
  if (plan.tensors.size() == 1) {
    const at::Tensor flat = contiguous(plan.tensors[0].reshape({-1}), kAten);
    std::vector<std::int64_t> gathered(self.sizes().begin(), self.sizes().end());
    gathered[static_cast<std::size_t>(plan.first)] = flat.numel();
    run_op("Gather", kAten, {data, flat}, {{"axis", plan.first}}, {out.view(gathered)});
  } else {
    run_op("GatherND", kAten, {data, stacked_indices(plan, kAten)}, {}, {out});
  }
  return out;
}

// self[plan] = values (accumulate: +=), in place.
at::Tensor& index_put_impl(at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices,
                           const at::Tensor& values, bool accumulate, bool unsafe) {
  constexpr const char* kAten = "aten::index_put_";
  const IndexPlan plan =
      native_data(self) && values.device() == self.device() ? plan_indices(self, indices) : IndexPlan{};
  if (plan.tensors.empty()) return NPUSCOPE_FALLBACK(_index_put_impl_, self, indices, values, accumulate, unsafe);
  const std::vector<std::int64_t> shape = indexed_shape(self, plan);
  std::int64_t updates = 1;
  for (std::int64_t s : shape) updates *= s;
  if (updates == 0) return self;
  const at::Tensor data = operand(self, self.scalar_type(), kAten);
  const at::Tensor spread = operand(values.expand(shape), self.scalar_type(), kAten);
  const std::string reduction = accumulate ? "add" : "none";
  OutputSlot slot(self, kAten);
  if (plan.tensors.size() == 1) {
    // ScatterElements: the index of every update, along dim `first` (the index spread over the other dims).
    const at::Tensor flat = plan.tensors[0].reshape({-1});
    std::vector<std::int64_t> along(self.sizes().begin(), self.sizes().end()), view(self.dim(), 1);
    along[static_cast<std::size_t>(plan.first)] = flat.numel();
    view[static_cast<std::size_t>(plan.first)] = flat.numel();
    const at::Tensor spread_index = contiguous(operand(flat, at::kLong, kAten).view(view).expand(along), kAten);
    run_op("ScatterElements", kAten, {data, spread_index, spread.view(along)},
           {{"axis", plan.first}, {"reduction", reduction}}, {slot.tensor()});
  } else {
    run_op("ScatterND", kAten, {data, stacked_indices(plan, kAten), spread}, {{"reduction", reduction}},
           {slot.tensor()});
  }
  slot.finish();
  return self;
}

// torch.masked_select: the elements of self where the mask (both broadcast) is set, as a 1-D tensor.
at::Tensor& masked_select_on_device_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  constexpr const char* kAten = "aten::masked_select";
  TORCH_CHECK(is_mask(mask), kAten, ": expected a bool mask, got ", mask.scalar_type());
  if (!to_emulator_dtype(self.scalar_type()) || mask.device() != self.device() ||
      out.scalar_type() != self.scalar_type())
    return NPUSCOPE_FALLBACK(masked_select_out, self, mask, out);
  const std::vector<at::Tensor> both = at::broadcast_tensors({self, mask});
  const std::vector<at::Tensor> at_index = mask_indices(contiguous(both[1], kAten).reshape({-1}));
  resize_out(out, {at_index[0].numel()});
  if (out.numel() == 0) return out;
  OutputSlot slot(out, kAten);
  run_op("Gather", kAten, {contiguous(both[0], kAten).reshape({-1}), contiguous(at_index[0], kAten)},
         {{"axis", std::int64_t{0}}}, {slot.tensor()});
  slot.finish();
  return out;
}

at::Tensor masked_select_on_device(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = at::empty({0}, self.options());
  return masked_select_on_device_out(self, mask, out);
}

// Tensor.masked_scatter_: self's elements where the mask (broadcast to self) is set take source's
// first elements, in order (masked_select's backward).
at::Tensor& masked_scatter_on_device_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  constexpr const char* kAten = "aten::masked_scatter_";
  TORCH_CHECK(is_mask(mask), kAten, ": expected a bool mask, got ", mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), kAten,
              ": expected self and source to have the same dtype, got ", self.scalar_type(), " and ",
              source.scalar_type());
  if (!native_data(self) || mask.device() != self.device() || source.device() != self.device())
    return NPUSCOPE_FALLBACK(masked_scatter_, self, mask, source);
  const at::Tensor at_index =
      contiguous(mask_indices(contiguous(mask.expand(self.sizes()), kAten).reshape({-1}))[0], kAten);
  const std::int64_t n = at_index.numel();
  TORCH_CHECK(source.numel() >= n, kAten, ": the mask sets ", n, " elements but source has only ", source.numel());
  if (n == 0) return self;
  at::Tensor flat = contiguous(self, kAten).reshape({-1});
  const at::Tensor values = operand(source.reshape({-1}).slice(0, 0, n), self.scalar_type(), kAten);
  run_op("ScatterElements", kAten, {flat, at_index, values},
         {{"axis", std::int64_t{0}}, {"reduction", std::string("none")}}, {flat});
  if (!self.is_contiguous()) copy_into(self, flat.view(self.sizes()), kAten);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", TORCH_FN(nonzero_on_device));
  m.impl("nonzero.out", TORCH_FN(nonzero_on_device_out));
  m.impl("masked_select", TORCH_FN(masked_select_on_device));
  m.impl("masked_select.out", TORCH_FN(masked_select_on_device_out));
  m.impl("masked_scatter_", TORCH_FN(masked_scatter_on_device_));
  m.impl("gather.out", TORCH_FN(gather_out));
  m.impl("scatter.src_out", TORCH_FN(scatter_src_out));
  m.impl("scatter.value_out", TORCH_FN(scatter_value_out));
  m.impl("scatter.reduce_out", TORCH_FN(scatter_reduce_out));
  m.impl("scatter_add.out", TORCH_FN(scatter_add_out));
  m.impl("index.Tensor", TORCH_FN(index));
  m.impl("_index_put_impl_", TORCH_FN(index_put_impl));
}

}  // namespace npuscope::pytorch
