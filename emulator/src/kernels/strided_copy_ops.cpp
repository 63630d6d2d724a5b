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
// remaining dim is then one memcpy per row when its stride is 1; when it is not (a transpose), it
// is copied in 16 x 16 tiles together with the outer dim of stride 1, so that both sides move
// whole cache lines (a row-by-row strided gather of a 2048² f32 transpose took 4.8x PyTorch's CPU
// copy; see bench/training_ops_bench.cpp); otherwise a typed strided loop. The outer dims advance
// an odometer, with no allocation per element.
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

// A copy between the view (strided) and a contiguous tensor of its size: per plan dim, the size and
// the source's and destination's strides, in elements.
struct Walk {
  std::vector<std::int64_t> size, src, dst;
};

// gather (AsStrided): view -> contiguous; else (ViewCopy) contiguous -> view.
Walk walk_of(const Plan& p, bool gather) {
  std::vector<std::int64_t> contiguous(p.size.size());
  std::int64_t step = 1;
  for (std::size_t k = p.size.size(); k-- > 0;) {
    contiguous[k] = step;
    step *= p.size[k];
  }
  return gather ? Walk{p.size, p.stride, contiguous} : Walk{p.size, contiguous, p.stride};
}

// Calls f(src_offset, dst_offset) for every position of the dims `dims` (an odometer).
template <class F>
void for_each_position(const Walk& w, const std::vector<std::size_t>& dims, F&& f) {
  std::int64_t total = 1;
  for (std::size_t k : dims) total *= w.size[k];
  std::vector<std::int64_t> index(dims.size(), 0);
  std::int64_t s = 0, d = 0;
  for (std::int64_t n = 0; n < total; ++n) {
    f(s, d);
    for (std::size_t i = dims.size(); i-- > 0;) {
      const std::size_t k = dims[i];
      s += w.src[k];
      d += w.dst[k];
      if (++index[i] < w.size[k]) break;
      s -= w.src[k] * w.size[k];
      d -= w.dst[k] * w.size[k];
      index[i] = 0;
    }
  }
}

// d[i·di + j·dj] = s[i·si + j·sj] over [ni, nj] in 16 x 16 tiles, so that a transpose reads and
// writes whole cache lines; a full tile walks pointers with its size known at compile time.
template <class E>
void copy_tiled(const E* s, std::int64_t si, std::int64_t sj, E* d, std::int64_t di, std::int64_t dj, std::int64_t ni,
                std::int64_t nj) {
  constexpr std::int64_t kTile = 16;
  for (std::int64_t i0 = 0; i0 < ni; i0 += kTile) {
    const std::int64_t ie = std::min(ni, i0 + kTile);
    for (std::int64_t j0 = 0; j0 < nj; j0 += kTile) {
      const std::int64_t je = std::min(nj, j0 + kTile);
      if (ie - i0 == kTile && je - j0 == kTile) {
        for (std::int64_t i = i0; i < ie; ++i) {
          const E* sp = s + i * si + j0 * sj;
          E* dp = d + i * di + j0 * dj;
          for (std::int64_t j = 0; j < kTile; ++j, sp += sj, dp += dj) *dp = *sp;
        }
        continue;
      }
      for (std::int64_t i = i0; i < ie; ++i) {
        for (std::int64_t j = j0; j < je; ++j) d[i * di + j * dj] = s[i * si + j * sj];
      }
    }
  }
}

// See Note [Strided copy loops]. Rows whose innermost dim is contiguous on both sides are one
// memmove each (an output may be its own input when the view is the whole storage); a transposed
// innermost dim is tiled with the outer dim along which that side is contiguous.
template <class E>
void run_walk(const Walk& w, const std::byte* src, std::byte* dst) {
  const std::size_t last = w.size.size() - 1;
  const std::int64_t n = w.size[last], ss = w.src[last], ds = w.dst[last];
  std::size_t tile = last;
  if (ss != 1 || ds != 1) {
    for (std::size_t k = 0; k < last; ++k) {
      if ((ss != 1 && w.src[k] == 1) || (ds != 1 && w.dst[k] == 1)) tile = k;
    }
  }
  std::vector<std::size_t> dims;
  for (std::size_t k = 0; k < last; ++k) {
    if (k != tile) dims.push_back(k);
  }
  const auto* s = reinterpret_cast<const E*>(src);
  auto* d = reinterpret_cast<E*>(dst);
  if (tile != last) {
    const std::int64_t m = w.size[tile], st = w.src[tile], dt = w.dst[tile];
    for_each_position(w, dims,
                      [&](std::int64_t so, std::int64_t dof) { copy_tiled(s + so, st, ss, d + dof, dt, ds, m, n); });
  } else if (ss == 1 && ds == 1) {
    for_each_position(w, dims, [&](std::int64_t so, std::int64_t dof) {
      std::memmove(d + dof, s + so, static_cast<std::size_t>(n) * sizeof(E));
    });
  } else {
    for_each_position(w, dims, [&](std::int64_t so, std::int64_t dof) {
      for (std::int64_t j = 0; j < n; ++j) d[dof + j * ds] = s[so + j * ss];
    });
  }
}

// Element bytes moved as unsigned integers of their size: every dtype and NaN payload survives.
void run_walk(const Walk& w, const std::byte* src, std::byte* dst, std::size_t esize) {
  switch (esize) {
    case 1: run_walk<std::uint8_t>(w, src, dst); break;
    case 2: run_walk<std::uint16_t>(w, src, dst); break;
    case 4: run_walk<std::uint32_t>(w, src, dst); break;
    default: run_walk<std::uint64_t>(w, src, dst); break;
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
  run_walk(walk_of(p, true), x.data + p.offset * static_cast<std::int64_t>(esize), y.data, esize);
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
  run_walk(walk_of(p, false), src.data, y.data + p.offset * static_cast<std::int64_t>(esize), esize);
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

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kAsStrided, as_strided_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kViewCopy, view_copy_kernel);

}  // namespace npuscope::emulator::kernels
