// HannWindow, HammingWindow, BlackmanWindow (ONNX opset 17, torch.hann_window & co.): input 0 is
// the scalar window length (it places the op on its device; the ONNX adapter copies its value into
// the attribute 'size'), 'periodic' (1: the window of length size + 1 without its last point, as
// for spectral analysis; 0: symmetric), 'dtype' (the output DType, f32 by default). Each is the
// generalised cosine window w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) with N = size
// (periodic) or size - 1 (symmetric; N = 1 for a window of length 1): Hann (0.5, 0.5, 0), Hamming
// (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08). Vector op; NPU in f32, CPU golden in f64.
//
// MelWeightMatrix (opset 17, the mel filter bank of audio front ends): input 0 is num_mel_bins (it
// places the op); the ONNX adapter copies the five scalar inputs into the attributes num_mel_bins,
// dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz; 'dtype' as above. Output
// [dft_length / 2 + 1, num_mel_bins]: triangles between num_mel_bins + 2 points spaced evenly on
// the mel scale (2595 log10(1 + f / 700)), mapped to spectrogram bins floor((dft_length + 1) · f /
// sample_rate), as the ONNX reference computes them (a point beyond the last bin writes nothing).
// Index arithmetic and ratios of small integers: computed once in double for both backends.
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
constexpr char kMel[] = "MelWeightMatrix";

std::vector<TensorMeta> infer_mel(std::span<const TensorMeta> in, const Attrs& attrs) {
  const std::int64_t mels = attrs.get_int("num_mel_bins", 0), dft = attrs.get_int("dft_length", 0);
  const std::int64_t rate = attrs.get_int("sample_rate", 0);
  if (mels < 1 || dft < 1 || rate < 1) {
    fail(kMel, "num_mel_bins, dft_length and sample_rate must be >= 1, got " + std::to_string(mels) + ", " +
                   std::to_string(dft) + ", " + std::to_string(rate));
  }
  const double lo = attrs.get_float("lower_edge_hertz", 0), hi = attrs.get_float("upper_edge_hertz", 0);
  if (!(lo >= 0 && hi >= lo && std::isfinite(hi))) {
    fail(kMel,
         "need 0 <= lower_edge_hertz <= upper_edge_hertz, got " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  std::vector<TensorMeta> out = infer_window<kMel>(in, Attrs{{"size", mels}, {"dtype", attrs.get_int("dtype", 0)}});
  out[0].shape = {checked_add(dft / 2, 1, kMel, "dft_length / 2 + 1"), mels};
  return out;
}

void mel_kernel(KernelContext& ctx) {
  const Attrs& a = ctx.attrs;
  const std::int64_t mels = a.get_int("num_mel_bins", 1), dft = a.get_int("dft_length", 1);
  const auto rate = static_cast<double>(a.get_int("sample_rate", 1));
  const std::int64_t bins = dft / 2 + 1;
  auto mel = [](double f) { return 2595 * std::log10(1 + f / 700); };
  const double lo = mel(a.get_float("lower_edge_hertz", 0)), hi = mel(a.get_float("upper_edge_hertz", 0));
  const double step = (hi - lo) / static_cast<double>(mels + 2);
  std::vector<std::int64_t> point(static_cast<std::size_t>(mels + 2));
  for (std::int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo) / 2595) - 1);
    point[static_cast<std::size_t>(i)] =
        static_cast<std::int64_t>(std::floor(static_cast<double>(dft + 1) * hz / rate));
  }
  std::vector<double> w(static_cast<std::size_t>(bins * mels), 0.0);
  auto set = [&](std::int64_t j, std::int64_t i, double v) {
    if (j >= 0 && j < bins) w[static_cast<std::size_t>(j * mels + i)] = v;
  };
  for (std::int64_t i = 0; i < mels; ++i) {
    const std::int64_t left = point[static_cast<std::size_t>(i)], centre = point[static_cast<std::size_t>(i + 1)],
                       right = point[static_cast<std::size_t>(i + 2)];
    if (centre == left) set(centre, i, 1);
    for (std::int64_t j = left; centre > left && j <= centre; ++j)
      set(j, i, static_cast<double>(j - left) / static_cast<double>(centre - left));
    for (std::int64_t j = centre; j < right; ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - centre));
  }
  store<double>(ctx.outputs[0], w.data(), ctx);
}
constexpr Coefficients kHannC{0.5, 0.5, 0}, kHammingC{25.0 / 46, 21.0 / 46, 0}, kBlackmanC{0.42, 0.5, 0.08};

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kHann, .category = OpCategory::kVector, .infer = infer_window<kHann>, .cost = cost_window});
NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kHamming, .category = OpCategory::kVector, .infer = infer_window<kHamming>, .cost = cost_window});
NPUSCOPE_REGISTER_OP(OpSchema{
    .type = kBlackman, .category = OpCategory::kVector, .infer = infer_window<kBlackman>, .cost = cost_window});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kMel, .category = OpCategory::kVector, .infer = infer_mel, .cost = cost_window});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kMel, mel_kernel);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHann, window_kernel, kHannC);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kHamming, window_kernel, kHammingC);
NPUSCOPE_REGISTER_FLOAT_KERNELS(kBlackman, window_kernel, kBlackmanC);

}  // namespace npuscope::emulator::kernels
