// Where and Cast: data movement (no arithmetic, so the precision mode never lowers them).
//   Where  cond ? a : b with numpy broadcasting of all three. cond may have any dtype (non-zero,
//          NaN included, is true); a and b share a dtype, which the output takes. Elements are
//          copied as bytes.
//   Cast   attribute "to" (int64, a DType value). Conversions are exact: each value is rounded once,
//          to nearest even, into the output dtype (see Note [Exact Cast]); float -> integer
//          truncates toward zero (NaN -> 0, clamped to the range); integer -> integer wraps as a C
//          cast does; anything -> bool is "!= 0". On the NPU the output then gets the overflow mode
//          (saturation: 1e5 -> f16 is 65504, and the float status is raised).
// One kernel serves both backends: a cast or a select has nothing to approximate.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kWhere[] = "Where", kCast[] = "Cast";

// ---- Where --------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_where(std::span<const TensorMeta> in, const Attrs&) {
  if (!in[0].present || !in[1].present || !in[2].present) fail(kWhere, "cond, a and b are all required");
  if (in[1].dtype != in[2].dtype) {
    fail(kWhere, "a and b must have one dtype, got " + std::string(dtype_name(in[1].dtype)) + " and " +
                     std::string(dtype_name(in[2].dtype)));
  }
  const Shape ab = broadcast_shapes(in[1].shape, in[2].shape, kWhere);
  return {{broadcast_shapes(in[0].shape, ab, kWhere), in[1].dtype}};
}

KernelCost cost_where(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);  // one select per element
}

// U: an unsigned integer as wide as the element, so the copy is a plain load and store.
template <class U>
void select_elements(const std::vector<double>& cond, const TensorView& a, const TensorView& b, const TensorView& out,
                     const std::vector<std::int64_t> (&index)[3]) {
  const U* pa = a.as<U>();
  const U* pb = b.as<U>();
  U* po = out.as<U>();
  for (std::int64_t i = 0; i < out.numel; ++i) {
    const auto k = static_cast<std::size_t>(i);
    po[i] = cond[static_cast<std::size_t>(index[0][k])] != 0 ? pa[index[1][k]] : pb[index[2][k]];
  }
}

void where_kernel(KernelContext& c) {
  const TensorView& out = c.outputs[0];
  std::vector<double> cond(static_cast<std::size_t>(c.inputs[0].numel));
  load_f64(c.inputs[0], cond.data());  // exact enough for a zero test: only 0 and -0 map to 0
  std::vector<std::int64_t> index[3];
  for (int i = 0; i < 3; ++i) BroadcastIndex(*c.inputs[i].shape, *out.shape).fill(index[i]);
  switch (dtype_size(out.dtype)) {
    case 1: select_elements<std::uint8_t>(cond, c.inputs[1], c.inputs[2], out, index); break;
    case 2: select_elements<std::uint16_t>(cond, c.inputs[1], c.inputs[2], out, index); break;
    case 4: select_elements<std::uint32_t>(cond, c.inputs[1], c.inputs[2], out, index); break;
    default: select_elements<std::uint64_t>(cond, c.inputs[1], c.inputs[2], out, index); break;
  }
}

// ---- Cast ---------------------------------------------------------------------------------------
//
// Note [Exact Cast]
// Converting to f16/bf16 through f32 rounds twice, which is wrong when the first rounding lands on
// a half-way point of the second (f64 -> f32 -> f16, or an int64 above 2^24 -> f32 -> bf16). So a
// wide value (f64, int) headed for f16/bf16 is first rounded to f32 *to odd* (truncate, then set
// the last bit if anything was dropped): f32 keeps 13 more bits than f16 and 16 more than bf16, and
// rounding to odd at p >= q + 2 bits followed by round-to-nearest at q bits equals one rounding to
// nearest at q bits. store() then rounds that f32 value to the output dtype once.

std::vector<TensorMeta> infer_cast(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (!attrs.has("to")) fail(kCast, "the attribute 'to' (the output dtype) is required");
  const std::int64_t to = attrs.get_int("to", 0);
  if (to < 0 || to >= kNumDTypes) {
    fail(kCast, "'to' = " + std::to_string(to) + " is not a dtype (0.." + std::to_string(kNumDTypes - 1) + ")");
  }
  return {{in[0].shape, static_cast<DType>(to)}};
}

KernelCost cost_cast(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

float set_odd_if_inexact(float truncated, bool inexact) {
  if (!inexact) return truncated;
  std::uint32_t u = std::bit_cast<std::uint32_t>(truncated);
  return std::bit_cast<float>(u | 1u);
}

float i64_to_f32_odd(std::int64_t v) {
  std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const int shift = static_cast<int>(std::bit_width(m)) - 24;
  bool inexact = false;
  if (shift > 0) {
    inexact = (m & ((std::uint64_t{1} << shift) - 1)) != 0;
    m >>= shift;
  }
  float f = set_odd_if_inexact(static_cast<float>(m), inexact);  // m < 2^24: exact
  if (shift > 0) f = std::ldexp(f, shift);
  return v < 0 ? -f : f;
}

std::vector<std::int64_t> load_ints(const TensorView& v) {
  std::vector<std::int64_t> x(static_cast<std::size_t>(v.numel));
  load_i64(v, x.data());
  return x;
}

std::vector<double> load_doubles(const TensorView& v) {
  std::vector<double> x(static_cast<std::size_t>(v.numel));
  load_f64(v, x.data());
  return x;
}

void cast_to_integer(KernelContext& c, const TensorView& in, const TensorView& out) {
  if (is_floating(in.dtype)) {
    std::vector<double> x = load_doubles(in);
    store<double>(out, x.data(), c);  // truncation toward zero, NaN -> 0, clamped
  } else {
    store_i64(out, load_ints(in).data());
  }
}

void cast_to_f64(KernelContext& c, const TensorView& in, const TensorView& out) {
  std::vector<double> x(static_cast<std::size_t>(in.numel));
  if (is_floating(in.dtype)) {
    load_f64(in, x.data());
  } else {
    const std::vector<std::int64_t> ints = load_ints(in);  // int64 above 2^53 must round once
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(ints[i]);
  }
  store<double>(out, x.data(), c);
}

// f32, f16 or bf16 output. See Note [Exact Cast].
void cast_to_narrow_float(KernelContext& c, const TensorView& in, const TensorView& out) {
  const bool to_f32 = out.dtype == DType::kF32;
  std::vector<float> x(static_cast<std::size_t>(in.numel));
  if (in.dtype == DType::kF64) {
    const std::vector<double> d = load_doubles(in);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = to_f32 ? static_cast<float>(d[i]) : round_to_f32_odd(d[i]);
  } else if (!is_floating(in.dtype)) {
    const std::vector<std::int64_t> ints = load_ints(in);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = to_f32 ? static_cast<float>(ints[i]) : i64_to_f32_odd(ints[i]);
    }
  } else {
    load_f32(in, x.data());  // f32 / f16 / bf16: exact in f32
  }
  store<float>(out, x.data(), c);
}

void cast_kernel(KernelContext& c) {
  const TensorView& in = c.inputs[0];
  const TensorView& out = c.outputs[0];
  if (in.dtype == out.dtype) {
    std::memcpy(out.data, in.data, static_cast<std::size_t>(in.numel) * dtype_size(in.dtype));
    return;
  }
  // store() rounds NPU results to min(compute dtype, output dtype): a cast rounds to its output only.
  c.compute_dtype = out.dtype;
  if (!is_floating(out.dtype)) {
    cast_to_integer(c, in, out);
  } else if (out.dtype == DType::kF64) {
    cast_to_f64(c, in, out);
  } else {
    cast_to_narrow_float(c, in, out);
  }
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kWhere,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .infer = infer_where,
                              .cost = cost_where});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kCast,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_cast,
                              .cost = cost_cast});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kWhere, where_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kCast, cast_kernel);

}  // namespace npuscope::emulator::kernels
