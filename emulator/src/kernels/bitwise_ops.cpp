// The ops on the bits of integers, element-wise with numpy broadcasting. Integer vector ops, one
// kernel for both backends (no rounding can differ).
//
// BitShift (ONNX opset 11): x shifted by y bits; 'direction' LEFT or RIGHT (required). ONNX defines it
// on unsigned integers; the emulator's are u8, and i8 / i32 / i64 are shifted as their unsigned bit
// patterns (logical shifts), so that a shifted-out bit never comes back as a sign. A shift by the
// element's width or more, or by a negative amount, gives 0 (numpy's and onnxruntime's result for the
// unsigned types).
//
// BitwiseAnd / BitwiseOr / BitwiseXor (CANN's names, ONNX opset 18's): x & y, x | y, x ^ y of two
// tensors of one integer dtype or bool (torch's `a | b` on uint8 masks, `flags & 4`).
#include <cstring>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kOp[] = "BitShift", kAnd[] = "BitwiseAnd", kOr[] = "BitwiseOr", kXor[] = "BitwiseXor";

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

template <const char* kName>
std::vector<TensorMeta> infer_bitwise(std::span<const TensorMeta> in, const Attrs&) {
  require_same_dtype(in, kName);
  const DType t = in[0].dtype;
  if (t != DType::kBool && t != DType::kU8 && t != DType::kI8 && t != DType::kI32 && t != DType::kI64) {
    fail(kName, "needs integer or bool inputs, got " + std::string(dtype_name(t)));
  }
  return {{broadcast_shapes(in[0].shape, in[1].shape, kName), t}};
}

// Reads element i of an integer buffer of `bytes`-wide elements as its unsigned bit pattern.
std::uint64_t bits_at(const std::byte* data, std::size_t bytes, std::int64_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, data + static_cast<std::size_t>(i) * bytes, bytes);  // little-endian: the low bytes
  return v;
}

// z = f(x, y) on the elements' bit patterns, broadcast; f sees the element width in bits.
template <class F>
void bits_kernel(KernelContext& ctx, F f) {
  const TensorView &x = ctx.inputs[0], &y = ctx.inputs[1], &z = ctx.outputs[0];
  const std::size_t bytes = dtype_size(z.dtype);
  const auto width = static_cast<std::uint64_t>(bytes * 8);
  std::vector<std::int64_t> xi, yi;
  const BroadcastIndex bx(*x.shape, *z.shape), by(*y.shape, *z.shape);
  if (!bx.identity()) bx.fill(xi);
  if (!by.identity()) by.fill(yi);
  for (std::int64_t i = 0; i < z.numel; ++i) {
    const std::uint64_t a = bits_at(x.data, bytes, bx.identity() ? i : xi[static_cast<std::size_t>(i)]);
    const std::uint64_t b = bits_at(y.data, bytes, by.identity() ? i : yi[static_cast<std::size_t>(i)]);
    const std::uint64_t r = f(a, b, width);
    std::memcpy(z.data + static_cast<std::size_t>(i) * bytes, &r, bytes);
  }
}

void bit_shift_kernel(KernelContext& ctx) {
  const bool left = read_left(ctx.attrs);
  bits_kernel(ctx, [left](std::uint64_t a, std::uint64_t s, std::uint64_t width) -> std::uint64_t {
    const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
    return s >= width ? 0 : (left ? a << s : a >> s) & mask;
  });
}

// Bool elements are 0 or 1, so the bitwise results are the logical ones.
void and_kernel(KernelContext& ctx) {
  bits_kernel(ctx, [](std::uint64_t a, std::uint64_t b, std::uint64_t) { return a & b; });
}
void or_kernel(KernelContext& ctx) {
  bits_kernel(ctx, [](std::uint64_t a, std::uint64_t b, std::uint64_t) { return a | b; });
}
void xor_kernel(KernelContext& ctx) {
  bits_kernel(ctx, [](std::uint64_t a, std::uint64_t b, std::uint64_t) { return a ^ b; });
}

KernelCost cost_bits(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 1);
}

constexpr OpSchema bitwise_schema(const char* type, InferFn infer) {
  return OpSchema{.type = type,
                  .category = OpCategory::kVector,
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .infer = infer,
                  .cost = cost_bits};
}

}  // namespace

NPUSCOPE_REGISTER_OP(bitwise_schema(kOp, infer_bit_shift));
NPUSCOPE_REGISTER_OP(bitwise_schema(kAnd, infer_bitwise<kAnd>));
NPUSCOPE_REGISTER_OP(bitwise_schema(kOr, infer_bitwise<kOr>));
NPUSCOPE_REGISTER_OP(bitwise_schema(kXor, infer_bitwise<kXor>));
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOp, bit_shift_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kAnd, and_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kOr, or_kernel);
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kXor, xor_kernel);

}  // namespace npuscope::emulator::kernels
