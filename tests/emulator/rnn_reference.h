// An f64 reference of ONNX's LSTM, GRU and RNN for the recurrent op tests, written straight from the
// operator spec's equations and independent of the kernels' structure: one sequence at a time,
// plain loops, the steps of a sequence from 0 to its length - 1 (or back), layout 0 only (the tests
// transpose for layout 1).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace npuscope::emulator::testing {

// One test case: sizes and every option the ops take.
struct RnnCase {
  std::string op = "LSTM";  // LSTM, GRU or RNN
  std::int64_t seq = 3, batch = 2, input = 3, hidden = 2;
  std::string direction = "forward";
  int layout = 0;
  bool bias = true, h0 = false, c0 = false, peepholes = false;
  std::vector<std::int64_t> lens;  // empty: no sequence_lens input
  int input_forget = 0, linear_before_reset = 0;
  double clip = 0;
  std::vector<std::string> activations;
  std::vector<double> alpha, beta;

  std::int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  std::int64_t gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
};

// The operands, layout 0: x [T, B, I], w [D, G·H, I], r [D, G·H, H], b [D, 2·G·H],
// h0 / c0 [D, B, H], p [D, 3H].
struct RnnData {
  std::vector<double> x, w, r, b, h0, c0, p;
};

// Deterministic values in [-scale, scale].
inline std::vector<double> rnn_fill(std::int64_t n, int seed, double scale = 0.6) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = scale * std::sin(1.3 * seed + 0.71 * i + 0.1 * i * i);
  return v;
}

inline RnnData rnn_data(const RnnCase& c) {
  const std::int64_t D = c.dirs(), gh = c.gates() * c.hidden;
  return {rnn_fill(c.seq * c.batch * c.input, 1, 1.0),
          rnn_fill(D * gh * c.input, 2),
          rnn_fill(D * gh * c.hidden, 3),
          rnn_fill(D * 2 * gh, 4, 0.3),
          rnn_fill(D * c.batch * c.hidden, 5),
          rnn_fill(D * c.batch * c.hidden, 6),
          rnn_fill(D * 3 * c.hidden, 7, 0.5)};
}

using RnnFn = std::function<double(double)>;

// The activation functions of the case, per direction in spec order, alpha/beta taken in order by
// the functions that have them (defaults from ONNX Runtime's).
inline std::vector<RnnFn> rnn_ref_acts(const RnnCase& c) {
  std::vector<std::string> names = c.activations;
  if (names.empty()) {
    const std::vector<std::string> per = c.op == "LSTM"  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                         : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                         : std::vector<std::string>{"Tanh"};
    for (std::int64_t d = 0; d < c.dirs(); ++d) names.insert(names.end(), per.begin(), per.end());
  }
  std::size_t ia = 0, ib = 0;
  auto alpha = [&](double dflt) { return ia < c.alpha.size() ? c.alpha[ia++] : dflt; };
  auto beta = [&](double dflt) { return ib < c.beta.size() ? c.beta[ib++] : dflt; };
  std::vector<RnnFn> out;
  for (const std::string& n : names) {
    if (n == "Sigmoid") out.push_back([](double x) { return 1 / (1 + std::exp(-x)); });
    if (n == "Tanh") out.push_back([](double x) { return std::tanh(x); });
    if (n == "Relu") out.push_back([](double x) { return std::max(0.0, x); });
    if (n == "Softsign") out.push_back([](double x) { return x / (1 + std::fabs(x)); });
    if (n == "Softplus") out.push_back([](double x) { return std::log(1 + std::exp(x)); });
    if (n == "LeakyRelu") out.push_back([a = alpha(0.01)](double x) { return x >= 0 ? x : a * x; });
    if (n == "ThresholdedRelu") out.push_back([a = alpha(1.0)](double x) { return x >= a ? x : 0; });
    if (n == "Elu") out.push_back([a = alpha(1.0)](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); });
    if (n == "Affine") {
      const double a = alpha(1.0), b = beta(0.0);
      out.push_back([a, b](double x) { return a * x + b; });
    }
    if (n == "ScaledTanh") {
      const double a = alpha(1.0), b = beta(1.0);
      out.push_back([a, b](double x) { return a * std::tanh(b * x); });
    }
    if (n == "HardSigmoid") {
      const double a = alpha(0.2), b = beta(0.5);
      out.push_back([a, b](double x) { return std::min(1.0, std::max(0.0, a * x + b)); });
    }
  }
  return out;
}

// Outputs, layout 0: y [T, D, B, H], yh / yc [D, B, H].
struct RnnOut {
  std::vector<double> y, yh, yc;
};

// The pre-activation of gate `g`, unit j: X_t · W_g^T + H · R_g^T + Wb_g + Rb_g (rb: with Rb).
struct RnnGateSum {
  const RnnCase& c;
  const RnnData& v;
  std::int64_t d, b, t;
  double operator()(std::int64_t g, std::int64_t j, const std::vector<double>& h, bool rb = true) const {
    const std::int64_t H = c.hidden, I = c.input, gh = c.gates() * H, row = d * gh + g * H + j;
    double s = 0;
    for (std::int64_t k = 0; k < I; ++k)
      s += v.x[static_cast<std::size_t>((t * c.batch + b) * I + k)] * v.w[static_cast<std::size_t>(row * I + k)];
    for (std::int64_t k = 0; k < H; ++k)
      s += h[static_cast<std::size_t>(k)] * v.r[static_cast<std::size_t>(row * H + k)];
    if (c.bias)
      s += v.b[static_cast<std::size_t>(d * 2 * gh + g * H + j)] +
           (rb ? v.b[static_cast<std::size_t>(d * 2 * gh + gh + g * H + j)] : 0);
    return s;
  }
};

// One step of sequence b in direction d at time t: updates h (and c).
inline void rnn_ref_step(const RnnCase& c, const RnnData& v, const std::vector<RnnFn>& act, std::int64_t d,
                         std::int64_t b, std::int64_t t, std::vector<double>& h, std::vector<double>& cs) {
  const std::int64_t H = c.hidden;
  auto clip = [&](double x) { return c.clip > 0 ? std::clamp(x, -c.clip, c.clip) : x; };
  const RnnGateSum sum{c, v, d, b, t};
  std::vector<double> nh(static_cast<std::size_t>(H));
  for (std::int64_t j = 0; j < H; ++j) {
    const auto u = static_cast<std::size_t>(j);
    if (c.op == "RNN") {
      nh[u] = act[static_cast<std::size_t>(d)](clip(sum(0, j, h)));
    } else if (c.op == "GRU") {
      const auto& f = act[static_cast<std::size_t>(d * 2)];
      const auto& g = act[static_cast<std::size_t>(d * 2 + 1)];
      const double z = f(clip(sum(0, j, h))), r = f(clip(sum(1, j, h)));
      double pre;
      if (c.linear_before_reset != 0) {
        const double hr = sum(2, j, h) - sum(2, j, std::vector<double>(static_cast<std::size_t>(H), 0.0));
        const double rbh = c.bias ? v.b[static_cast<std::size_t>(d * 6 * H + 3 * H + 2 * H + j)] : 0;
        pre = sum(2, j, std::vector<double>(static_cast<std::size_t>(H), 0.0), false) + r * (hr + rbh);
      } else {
        std::vector<double> rh(static_cast<std::size_t>(H));
        for (std::int64_t k = 0; k < H; ++k)
          rh[static_cast<std::size_t>(k)] = f(clip(sum(1, k, h))) * h[static_cast<std::size_t>(k)];
        pre = sum(2, j, rh);
      }
      nh[u] = (1 - z) * g(clip(pre)) + z * h[u];
    } else {
      const auto& f = act[static_cast<std::size_t>(d * 3)];
      const auto& g = act[static_cast<std::size_t>(d * 3 + 1)];
      const auto& ha = act[static_cast<std::size_t>(d * 3 + 2)];
      auto peep = [&](int k) { return c.peepholes ? v.p[static_cast<std::size_t>(d * 3 * H + k * H + j)] : 0.0; };
      const double i = f(clip(sum(0, j, h) + peep(0) * cs[u]));
      const double fg = c.input_forget != 0 ? 1 - i : f(clip(sum(2, j, h) + peep(2) * cs[u]));
      const double cc = g(clip(sum(3, j, h)));
      cs[u] = fg * cs[u] + i * cc;
      const double o = f(clip(sum(1, j, h) + peep(1) * cs[u]));
      nh[u] = o * ha(cs[u]);  // clip bounds the gates' inputs, not C' (as ONNX Runtime)
    }
  }
  h = nh;
}

inline RnnOut rnn_reference(const RnnCase& c, const RnnData& v) {
  const std::int64_t D = c.dirs(), B = c.batch, H = c.hidden, T = c.seq;
  const std::vector<RnnFn> act = rnn_ref_acts(c);
  RnnOut out{std::vector<double>(static_cast<std::size_t>(T * D * B * H), 0.0),
             std::vector<double>(static_cast<std::size_t>(D * B * H)),
             std::vector<double>(static_cast<std::size_t>(D * B * H))};
  for (std::int64_t d = 0; d < D; ++d) {
    const bool rev = c.direction == "reverse" || d == 1;
    for (std::int64_t b = 0; b < B; ++b) {
      const std::size_t s0 = static_cast<std::size_t>((d * B + b) * H);
      std::vector<double> h(static_cast<std::size_t>(H), 0.0), cs(static_cast<std::size_t>(H), 0.0);
      if (c.h0)
        std::copy(v.h0.begin() + static_cast<std::ptrdiff_t>(s0), v.h0.begin() + static_cast<std::ptrdiff_t>(s0 + H),
                  h.begin());
      if (c.c0)
        std::copy(v.c0.begin() + static_cast<std::ptrdiff_t>(s0), v.c0.begin() + static_cast<std::ptrdiff_t>(s0 + H),
                  cs.begin());
      const std::int64_t len = c.lens.empty() ? T : c.lens[static_cast<std::size_t>(b)];
      for (std::int64_t s = 0; s < len; ++s) {
        const std::int64_t t = rev ? len - 1 - s : s;
        rnn_ref_step(c, v, act, d, b, t, h, cs);
        std::copy(h.begin(), h.end(), out.y.begin() + static_cast<std::ptrdiff_t>(((t * D + d) * B + b) * H));
      }
      if (len == 0) {  // ONNX Runtime's final states for an empty sequence
        h.assign(h.size(), 0.0);
        cs.assign(cs.size(), 0.0);
      }
      std::copy(h.begin(), h.end(), out.yh.begin() + static_cast<std::ptrdiff_t>(s0));
      std::copy(cs.begin(), cs.end(), out.yc.begin() + static_cast<std::ptrdiff_t>(s0));
    }
  }
  return out;
}

}  // namespace npuscope::emulator::testing
