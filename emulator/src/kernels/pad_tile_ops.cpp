// Pad and Tile with ONNX semantics; 'pads', 'value' and 'repeats' are attributes here (newer opsets
// pass them as inputs: the ONNX adapters turn those into attributes). Roll is CANN's (torch.roll).
//
//   Pad   'pads' = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; a negative pad crops. Cropping
//         comes first, then the cropped input is padded by 'mode': constant ('value', converted to
//         the dtype once), reflect (mirror without repeating the edge, as numpy's 'reflect', also
//         for pads longer than the dim), edge (repeat the edge) or wrap (periodic).
//   Tile  'repeats' (one per dim, >= 0): the input repeated along each dim.
//   Roll  'shifts' and 'dims' (one shift per dim, negative dims count from the end; no dims: the
//         flattened input rolls by the one shift): y[i + shift mod n] = x[i] along each dim.
//
// Data movement: bytes copied exactly, one kernel for both backends (see movement_util.h).
#include <algorithm>
#include <string>

#include "movement_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kPad[] = "Pad";
constexpr char kTile[] = "Tile";
constexpr char kRoll[] = "Roll";

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

bool parse_mode(const std::string& mode, PadMode& out) {
  if (mode == "constant") {
    out = PadMode::kConstant;
  } else if (mode == "reflect") {
    out = PadMode::kReflect;
  } else if (mode == "edge") {
    out = PadMode::kEdge;
  } else if (mode == "wrap") {
    out = PadMode::kWrap;
  } else {
    return false;
  }
  return true;
}

// Input flat index per output element, from one coordinate map per dim (maps[d][o] = the input
// coordinate that output coordinate o reads along dim d, or -1 for the fill value).
std::vector<std::int64_t> index_from_dim_maps(const Shape& out, const Shape& in,
                                              const std::vector<std::vector<std::int64_t>>& maps) {
  const auto strides = strides_of(in);
  std::vector<std::int64_t> index(static_cast<std::size_t>(shape_numel(out)));
  std::size_t o = 0;
  for_each_index(out, [&](const std::vector<std::int64_t>& at) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < at.size() && flat >= 0; ++d) {
      const std::int64_t c = maps[d][static_cast<std::size_t>(at[d])];
      flat = c < 0 ? -1 : flat + c * strides[d];
    }
    index[o++] = flat;
  });
  return index;
}

// ---- Pad ----------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_pad(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  PadMode mode;
  const std::string name = attrs.get_string("mode", "constant");
  if (!parse_mode(name, mode)) fail(kPad, "mode '" + name + "' is not constant, reflect, edge or wrap");
  attrs.get_float("value", 0);  // checks its type
  const auto pads = attrs.get_ints("pads");
  if (pads.size() != 2 * x.size()) {
    fail(kPad, "pads " + shape_str(pads) + " must have 2 values per dim of input " + shape_str(x));
  }
  Shape out(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    const std::int64_t begin = pads[d], end = pads[d + x.size()];
    // Checked: pads come from the model (Note [Sizes from user input]); the output's size limit
    // is checked by the dispatcher.
    const auto what = [&] {
      return "dim " + std::to_string(d) + " of input " + shape_str(x) + " with pads " + shape_str(pads);
    };
    const std::int64_t cropped = checked_add(checked_add(x[d], std::min<std::int64_t>(begin, 0), kPad, what),
                                             std::min<std::int64_t>(end, 0), kPad, what);
    if (cropped < 0)
      fail(kPad, "pads " + shape_str(pads) + " crop more than dim " + std::to_string(d) + " of input " + shape_str(x) +
                     " holds");
    if (cropped == 0 && mode != PadMode::kConstant && (begin > 0 || end > 0)) {
      fail(kPad,
           "mode '" + name + "' cannot pad dim " + std::to_string(d) + " of input " + shape_str(x) + ": it is empty");
    }
    out[d] = checked_add(checked_add(x[d], begin, kPad, what), end, kPad, what);
  }
  return {{out, in[0].dtype}};
}

// Input coordinate for position p of the padded cropped range [lo, lo + m), or -1 (constant).
std::int64_t pad_source(std::int64_t p, std::int64_t lo, std::int64_t m, PadMode mode) {
  if (p >= 0 && p < m) return lo + p;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return lo + std::clamp<std::int64_t>(p, 0, m - 1);
    case PadMode::kWrap: return lo + ((p % m) + m) % m;
    case PadMode::kReflect: {
      if (m == 1) return lo;
      const std::int64_t period = 2 * (m - 1);
      std::int64_t r = ((p % period) + period) % period;
      return lo + (r < m ? r : period - r);
    }
  }
  return -1;
}

// The 'value' attribute as one element of the output dtype.
std::uint64_t fill_bytes(double value, DType dtype) {
  std::uint64_t bits = 0;
  const Shape one{1};
  store_f64_raw(TensorView{reinterpret_cast<std::byte*>(&bits), dtype, &one, 1}, &value);
  return bits;
}

void pad_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  if (y.numel == 0) return;
  PadMode mode = PadMode::kConstant;
  parse_mode(ctx.attrs.get_string("mode", "constant"), mode);
  const auto pads = ctx.attrs.get_ints("pads");
  const Shape &in = *x.shape, &out = *y.shape;
  std::vector<std::vector<std::int64_t>> maps(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    const std::int64_t begin = pads[d], end = pads[d + in.size()];
    const std::int64_t lo = std::max<std::int64_t>(-begin, 0), m = in[d] - lo - std::max<std::int64_t>(-end, 0);
    const std::int64_t shift = std::max<std::int64_t>(begin, 0);
    maps[d].resize(static_cast<std::size_t>(out[d]));
    for (std::int64_t o = 0; o < out[d]; ++o) maps[d][static_cast<std::size_t>(o)] = pad_source(o - shift, lo, m, mode);
  }
  const std::uint64_t fill = fill_bytes(ctx.attrs.get_float("value", 0), y.dtype);
  copy_indexed(x.data, y.data, dtype_size(y.dtype), index_from_dim_maps(out, in, maps),
               reinterpret_cast<const std::byte*>(&fill));
}

// ---- Tile ---------------------------------------------------------------------------------------

std::vector<TensorMeta> infer_tile(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  if (!attrs.has("repeats")) fail(kTile, "needs the 'repeats' attribute");
  const auto repeats = attrs.get_ints("repeats");
  if (repeats.size() != x.size()) {
    fail(kTile, "repeats " + shape_str(repeats) + " must have one value per dim of input " + shape_str(x));
  }
  Shape out(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 0) fail(kTile, "repeats " + shape_str(repeats) + " has a negative count");
    out[d] = checked_mul(x[d], repeats[d], kTile, [&] {
      return "dim " + std::to_string(d) + " of input " + shape_str(x) + " times repeats " + shape_str(repeats);
    });
  }
  return {{out, in[0].dtype}};
}

void tile_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  if (y.numel == 0) return;
  const Shape &in = *x.shape, &out = *y.shape;
  std::vector<std::vector<std::int64_t>> maps(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    for (std::int64_t o = 0; o < out[d]; ++o) maps[d].push_back(o % in[d]);
  }
  copy_indexed(x.data, y.data, dtype_size(y.dtype), index_from_dim_maps(out, in, maps));
}

// ---- Roll ---------------------------------------------------------------------------------------

// The shift of every dim (0 for a dim not rolled); throws on bad attributes.
std::vector<std::int64_t> roll_shifts(const Shape& x, const Attrs& attrs) {
  const auto shifts = attrs.get_ints("shifts", {});
  const auto dims = attrs.get_ints("dims", {});
  if (dims.empty()) {
    if (shifts.size() != 1) fail(kRoll, "without dims, shifts must be one value, got " + shape_str(shifts));
    return {};
  }
  if (shifts.size() != dims.size()) {
    fail(kRoll, "shifts " + shape_str(shifts) + " and dims " + shape_str(dims) + " must have the same length");
  }
  std::vector<std::int64_t> per_dim(x.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(normalize_axis(dims[i], static_cast<std::int64_t>(x.size()), kRoll));
    per_dim[d] += shifts[i];
  }
  return per_dim;
}

std::vector<TensorMeta> infer_roll(std::span<const TensorMeta> in, const Attrs& attrs) {
  roll_shifts(in[0].shape, attrs);
  return {{in[0].shape, in[0].dtype}};
}

// y[i] = x[i - shift mod n] along each rolled dim (the flattened input when no dims are given).
void roll_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.outputs[0];
  if (y.numel == 0) return;
  const std::vector<std::int64_t> per_dim = roll_shifts(*x.shape, ctx.attrs);
  const Shape flat{x.numel};
  const Shape& shape = per_dim.empty() ? flat : *x.shape;
  const std::vector<std::int64_t> shifts = per_dim.empty() ? ctx.attrs.get_ints("shifts") : per_dim;
  std::vector<std::vector<std::int64_t>> maps(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::int64_t n = shape[d], s = ((shifts[d] % n) + n) % n;
    for (std::int64_t o = 0; o < n; ++o) maps[d].push_back((o - s + n) % n);
  }
  copy_indexed(x.data, y.data, dtype_size(y.dtype), index_from_dim_maps(shape, shape, maps));
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kRoll,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_roll,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kPad,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_pad,
                              .cost = movement_cost});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kTile,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_tile,
                              .cost = movement_cost});

NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kPad, pad_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kTile, tile_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kRoll, roll_kernel);

}  // namespace npuscope::emulator::kernels
