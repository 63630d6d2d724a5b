// AsStrided and ViewCopy: how the PyTorch device makes a non-contiguous tensor contiguous and writes
// into a strided view (torch_npu's AsStrided / ViewCopy kernels). Both see a whole storage as a 1-D
// contiguous tensor and a view of it as (size, stride, storage_offset) attributes, in elements:
//   AsStrided (storage)         -> out of `size`: out[i...] = storage[offset + sum(i_k * stride_k)]
//   ViewCopy  (dst_storage, src of `size`) -> dst_storage with those positions written from src, the
//             others unchanged (a fresh output gets input 0's bytes first; the torch side passes
//             dst_storage itself as the output, and then nothing else is touched).
// Data movement: bytes copied by element size, one kernel for both backends. A view reaching outside
// the storage is a kernel fault (Note [Kernel faults]): the output is left zero (AsStrided) or
// unwritten (ViewCopy).
//
// Note [Strided copy loops]
// These run on every transpose().contiguous(), so the view is first simplified: size-1 dims are
// dropped and a dim merged into the next when stride[k] == size[k+1] * stride[k+1]. The innermost
// remaining dim is then one memcpy when its stride is 1, else a typed strided loop; the outer dims
// advance an odometer, with no allocation per element.
#include <algorithm>
#include <cstring>
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kAsStrided[] = "AsStrided", kViewCopy[] = "ViewCopy";

struct View {
  std::vector<std::int64_t> size, stride;
  std::int64_t offset = 0;
};

View read_view(const Attrs& attrs) {
  return {attrs.get_ints("size"), attrs.get_ints("stride"), attrs.get_int("storage_offset", 0)};
}

// Checks the attributes (the storage bound is the kernel's: see the header comment).
Shape check_view(const View& v, const TensorMeta& storage, const char* op) {
  if (storage.shape.size() != 1) fail(op, "the storage must be 1-D, got " + shape_str(storage.shape));
  if (v.size.size() != v.stride.size()) {
    fail(op, "size has " + std::to_string(v.size.size()) + " dims but stride has " + std::to_string(v.stride.size()));
  }
  if (v.offset < 0) fail(op, "storage_offset must be >= 0, got " + std::to_string(v.offset));
  for (std::size_t k = 0; k < v.size.size(); ++k) {
    if (v.size[k] < 0 || v.stride[k] < 0) {
      fail(op, "size and stride must be >= 0, got size " + std::to_string(v.size[k]) + " stride " +
                   std::to_string(v.stride[k]) + " at dim " + std::to_string(k));
    }
  }
  Shape shape(v.size.begin(), v.size.end());
  std::int64_t n = 1, last = v.offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    n = checked_mul(n, shape[k], op, "size");
    if (shape[k] > 0)
      last =
          checked_add(last, checked_mul(shape[k] - 1, v.stride[k], op, "the view's extent"), op, "the view's extent");
  }
  return shape;
}

std::vector<TensorMeta> infer_as_strided(std::span<const TensorMeta> in, const Attrs& attrs) {
  return {{check_view(read_view(attrs), in[0], kAsStrided), in[0].dtype}};
}

std::vector<TensorMeta> infer_view_copy(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape shape = check_view(read_view(attrs), in[0], kViewCopy);
  if (in[1].dtype != in[0].dtype) {
    fail(kViewCopy, "src is " + std::string(dtype_name(in[1].dtype)) + " but dst_storage is " +
                        std::string(dtype_name(in[0].dtype)) + " (same dtype only)");
  }
  if (in[1].numel() != shape_numel(shape)) {
    fail(kViewCopy, "src " + shape_str(in[1].shape) + " does not have the view's " +
                        std::to_string(shape_numel(shape)) + " elements (size " + shape_str(shape) + ")");
  }
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_as_strided(std::span<const TensorMeta>, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(out, out, 0);  // reads as many bytes of the storage as it writes
}
KernelCost cost_view_copy(std::span<const TensorMeta> in, std::span<const TensorMeta>, const Attrs&) {
  return vector_cost({}, in.subspan(1), 0);  // reads src and writes as many bytes of the storage
}

// The view simplified (Note [Strided copy loops]); `empty` when it has no element.
struct Plan {
  std::vector<std::int64_t> size, stride;        // outermost first; at least one dim
  std::int64_t offset = 0, numel = 0, last = 0;  // last: the largest storage index touched
};

Plan plan_of(const View& v) {
  Plan p;
  p.offset = v.offset;
  p.numel = 1;
  for (std::int64_t s : v.size) p.numel *= s;
  if (p.numel == 0) return p;
  for (std::size_t k = 0; k < v.size.size(); ++k) {
    if (v.size[k] == 1) continue;
    if (!p.size.empty() && p.stride.back() == v.size[k] * v.stride[k]) {
      p.size.back() *= v.size[k];
      p.stride.back() = v.stride[k];
    } else {
      p.size.push_back(v.size[k]);
      p.stride.push_back(v.stride[k]);
    }
  }
  if (p.size.empty()) {
    p.size.push_back(1);
    p.stride.push_back(1);
  }
  p.last = p.offset;
  for (std::size_t k = 0; k < p.size.size(); ++k) p.last += (p.size[k] - 1) * p.stride[k];
  return p;
}

// Calls f(storage_index, contiguous_index) for each innermost row of the plan.
template <class F>
void for_each_row(const Plan& p, F&& f) {
  const std::size_t outer = p.size.size() - 1;
  const std::int64_t row = p.size.back(), rows = p.numel / row;
  std::vector<std::int64_t> index(outer, 0);
  std::int64_t at = p.offset;
  for (std::int64_t r = 0; r < rows; ++r) {
    f(at, r * row);
    for (std::size_t d = outer; d-- > 0;) {
      at += p.stride[d];
      if (++index[d] < p.size[d]) break;
      at -= p.stride[d] * p.size[d];
      index[d] = 0;
    }
  }
}

// dst[j * dst_step] = src[j * src_step] for j < n, by element size. memmove when both are
// contiguous (an output may be its own input, see Note [Aliasing outputs]).
template <class E>
void strided_row(const std::byte* src, std::int64_t src_step, std::byte* dst, std::int64_t dst_step, std::int64_t n) {
  const auto* s = reinterpret_cast<const E*>(src);
  auto* d = reinterpret_cast<E*>(dst);
  for (std::int64_t j = 0; j < n; ++j) d[j * dst_step] = s[j * src_step];
}

void copy_row(const std::byte* src, std::int64_t src_step, std::byte* dst, std::int64_t dst_step, std::int64_t n,
              std::size_t esize) {
  if (src_step == 1 && dst_step == 1) {
    std::memmove(dst, src, static_cast<std::size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1: strided_row<std::uint8_t>(src, src_step, dst, dst_step, n); break;
    case 2: strided_row<std::uint16_t>(src, src_step, dst, dst_step, n); break;
    case 4: strided_row<std::uint32_t>(src, src_step, dst, dst_step, n); break;
    default: strided_row<std::uint64_t>(src, src_step, dst, dst_step, n); break;
  }
}

void view_fault(KernelContext& ctx, const char* op, const Plan& p, std::int64_t storage) {
  set_fault(ctx, std::string(op) + ": the view (size " + shape_str(Shape(ctx.attrs.get_ints("size"))) + ", stride " +
                     shape_str(Shape(ctx.attrs.get_ints("stride"))) + ", storage_offset " + std::to_string(p.offset) +
                     ") reaches storage element " + std::to_string(p.last) + " but the storage has " +
                     std::to_string(storage) + " elements");
}

void as_strided_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  const Plan p = plan_of(read_view(ctx.attrs));
  if (p.numel == 0) return;
  const std::size_t esize = dtype_size(x.dtype);
  if (p.last >= x.numel) {
    std::memset(y.data, 0, static_cast<std::size_t>(y.numel) * esize);
    view_fault(ctx, kAsStrided, p, x.numel);
    return;
  }
  const std::int64_t row = p.size.back(), step = p.stride.back();
  for_each_row(p, [&](std::int64_t at, std::int64_t out) {
    copy_row(x.data + at * static_cast<std::int64_t>(esize), step, y.data + out * static_cast<std::int64_t>(esize), 1,
             row, esize);
  });
}

void view_copy_kernel(KernelContext& ctx) {
  const TensorView &storage = ctx.inputs[0], &src = ctx.inputs[1], &y = ctx.outputs[0];
  const std::size_t esize = dtype_size(storage.dtype);
  if (y.data != storage.data && storage.numel > 0) {
    std::memcpy(y.data, storage.data, static_cast<std::size_t>(storage.numel) * esize);
  }
  const Plan p = plan_of(read_view(ctx.attrs));
  if (p.numel == 0) return;
  if (p.last >= storage.numel) {
    view_fault(ctx, kViewCopy, p, storage.numel);
    return;
  }
  const std::int64_t row = p.size.back(), step = p.stride.back();
  for_each_row(p, [&](std::int64_t at, std::int64_t in) {
    copy_row(src.data + in * static_cast<std::int64_t>(esize), 1, y.data + at * static_cast<std::int64_t>(esize), step,
             row, esize);
  });
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kAsStrided,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_as_strided,
                              .cost = cost_as_strided});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kViewCopy,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_view_copy,
                              .cost = cost_view_copy});

NPUSCOPE_REGISTER_KERNEL(kAsStrided, Backend::kNpu, as_strided_kernel);
NPUSCOPE_REGISTER_KERNEL(kAsStrided, Backend::kCpu, as_strided_kernel);
NPUSCOPE_REGISTER_KERNEL(kViewCopy, Backend::kNpu, view_copy_kernel);
NPUSCOPE_REGISTER_KERNEL(kViewCopy, Backend::kCpu, view_copy_kernel);

}  // namespace npuscope::emulator::kernels
