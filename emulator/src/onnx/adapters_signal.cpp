// ONNX DFT and STFT (opset 17) as cube GEMMs (Note [ONNX adapters]).
//
// Note [DFT as a GEMM]
// An NPU has no FFT unit; a DFT of length N is a product with the N x M DFT matrix, which the cube
// runs at its full rate (Ascend's own DFT kernels do the same). Complex numbers are interleaved
// (re, im) pairs in the last dim, so the matrix is real, [N_in · C, M · 2] for C = 1 (real input)
// or 2 (complex): row (n, c), column (k, re / im) holds the re / im part of x[n]'s component c
// times e^(∓2πi·k·n/N) (the sign + and a factor 1/N for the inverse), computed in double with
// k·n taken mod N. Zero padding to dft_length contributes nothing and truncation drops rows, so
// both are in the matrix too; onesided keeps the first N/2 + 1 columns. DFT moves the signal axis
// next to the last dim (Transpose), flattens the rest (a view), runs one MatMul and moves the axis
// back. STFT takes its frames as a strided view of the signal (AsStrided: no copy per frame in the
// math, one vector copy on the device), folds the window into the matrix and runs one MatMul.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr double kMaxMatrix = 1 << 26;  // values of the DFT matrix (256 MiB in f32)

Tensor op1(const NodeContext& ctx, const char* type, std::vector<Tensor> in, const Attrs& attrs = {}) {
  return call_op1(type, std::move(in), attrs, ctx.call());
}

Tensor reshape(const NodeContext& ctx, const Tensor& t, Shape shape) {
  if (t.shape() == shape) return t;
  return op1(ctx, "Reshape", {t}, {{"shape", std::move(shape)}, {"allowzero", std::int64_t{1}}});
}

// The [n_in · c, m · 2] matrix of Note [DFT as a GEMM]; `window` (size n_in, or empty) scales row n.
Tensor dft_matrix(const NodeContext& ctx, std::int64_t n_in, std::int64_t c, std::int64_t n, std::int64_t m,
                  bool inverse, const std::vector<double>& window, DType dtype) {
  if (static_cast<double>(n_in) * static_cast<double>(c * m * 2) > kMaxMatrix) {
    ctx.fail("a DFT of " + std::to_string(n_in) + " -> " + std::to_string(m) +
             " points needs a DFT matrix larger than 2^26 values (it runs as a GEMM); use shorter transforms");
  }
  std::vector<float> w(static_cast<std::size_t>(n_in * c * m * 2), 0.0f);
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0, sign = inverse ? 1.0 : -1.0;
  for (std::int64_t i = 0; i < std::min(n_in, n); ++i) {
    const double s = scale * (window.empty() ? 1.0 : window[static_cast<std::size_t>(i)]);
    for (std::int64_t k = 0; k < m; ++k) {
      const double theta = sign * 2 * std::numbers::pi * static_cast<double>((k * i) % n) / static_cast<double>(n);
      const double re = std::cos(theta) * s, im = std::sin(theta) * s;
      float* row = w.data() + (i * c) * m * 2 + 2 * k;
      row[0] = static_cast<float>(re);
      row[1] = static_cast<float>(im);
      if (c == 2) {  // the imaginary component: i · (cos + i sin) = -sin + i cos
        row[m * 2] = static_cast<float>(-im);
        row[m * 2 + 1] = static_cast<float>(re);
      }
    }
  }
  return Tensor::from_floats(w, {n_in * c, m * 2}, dtype, ctx.device);
}

// A scalar integer input, or `fallback` when absent.
std::int64_t scalar_or(const NodeContext& ctx, std::size_t i, std::int64_t fallback, const char* what) {
  if (!ctx.has_input(i)) return fallback;
  const auto v = ctx.input_ints(i);
  if (v.size() != 1) ctx.fail(std::string(what) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

// The complex dim C (1 or 2) of a signal, checked.
std::int64_t complex_dim(const NodeContext& ctx, const Tensor& x, std::int64_t min_rank) {
  if (x.ndim() < min_rank || (x.shape().back() != 1 && x.shape().back() != 2)) {
    ctx.fail("input must have rank >= " + std::to_string(min_rank) +
             " and a last dim of 1 (real) or 2 (complex), got " + shape_str(x.shape()));
  }
  if (!is_floating(x.dtype())) ctx.fail("input must be floating, got " + std::string(dtype_name(x.dtype())));
  return x.shape().back();
}

std::vector<Tensor> dft(NodeContext& ctx) {
  if (ctx.opset >= 20) ctx.fail("opset 20's DFT (axis as an input) is not supported; opset 17-19 is");
  const Tensor& x = ctx.input(0);
  const std::int64_t c = complex_dim(ctx, x, 3), r = x.ndim();
  std::int64_t axis = ctx.attrs.get_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 1 || axis > r - 2) ctx.fail("axis must name a signal dim (1 to " + std::to_string(r - 2) + ")");
  const std::int64_t n_in = x.shape()[static_cast<std::size_t>(axis)];
  const std::int64_t n = scalar_or(ctx, 1, n_in, "dft_length");
  if (n < 1 || n > (std::int64_t{1} << 24)) ctx.fail("dft_length " + std::to_string(n) + " is outside [1, 2^24]");
  const bool inverse = ctx.attrs.get_int("inverse", 0) != 0, onesided = ctx.attrs.get_int("onesided", 0) != 0;
  const std::int64_t m = onesided ? n / 2 + 1 : n;
  // [.., axis, .., C] -> [others.., axis, C]
  Ints perm, back(static_cast<std::size_t>(r));
  for (std::int64_t d = 0; d < r - 1; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(r - 1);
  Tensor t = x;
  bool moved = false;
  for (std::int64_t d = 0; d < r; ++d) moved |= perm[static_cast<std::size_t>(d)] != d;
  if (moved) t = op1(ctx, "Transpose", {x}, {{"perm", perm}});
  Shape others(t.shape().begin(), t.shape().end() - 2);
  const std::int64_t rows = shape_numel(others);
  const Tensor w = dft_matrix(ctx, n_in, c, n, m, inverse, {}, x.dtype());
  Tensor y = op1(ctx, "MatMul", {reshape(ctx, t, {rows, n_in * c}), w});
  others.insert(others.end(), {m, 2});
  y = reshape(ctx, y, others);
  if (!moved) return {y};
  for (std::int64_t d = 0; d < r; ++d) back[static_cast<std::size_t>(perm[static_cast<std::size_t>(d)])] = d;
  return {op1(ctx, "Transpose", {y}, {{"perm", back}})};
}

std::vector<Tensor> stft(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::int64_t c = complex_dim(ctx, x, 3);
  if (x.ndim() != 3) ctx.fail("signal must be [batch, length, 1 or 2], got " + shape_str(x.shape()));
  const std::int64_t batch = x.shape()[0], len = x.shape()[1];
  const std::int64_t step = scalar_or(ctx, 1, 0, "frame_step");
  std::vector<double> window = ctx.has_input(2) ? ctx.input_floats(2) : std::vector<double>{};
  const std::int64_t frame = scalar_or(ctx, 3, static_cast<std::int64_t>(window.size()), "frame_length");
  if (step < 1) ctx.fail("frame_step must be >= 1, got " + std::to_string(step));
  if (frame < 1 || frame > len)
    ctx.fail("frame_length " + std::to_string(frame) + " is outside [1, " + std::to_string(len) + "]");
  if (!window.empty() && static_cast<std::int64_t>(window.size()) != frame) {
    ctx.fail("window has " + std::to_string(window.size()) + " values for frame_length " + std::to_string(frame));
  }
  const bool onesided = ctx.attrs.get_int("onesided", 1) != 0;
  const std::int64_t frames = (len - frame) / step + 1, m = onesided ? frame / 2 + 1 : frame;
  const Tensor flat = reshape(ctx, x, {x.numel()});
  const Attrs view{{"size", Ints{batch, frames, frame * c}},
                   {"stride", Ints{len * c, step * c, 1}},
                   {"storage_offset", std::int64_t{0}}};
  const Tensor framed = op1(ctx, "AsStrided", {flat}, view);
  const Tensor w = dft_matrix(ctx, frame, c, frame, m, false, window, x.dtype());
  const Tensor y = op1(ctx, "MatMul", {framed, w});
  return {reshape(ctx, y, {batch, frames, m, 2})};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("DFT", dft);
NPUSCOPE_REGISTER_ONNX_ADAPTER("STFT", stft);

}  // namespace npuscope::emulator::onnx_import
