// CANN's rounding divisions, with numpy broadcasting, floating inputs (what torch_npu runs for
// torch.remainder and torch.div's rounding modes; ONNX has no such ops):
//   FloorMod     a - b · floor(a / b), the sign of the divisor (torch.remainder, Python's %)
//   FloorDiv     floor(a / b)                                     (div rounding_mode='floor', //)
//   TruncateDiv  trunc(a / b)                                     (div rounding_mode='trunc')
// computed as PyTorch's CPU kernels compute them, from fmod, so that a quotient that is an integer in
// exact arithmetic is not rounded to its neighbour (7.0 // 0.7 is 9, not 10). NPU: in f32, rounded
// to the output dtype; CPU golden: in f64. A zero divisor gives what IEEE division gives.
#include <cmath>
#include <type_traits>

#include "elementwise_ext_util.h"

namespace npuscope::emulator::kernels {
namespace {

using ext::cost_flops;
using ext::elementwise_schema;

constexpr char kFloorMod[] = "FloorMod", kFloorDiv[] = "FloorDiv", kTruncateDiv[] = "TruncateDiv";

template <const char* Op>
std::vector<TensorMeta> infer_float_binary(std::span<const TensorMeta> in, const Attrs&) {
  const Shape shape = ext::broadcast_all(in, Op);
  if (!is_floating(in[0].dtype)) {
    fail(Op, std::string("inputs must be floating, got ") + std::string(dtype_name(in[0].dtype)));
  }
  return {{shape, in[0].dtype}};
}

template <class E>
E floor_mod(E a, E b) {
  E r = std::fmod(a, b);
  if (r != 0 && ((b < 0) != (r < 0))) r += b;
  return r;
}

template <class E>
E floor_div(E a, E b) {
  if (b == 0) return a / b;
  const E mod = std::fmod(a, b);
  E div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= E(1);
  if (div == 0) return std::copysign(E(0), a / b);
  E floored = std::floor(div);
  if (div - floored > E(0.5)) floored += E(1);
  return floored;
}

// F in floating point; infer admits no integer inputs, so the integer path is never taken.
template <class T, class F>
void float_binary_kernel(KernelContext& c, F f) {
  ext::numeric_binary_kernel<T>(c, [f](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      return a;
    } else {
      return f(a, b);
    }
  });
}

template <class T>
void floor_mod_kernel(KernelContext& c) {
  float_binary_kernel<T>(c, [](auto a, auto b) { return floor_mod(a, b); });
}

template <class T>
void floor_div_kernel(KernelContext& c) {
  float_binary_kernel<T>(c, [](auto a, auto b) { return floor_div(a, b); });
}

template <class T>
void truncate_div_kernel(KernelContext& c) {
  float_binary_kernel<T>(c, [](auto a, auto b) { return std::trunc(a / b); });
}

}  // namespace

NPUSCOPE_REGISTER_OP(elementwise_schema(kFloorMod, 2, infer_float_binary<kFloorMod>, cost_flops<6>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kFloorDiv, 2, infer_float_binary<kFloorDiv>, cost_flops<8>));
NPUSCOPE_REGISTER_OP(elementwise_schema(kTruncateDiv, 2, infer_float_binary<kTruncateDiv>, cost_flops<5>));
NPUSCOPE_REGISTER_FLOAT_KERNELS(kFloorMod, floor_mod_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kFloorDiv, floor_div_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kTruncateDiv, truncate_div_kernel);

}  // namespace npuscope::emulator::kernels
