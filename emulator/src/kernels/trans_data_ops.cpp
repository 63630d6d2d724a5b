// TransData: converts a tensor between layouts (Note [Private formats] in formats.h):
//   TransData (x; src_format, dst_format, base_shape, c0) -> y
// x holds the source's storage shape, y the destination's (storage_shape() of the logical shape
// base_shape, which may be left out when the source is a base format: it is then x's shape). c0 is
// the private layout's C0 (0: 32 bytes of the dtype). Padding (channels up to C1 * C0, Cout up to
// 16, m up to 16) is written as zeros. Any dtype: the kernel moves elements and computes nothing.
//
// Note [TransData cost]
// The kernel reads one layout and writes the other in short contiguous runs: H * W elements per
// channel for NC1HWC0; for FRACTAL_Z one C0 block, since neighbours in a block are kh * kw apart in
// the weight and neighbouring blocks a whole output channel apart; a row of n for FRACTAL_NZ. A run
// shorter than the memory system's burst (DeviceSpec::transdata_burst_bytes) costs a whole burst,
// so the bytes are scaled by burst / run where that is above 1; the task also pays
// DeviceSpec::transdata_fixed_ns (its multi-pass set-up). On the shared 910B profile FRACTAL_Z
// costs ~55 ps per element whatever kh * kw is (3x3, 5x5 and 11x11 weights alike), which runs of
// kh * kw would not give; 5HD of 13x13 and larger planes moves at L2 speed when its input is hot.
#include <algorithm>
#include <cstring>
#include <string>

#include "../format_plans.h"
#include "kernel_util.h"

namespace npuscope::emulator {
namespace {

using kernels::fail;

constexpr char kOp[] = "TransData";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The element offset of logical index `idx` (of logical shape `base`) in format `f`'s storage.
std::int64_t storage_offset(Format f, const Shape& base, std::int64_t c0, const std::int64_t* idx) {
  switch (f) {
    case Format::kND:
    case Format::kNCHW: break;
    case Format::kNC1HWC0: {
      const std::int64_t c1 = ceil_div(base[1], c0);
      return (((idx[0] * c1 + idx[1] / c0) * base[2] + idx[2]) * base[3] + idx[3]) * c0 + idx[1] % c0;
    }
    case Format::kFractalZ: {
      const std::int64_t row = ((idx[1] / c0) * base[2] + idx[2]) * base[3] + idx[3];
      return ((row * ceil_div(base[0], 16) + idx[0] / 16) * 16 + idx[0] % 16) * c0 + idx[1] % c0;
    }
    case Format::kFractalNZ: {
      const std::size_t r = base.size();
      const std::int64_t m = base[r - 2], n = base[r - 1], mi = idx[r - 2], ni = idx[r - 1];
      std::int64_t batch = 0;
      for (std::size_t d = 0; d + 2 < r; ++d) batch = batch * base[d] + idx[d];
      return (((batch * ceil_div(n, c0) + ni / c0) * ceil_div(m, 16) + mi / 16) * 16 + mi % 16) * c0 + ni % c0;
    }
  }
  std::int64_t off = 0;
  for (std::size_t d = 0; d < base.size(); ++d) off = off * base[d] + idx[d];
  return off;
}

struct Conversion {
  Format src = Format::kND, dst = Format::kND;
  Shape base;
  std::int64_t c0 = 0;
};

// The attributes, checked against the input's shape. Throws InvalidArgument naming the op.
Conversion conversion(const TensorMeta& x, const Attrs& attrs) {
  Conversion c;
  c.src = parse_format(attrs.get_string("src_format", ""));
  c.dst = parse_format(attrs.get_string("dst_format", ""));
  const std::int64_t c0 = attrs.get_int("c0", 0);
  if (c0 < 0 || c0 > 64) fail(kOp, "c0 must be in [0, 64] (0: 32 bytes of the dtype), got " + std::to_string(c0));
  c.c0 = c0 > 0 ? c0 : c0_of(x.dtype);
  if (attrs.has("base_shape")) {
    c.base = attrs.get_ints("base_shape");
    if (std::any_of(c.base.begin(), c.base.end(), [](std::int64_t v) { return v < 0; }))
      fail(kOp, "base_shape " + shape_str(c.base) + " has a negative dim");
    check_tensor_shape(c.base, x.dtype, kOp);
  } else if (is_private(c.src)) {
    fail(kOp, std::string("needs the 'base_shape' attribute (the logical shape) to convert from ") +
                  std::string(format_name(c.src)));
  } else {
    c.base = x.shape;
  }
  const Shape want = storage_shape(c.src, c.base, x.dtype, static_cast<int>(c.c0));
  if (x.shape != want) {
    fail(kOp, "the input " + shape_str(x.shape) + " is not the " + std::string(format_name(c.src)) +
                  " storage of base_shape " + shape_str(c.base) + " (" + shape_str(want) + ")");
  }
  return c;
}

std::vector<TensorMeta> infer_trans_data(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Conversion c = conversion(in[0], attrs);
  Shape out = storage_shape(c.dst, c.base, in[0].dtype, static_cast<int>(c.c0));
  check_tensor_shape(out, in[0].dtype, kOp);
  return {{std::move(out), in[0].dtype}};
}

void trans_data_kernel(KernelContext& ctx) {
  const TensorView& x = ctx.inputs[0];
  const TensorView& y = ctx.outputs[0];
  const Conversion c = conversion(TensorMeta{*x.shape, x.dtype}, ctx.attrs);  // checked by infer
  const std::size_t item = dtype_size(x.dtype);
  std::memset(y.data, 0, static_cast<std::size_t>(y.numel) * item);
  const std::int64_t numel = shape_numel(c.base);
  const std::size_t rank = c.base.size();
  std::vector<std::int64_t> idx(rank, 0);
  for (std::int64_t e = 0; e < numel; ++e) {
    const std::int64_t from = storage_offset(c.src, c.base, c.c0, idx.data());
    const std::int64_t to = storage_offset(c.dst, c.base, c.c0, idx.data());
    std::memcpy(y.data + to * item, x.data + from * item, item);
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < c.base[d]) break;
      idx[d] = 0;
    }
  }
}

// The contiguous run of a private layout's base-format side, in elements (Note [TransData cost]).
double run_elements(Format f, const Shape& base, int c0) {
  switch (f) {
    case Format::kNC1HWC0: return static_cast<double>(base[2] * base[3]);
    case Format::kFractalZ: return static_cast<double>(c0);
    case Format::kFractalNZ: return static_cast<double>(base.back());
    case Format::kND:
    case Format::kNCHW: break;
  }
  return 0;  // no short runs
}

KernelCost device_cost(std::span<const TensorMeta> in, std::span<const TensorMeta>, const Attrs& attrs,
                       const DeviceSpec& spec) {
  const Conversion c = conversion(in[0], attrs);
  return trans_data_cost(c.base, in[0].dtype, c.src, c.dst, static_cast<int>(c.c0), spec);
}

KernelCost cost_trans_data(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  return device_cost(in, out, attrs, DeviceSpec{});  // no spec: whole runs, no fixed part
}

const OpDeviceRules kRules{.device_cost = device_cost};

}  // namespace

KernelCost trans_data_cost(const Shape& base, DType dtype, Format src, Format dst, int c0, const DeviceSpec& spec) {
  const double item = static_cast<double>(dtype_size(dtype));
  const int cz = c0 > 0 ? c0 : c0_of(dtype);
  const double read = static_cast<double>(shape_numel(storage_shape(src, base, dtype, c0))) * item;
  const double written = static_cast<double>(shape_numel(storage_shape(dst, base, dtype, c0))) * item;
  double run = 0;
  for (const Format f : {src, dst}) {
    const double r = run_elements(f, base, cz) * item;
    if (r > 0) run = run > 0 ? std::min(run, r) : r;
  }
  const double burst = std::max(spec.transdata_burst_bytes, 1.0);
  const double scale = run > 0 && run < burst ? burst / run : 1.0;
  return KernelCost{.unit = ComputeUnit::kVector,
                    .flops = 0,
                    .bytes = (read + written) * scale,
                    .fixed_ns = static_cast<double>(spec.transdata_fixed_ns),
                    .bytes_written = written * scale};
}

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_trans_data,
                              .cost = cost_trans_data});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOp, trans_data_kernel);
NPUSCOPE_REGISTER_DEVICE_RULES(kOp, &kRules);

}  // namespace npuscope::emulator
