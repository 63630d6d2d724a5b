// BitShift (ONNX opset 11): x shifted by y bits, element-wise with numpy broadcasting; 'direction'
// LEFT or RIGHT (required). ONNX defines it on unsigned integers; the emulator's are u8, and i8 / i32 /
// i64 are shifted as their unsigned bit patterns (logical shifts), so that a shifted-out bit never
// comes back as a sign. A shift by the element's width or more, or by a negative amount, gives 0
// (numpy's and onnxruntime's result for the unsigned types). Integer vector op, one kernel for both
// backends (no rounding can differ).
#include <cstring>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "BitShift";

bool read_left(const Attrs& attrs) {
  if (!attrs.has("direction")) fail(kOp, "needs the 'direction' attribute (LEFT or RIGHT)");
  const std::string d = attrs.get_string("direction", "");
  if (d != "LEFT" && d != "RIGHT") fail(kOp, "direction must be LEFT or RIGHT, got '" + d + "'");
  return d == "LEFT";
}

std::vector<TensorMeta> infer_bit_shift(std::span<const TensorMeta> in, const Attrs& attrs) {
  read_left(attrs);
  require_same_dtype(in, kOp);
  const DType t = in[0].dtype;
  if (t != DType::kU8 && t != DType::kI8 && t != DType::kI32 && t != DType::kI64) {
    fail(kOp, "needs integer inputs (u8, or i8 / i32 / i64 as bit patterns), got " + std::string(dtype_name(t)));
  }
  return {{broadcast_shapes(in[0].shape, in[1].shape, kOp), t}};
}

// Reads element i of an integer buffer of `bytes`-wide elements as its unsigned bit pattern.
std::uint64_t bits_at(const std::byte* data, std::size_t bytes, std::int64_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, data + static_cast<std::size_t>(i) * bytes, bytes);  // little-endian: the low bytes
  return v;
}

void bit_shift_kernel(KernelContext& ctx) {
  const TensorView &x = ctx.inputs[0], &y = ctx.inputs[1], &z = ctx.outputs[0];
  const bool left = read_left(ctx.attrs);
  const std::size_t bytes = dtype_size(z.dtype);
  const auto width = static_cast<std::uint64_t>(bytes * 8);
  const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  std::vector<std::int64_t> xi, yi;
  const BroadcastIndex bx(*x.shape, *z.shape), by(*y.shape, *z.shape);
  if (!bx.identity()) bx.fill(xi);
  if (!by.identity()) by.fill(yi);
  for (std::int64_t i = 0; i < z.numel; ++i) {
    const std::uint64_t a = bits_at(x.data, bytes, bx.identity() ? i : xi[static_cast<std::size_t>(i)]);
    const std::uint64_t s = bits_at(y.data, bytes, by.identity() ? i : yi[static_cast<std::size_t>(i)]);
    const std::uint64_t r = s >= width ? 0 : (left ? a << s : a >> s) & mask;
    std::memcpy(z.data + static_cast<std::size_t>(i) * bytes, &r, bytes);
  }
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kOp,
                              .category = OpCategory::kVector,
                              .min_inputs = 2,
                              .max_inputs = 2,
                              .infer = infer_bit_shift,
                              .cost = [](std::span<const TensorMeta> in, std::span<const TensorMeta> out,
                                         const Attrs&) { return vector_cost(in, out, 1); }});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOp, bit_shift_kernel);

}  // namespace npuscope::emulator::kernels
