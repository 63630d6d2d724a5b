// HannWindow, HammingWindow, BlackmanWindow (ONNX opset 17, torch.hann_window & co.): input 0 is
// the scalar window length (it places the op on its device; the ONNX adapter copies its value into
// the attribute 'size'), 'periodic' (1: the window of length size + 1 without its last point, as
// for spectral analysis; 0: symmetric), 'dtype' (the output DType, f32 by default). Each is the
// generalised cosine window w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) with N = size
// (periodic) or size - 1 (symmetric; N = 1 for a window of length 1): Hann (0.5, 0.5, 0), Hamming
// (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08). Vector op; NPU in f32, CPU golden in f64.
#include <cmath>
#include <numbers>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

struct Coefficients {
  double a0, a1, a2;
};

template <const char* kName>
std::vector<TensorMeta> infer_window(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].numel() != 1) fail(kName, "input 0 (size) must hold one value, got shape " + shape_str(in[0].shape));
  if (!attrs.has("size")) fail(kName, "needs the 'size' attribute (the window length)");
  const std::int64_t size = attrs.get_int("size", 0);
  if (size < 0) fail(kName, "size must be >= 0, got " + std::to_string(size));
  const std::int64_t dtype = attrs.get_int("dtype", static_cast<std::int64_t>(DType::kF32));
  if (dtype < 0 || static_cast<std::size_t>(dtype) >= kNumDTypes || !is_floating(static_cast<DType>(dtype))) {
    fail(kName, "dtype " + std::to_string(dtype) + " is not a floating dtype");
  }
  return {{{size}, static_cast<DType>(dtype)}};
}

template <class T, Coefficients kC>
void window_kernel(KernelContext& ctx) {
  const TensorView& y = ctx.outputs[0];
  const bool periodic = ctx.attrs.get_int("periodic", 1) != 0;
  const std::int64_t n = y.numel;
  const auto span = static_cast<T>(periodic ? n : std::max<std::int64_t>(n - 1, 1));
  std::vector<T> w(static_cast<std::size_t>(n));
  const T two_pi = 2 * std::numbers::pi_v<T>;
  for (std::int64_t i = 0; i < n; ++i) {
    const T x = two_pi * static_cast<T>(i) / span;
    w[static_cast<std::size_t>(i)] =
        static_cast<T>(kC.a0) - static_cast<T>(kC.a1) * std::cos(x) + static_cast<T>(kC.a2) * std::cos(2 * x);
  }
  store<T>(y, w.data(), ctx);
}

KernelCost cost_window(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost(in, out, 8);
}

constexpr char kHann[] = "HannWindow", kHamming[] = "HammingWindow", kBlackman[] = "BlackmanWindow";
constexpr Coefficients kHannC{0.5, 0.5, 0}, kHammingC{25.0 / 46, 21.0 / 46, 0}, kBlackmanC{0.42, 0.5, 0.08};

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kHann, .category = OpCategory::kVector, .infer = infer_window<kHann>, .cost = cost_window});
NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kHamming, .category = OpCategory::kVector, .infer = infer_window<kHamming>, .cost = cost_window});
NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kBlackman, .category = OpCategory::kVector, .infer = infer_window<kBlackman>, .cost = cost_window});
NPUSCOPE_REGISTER_KERNEL(kHann, Backend::kNpu, window_kernel<float, kHannC>);
NPUSCOPE_REGISTER_KERNEL(kHann, Backend::kCpu, window_kernel<double, kHannC>);
NPUSCOPE_REGISTER_KERNEL(kHamming, Backend::kNpu, window_kernel<float, kHammingC>);
NPUSCOPE_REGISTER_KERNEL(kHamming, Backend::kCpu, window_kernel<double, kHammingC>);
NPUSCOPE_REGISTER_KERNEL(kBlackman, Backend::kNpu, window_kernel<float, kBlackmanC>);
NPUSCOPE_REGISTER_KERNEL(kBlackman, Backend::kCpu, window_kernel<double, kBlackmanC>);

}  // namespace npuscope::emulator::kernels
