// A 2-D convolution by its definition, for the tests of Conv2d (conv_ops_test.cpp) and its gradients
// (conv_backward_ops_test.cpp): y[i, o, r, s] = Σ x[i, cin, ih, iw] · w[o, ci, u, v].
#pragma once

#include <cstdint>
#include <vector>

#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator::testing {

// A convolution's shapes and attributes (the ops' defaults), and whether it has a bias.
struct Conv2dCase {
  Shape x, w;
  std::vector<std::int64_t> strides{1, 1}, pads{0, 0, 0, 0}, dilations{1, 1};
  std::int64_t group = 1;
  bool bias = false;
};

// f(y, x, w) for every product of the definition, as flat indices into y (of shape `out`), x and w;
// taps that fall in the padding are skipped. Each output's products come in a row, over (ci, u, v).
template <class F>
void for_each_conv2d_product(const Conv2dCase& p, const Shape& out, F f) {
  const std::int64_t n = out[0], co = out[1], oh = out[2], ow = out[3];
  const std::int64_t c = p.x[1], h = p.x[2], wd = p.x[3], cg = p.w[1], kh = p.w[2], kw = p.w[3];
  const std::int64_t per_group = co / p.group;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < co; ++o)
      for (std::int64_t r = 0; r < oh; ++r)
        for (std::int64_t s = 0; s < ow; ++s) {
          const auto y = static_cast<std::size_t>(((i * co + o) * oh + r) * ow + s);
          for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t u = 0; u < kh; ++u)
              for (std::int64_t v = 0; v < kw; ++v) {
                const std::int64_t ih = r * p.strides[0] - p.pads[0] + u * p.dilations[0];
                const std::int64_t iw = s * p.strides[1] - p.pads[1] + v * p.dilations[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                const std::int64_t cin = (o / per_group) * cg + ci;
                f(y, static_cast<std::size_t>(((i * c + cin) * h + ih) * wd + iw),
                  static_cast<std::size_t>(((o * cg + ci) * kh + u) * kw + v));
              }
        }
}

}  // namespace npuscope::emulator::testing
