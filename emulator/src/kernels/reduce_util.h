// The axis handling of the ONNX reductions ('axes', empty = all; 'keepdims'; 'noop_with_empty_axes'),
// shared by the reduction kernel files (reduce_ops.cpp, reduce_ext_ops.cpp).
//
// A reduction is planned as in reduce_ops.cpp: the trailing kept dims form rows of `inner`
// contiguous outputs; output (o, j) reduces x[base[o] + offsets[r] + j] over r.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels::reduction {

// Which dims are reduced; returns what is wrong with 'axes', or "" when fine.
inline std::string reduced_dims(const Shape& x, const Attrs& attrs, std::vector<bool>& reduced) {
  const auto rank = static_cast<std::int64_t>(x.size());
  const auto axes = attrs.get_ints("axes");
  const bool all = axes.empty() && attrs.get_int("noop_with_empty_axes", 0) == 0;
  reduced.assign(x.size(), all);
  for (auto axis : axes) {
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return "axis " + std::to_string(axis) + " is out of range for input " + shape_str(x);
    if (reduced[static_cast<std::size_t>(a)]) return "axis " + std::to_string(axis) + " is listed twice";
    reduced[static_cast<std::size_t>(a)] = true;
  }
  return {};
}

// The output shape of a reduction of `x`; throws InvalidArgument naming `op` for bad axes.
inline Shape reduced_shape(const Shape& x, const Attrs& attrs, const char* op) {
  std::vector<bool> reduced;
  const std::string error = reduced_dims(x, attrs, reduced);
  if (!error.empty()) fail(op, error);
  const bool keep = attrs.get_int("keepdims", 1) != 0;
  Shape out;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(x[d]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  return out;
}

// Row-major offsets of every position over the first `ndims` dims where `mask` is `want`.
inline std::vector<std::int64_t> offsets_over(const Shape& x, const std::vector<bool>& mask, bool want,
                                              std::size_t ndims) {
  const auto strides = strides_of(x);
  std::vector<std::int64_t> sizes, steps;
  for (std::size_t d = 0; d < ndims; ++d) {
    if (mask[d] == want) {
      sizes.push_back(x[d]);
      steps.push_back(strides[d]);
    }
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(shape_numel(sizes)));
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::int64_t off = 0;
  for (auto& o : out) {
    o = off;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      off += steps[d];
      if (++index[d] < sizes[d]) break;
      off -= steps[d] * sizes[d];
      index[d] = 0;
    }
  }
  return out;
}

struct ReducePlan {
  std::vector<std::int64_t> base, offsets;
  std::int64_t inner = 1;
  bool contiguous = false;  // inner == 1 and the reduced values of a row are offsets 0, 1, 2, ...
  std::size_t outputs() const { return base.size() * static_cast<std::size_t>(inner); }
  std::size_t count() const { return offsets.size(); }  // values per output
};

// For kernels: the attributes were vetted by the infer function.
inline ReducePlan plan_reduce(const Shape& shape, const Attrs& attrs) {
  std::vector<bool> reduced;
  reduced_dims(shape, attrs, reduced);
  ReducePlan p;
  std::size_t prefix = shape.size();
  while (prefix > 0 && !reduced[prefix - 1]) p.inner *= shape[--prefix];
  p.base = offsets_over(shape, reduced, false, prefix);
  p.offsets = offsets_over(shape, reduced, true, prefix);
  p.contiguous = p.inner == 1;
  for (std::size_t i = 0; i < p.offsets.size() && p.contiguous; ++i) {
    p.contiguous = p.offsets[i] == static_cast<std::int64_t>(i);
  }
  return p;
}

// Calls f(output index, values, count) once per output with the values it reduces, gathered
// contiguously (in row-major order of the reduced dims).
template <class V, class F>
void for_each_output(const std::vector<V>& x, const ReducePlan& p, F f) {
  std::vector<V> run(p.count());
  for (std::size_t o = 0; o < p.base.size(); ++o) {
    for (std::int64_t j = 0; j < p.inner; ++j) {
      const V* src = x.data() + p.base[o] + j;
      for (std::size_t r = 0; r < run.size(); ++r) run[r] = src[p.offsets[r]];
      f(o * static_cast<std::size_t>(p.inner) + static_cast<std::size_t>(j), run.data(),
        static_cast<std::int64_t>(run.size()));
    }
  }
}

// f32: 64 lanes folded by a halving tree, as the vector unit sums (see reduce_ops.cpp); f64 and
// integers: in order.
template <class T>
T sum_values(const T* v, std::int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    constexpr std::int64_t kLanes = 64;
    T lanes[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += v[i + l];
    }
    for (std::int64_t l = 0; i < n; ++i, ++l) lanes[l] += v[i];
    for (std::int64_t w = kLanes / 2; w > 0; w /= 2) {
      for (std::int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
    }
    return lanes[0];
  } else {
    T s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += v[i];
    return s;
  }
}

}  // namespace npuscope::emulator::kernels::reduction
