// RNN (ONNX's simple recurrent layer): H' = f(X·Wi + H·Ri + Wbi + Rbi), f = Tanh by default. LSTM
// and GRU live in rnn_lstm_ops.cpp and rnn_gru_ops.cpp; what they share (geometry, the input
// projection, sequence lengths, layouts, activations, cost) in rnn_util.h: see Note [Recurrent ops].
#include "rnn_util.h"

namespace npuscope::emulator::kernels {
namespace {

template <class T>
void rnn_direction(RnnState<T>& s, const Activation& f, const T* xw, const T* r, std::int64_t d, T* z) {
  const RnnGeom& g = s.g;
  const std::int64_t B = g.batch, H = g.hidden;
  T* h = s.h.data() + d * B * H;
  for (std::int64_t step = 0; step < g.seq; ++step) {
    const std::int64_t t = g.reversed(d) ? g.seq - 1 - step : step;
    rnn_step_gemm(g, h, r, d, 0, H, z);
    for (std::int64_t b = 0; b < B; ++b) {
      if (t >= s.lens[static_cast<std::size_t>(b)]) continue;  // past this sequence: state kept, Y zero
      const T *zb = z + b * H, *xb = xw + (t * B + b) * H;
      T* hb = h + b * H;
      for (std::int64_t j = 0; j < H; ++j) hb[j] = activate(f, rnn_clip(s, zb[j] + xb[j]));
      rnn_round_h(s, hb, H);
      std::copy(hb, hb + H, s.y.data() + ((t * g.dirs + d) * B + b) * H);
    }
  }
}

template <class T>
void rnn_kernel(KernelContext& ctx) {
  const RnnGeom g = rnn_geom(ctx, RnnKind::kRnn);
  auto [wb, rb] = rnn_biases<T>(ctx, g);
  for (std::size_t i = 0; i < wb.size(); ++i) wb[i] += rb[i];
  RnnState<T> s = rnn_prepare<T>(ctx, g, wb, false);
  const GemmOperand<T> r(ctx.inputs[kRnnR], ctx);
  const std::vector<Activation> acts = rnn_activations(ctx.attrs, g);
  std::vector<T> z(static_cast<std::size_t>(g.batch * g.hidden));
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    rnn_direction(s, acts[static_cast<std::size_t>(d)], s.xw.data() + d * g.seq * g.batch * g.hidden, r.data(), d,
                  z.data());
  }
  rnn_finish(ctx, s, false);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "RNN",
                              .category = OpCategory::kCube,
                              .min_inputs = 3,
                              .max_inputs = 6,
                              .infer = infer_recurrent<RnnKind::kRnn>,
                              .cost = cost_recurrent<RnnKind::kRnn>});
NPUSCOPE_REGISTER_CUBE_KERNELS("RNN", rnn_kernel, rnn_supports);

}  // namespace npuscope::emulator::kernels
