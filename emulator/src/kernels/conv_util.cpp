#include "conv_util.h"

#include <string>

namespace npuscope::emulator::kernels {

// Pads and dilations are capped by dim_ints and dims by the tensor size limit, but their products
// and sums are still checked (Note [Sizes from user input]).
std::int64_t conv_out_size(std::int64_t in, std::int64_t pad, std::int64_t k, std::int64_t stride,
                           std::int64_t dilation, const char* op) {
  const std::int64_t padded = checked_add(in, pad, op, "the padded input size");
  const std::int64_t span = checked_mul(dilation, k - 1, op, "the dilated kernel size");
  return (padded - span - 1) / stride + 1;
}

std::int64_t conv_group_attr(const Attrs& attrs, const char* op) {
  const std::int64_t group = attrs.get_int("group", 1);
  if (!attrs.has("groups")) return group;
  const std::int64_t groups = attrs.get_int("groups", 1);
  if (attrs.has("group") && group != groups) {
    fail(op, "group " + std::to_string(group) + " and groups " + std::to_string(groups) + " disagree; give one");
  }
  return groups;
}

ConvGeom conv_geom(const Shape& x, const Shape& w, const Attrs& attrs, const char* op) {
  if (x.size() != 4 || w.size() != 4) {
    fail(op, "input must be NCHW and weight [Cout, Cin/group, kH, kW], got " + shape_str(x) + " and " + shape_str(w));
  }
  ConvGeom g{.n = x[0], .c = x[1], .h = x[2], .w = x[3], .cout = w[0], .kh = w[2], .kw = w[3]};
  const auto s = dim_ints(attrs, "strides", 2, 1, 1, op);
  const auto p = dim_ints(attrs, "pads", 4, 0, 0, op);
  const auto d = dim_ints(attrs, "dilations", 2, 1, 1, op);
  g.sh = s[0], g.sw = s[1], g.pt = p[0], g.pl = p[1], g.dh = d[0], g.dw = d[1];
  g.group = conv_group_attr(attrs, op);
  if (g.group < 1 || g.c % g.group != 0 || g.cout % g.group != 0 || w[1] * g.group != g.c) {
    fail(op, "group " + std::to_string(g.group) + " does not fit input " + shape_str(x) + " and weight " +
                 shape_str(w) + " (need Cin = weight dim 1 * group, Cout divisible by group)");
  }
  if (attrs.has("kernel_shape") && attrs.get_ints("kernel_shape") != std::vector<std::int64_t>{g.kh, g.kw}) {
    fail(op, "kernel_shape does not match weight " + shape_str(w));
  }
  g.oh = conv_out_size(g.h, p[0] + p[2], g.kh, g.sh, g.dh, op);  // pads <= 2^40 each: no overflow
  g.ow = conv_out_size(g.w, p[1] + p[3], g.kw, g.sw, g.dw, op);
  if (g.oh < 1 || g.ow < 1 || g.kh < 1 || g.kw < 1) {
    fail(op, "kernel " + shape_str(w) + " with dilations " + shape_str(d) + " does not fit input " + shape_str(x) +
                 " with pads " + shape_str(p));
  }
  return g;
}

}  // namespace npuscope::emulator::kernels
