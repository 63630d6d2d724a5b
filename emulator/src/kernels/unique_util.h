// Unique's grouping of equal slices, shared by the kernel (unique_ops.cpp) and the ONNX adapter,
// which needs the number of groups before the op runs (the output shapes depend on the values, as
// NonZero's do).
#pragma once

#include <cstdint>
#include <vector>

namespace npuscope::emulator::kernels {

struct UniqueGroups {
  std::vector<std::int64_t> first;    // per unique slice, in output order: index of its first occurrence
  std::vector<std::int64_t> inverse;  // per input slice: the output index of its unique slice
  std::vector<std::int64_t> counts;   // per unique slice: how many input slices equal it
};

// The values viewed as [outer, n, inner] hold n slices along the middle dim (slice k is the
// outer·inner values x[o, k, i], compared lexicographically in (o, i) order, as numpy.unique with an
// axis does). `sorted`: the unique slices in ascending order; else in order of first occurrence.
UniqueGroups unique_groups(const std::vector<double>& values, std::int64_t outer, std::int64_t n, std::int64_t inner,
                           bool sorted);

}  // namespace npuscope::emulator::kernels
