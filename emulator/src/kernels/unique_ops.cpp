// Unique with ONNX semantics: the unique values (no 'axis': of the flattened input) or unique slices
// along 'axis', sorted ascending ('sorted' 1, the default) or in order of first occurrence:
//   Unique (x; 'axis'?, 'sorted', 'count') -> (y, indices [count], inverse_indices [n], counts [count])
// y is x's values (1-D [count]) or slices (x's shape with dim 'axis' = count); indices are the first
// occurrences, inverse_indices map each input value or slice to its row of y. 'count', the number of
// unique values or slices, depends on the values: the caller reads them first and passes it (the
// ONNX adapter does), as for NonZero. Only a CPU kernel: on the NPU it runs as an AI CPU task, as
// Ascend's Unique does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "kernel_util.h"
#include "movement_util.h"
#include "unique_util.h"

namespace npuscope::emulator::kernels {

UniqueGroups unique_groups(const std::vector<double>& v, std::int64_t outer, std::int64_t n, std::int64_t inner,
                           bool sorted) {
  auto at = [&](std::int64_t k, std::int64_t j) {  // element j of slice k, j in (o, i) order
    return v[static_cast<std::size_t>(((j / inner) * n + k) * inner + j % inner)];
  };
  const std::int64_t len = outer * inner;
  // A total order (NaNs equal to each other, after every number, as numpy.unique's): the sort
  // needs one, and a NaN in the input is user data.
  auto less = [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t j = 0; j < len; ++j) {
      const double va = at(a, j), vb = at(b, j);
      const bool na = std::isnan(va), nb = std::isnan(vb);
      if (na || nb) {
        if (na != nb) return nb;
        continue;
      }
      if (va != vb) return va < vb;
    }
    return false;
  };
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);  // equal slices keep index order: first comes first
  UniqueGroups g;
  g.inverse.assign(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> group_of(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < order.size(); ++r) {
    if (r == 0 || less(order[r - 1], order[r])) {
      g.first.push_back(order[r]);
      g.counts.push_back(0);
    }
    group_of[static_cast<std::size_t>(order[r])] = static_cast<std::int64_t>(g.first.size()) - 1;
    ++g.counts.back();
  }
  std::vector<std::int64_t> rank(g.first.size());  // group -> output position
  std::iota(rank.begin(), rank.end(), 0);
  if (!sorted) {
    std::vector<std::int64_t> by_first(g.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](auto a, auto b) { return g.first[a] < g.first[b]; });
    std::vector<std::int64_t> first, counts;
    for (std::size_t p = 0; p < by_first.size(); ++p) {
      rank[static_cast<std::size_t>(by_first[p])] = static_cast<std::int64_t>(p);
      first.push_back(g.first[by_first[p]]);
      counts.push_back(g.counts[by_first[p]]);
    }
    g.first = std::move(first);
    g.counts = std::move(counts);
  }
  for (std::int64_t k = 0; k < n; ++k) g.inverse[k] = rank[group_of[k]];
  return g;
}

namespace {

constexpr char kUnique[] = "Unique";

// (outer, n, inner) of x for the op's 'axis' (absent: the flattened values).
AxisLoop unique_loop(const Shape& x, const Attrs& attrs) {
  if (!attrs.has("axis")) return {1, shape_numel(x), 1};
  const std::int64_t axis = normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(x.size()), kUnique);
  return axis_loop(x, axis);
}

std::vector<TensorMeta> infer_unique(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("count")) {
    fail(kUnique,
         "needs the 'count' attribute (the number of unique values, read on the host first: the output "
         "shapes depend on the values)");
  }
  const AxisLoop l = unique_loop(in[0].shape, attrs);
  const std::int64_t count = attrs.get_int("count", 0);
  if (count < 0 || count > l.dim || (count == 0 && l.dim > 0)) {
    fail(kUnique, "count " + std::to_string(count) + " does not fit " + std::to_string(l.dim) + " values or slices");
  }
  Shape y{count};
  if (attrs.has("axis")) {
    y = in[0].shape;
    y[static_cast<std::size_t>(
        normalize_axis(attrs.get_int("axis", 0), static_cast<std::int64_t>(y.size()), kUnique))] = count;
  }
  return {{y, in[0].dtype}, {{count}, DType::kI64}, {{l.dim}, DType::kI64}, {{count}, DType::kI64}};
}

KernelCost cost_unique(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = vector_cost(in, out, 0);
  const double n = static_cast<double>(std::max<std::int64_t>(in[0].numel(), 2));
  c.flops = n * std::log2(n);  // the sort's comparisons
  return c;
}

// The values are compared as doubles; y copies the input's bytes, so every dtype keeps its values.
void unique_kernel(KernelContext& ctx) {
  const TensorView& x = ctx.inputs[0];
  const AxisLoop l = unique_loop(*x.shape, ctx.attrs);
  std::vector<double> v(static_cast<std::size_t>(x.numel));
  load_f64(x, v.data());
  const UniqueGroups g = unique_groups(v, l.outer, l.dim, l.inner, ctx.attrs.get_int("sorted", 1) != 0);
  const auto count = static_cast<std::int64_t>(g.first.size());
  if (count != (*ctx.outputs[1].shape)[0]) [[unlikely]] {
    set_fault(ctx, "Unique: the input holds " + std::to_string(count) + " unique values or slices, but 'count' is " +
                       std::to_string((*ctx.outputs[1].shape)[0]));
    return;
  }
  const std::size_t es = dtype_size(x.dtype), row = static_cast<std::size_t>(l.inner) * es;
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t u = 0; u < count; ++u) {
      std::memcpy(ctx.outputs[0].data + static_cast<std::size_t>(o * count + u) * row,
                  x.data + static_cast<std::size_t>(o * l.dim + g.first[u]) * row, row);
    }
  }
  store_i64(ctx.outputs[1], g.first.data());
  store_i64(ctx.outputs[2], g.inverse.data());
  store_i64(ctx.outputs[3], g.counts.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kUnique,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_unique,
                              .cost = cost_unique});
NPUSCOPE_REGISTER_KERNEL(kUnique, Backend::kCpu, unique_kernel);

}  // namespace npuscope::emulator::kernels
