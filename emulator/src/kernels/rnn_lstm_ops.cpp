// LSTM (ONNX): gates in W/R/B order i, o, f, c; peepholes P [D, 3H] in order i, o, f.
//   i = f(X·Wi + H·Ri + Pi ⊙ C + Wbi + Rbi)      f = f(X·Wf + H·Rf + Pf ⊙ C + Wbf + Rbf)
//   c = g(X·Wc + H·Rc + Wbc + Rbc)               C' = f ⊙ C + i ⊙ c
//   o = f(X·Wo + H·Ro + Po ⊙ C' + Wbo + Rbo)     H' = o ⊙ h(C')
// input_forget couples the gates (f = 1 - i); clip bounds the gates' inputs, not C' (as ONNX
// Runtime does). See Note [Recurrent ops], Note [Recurrent numerics] and Note [Recurrent cost] in
// rnn_util.h.
#include "rnn_util.h"

namespace npuscope::emulator::kernels {
namespace {

// What one direction's steps read besides the state.
template <class T>
struct LstmDir {
  const T* xw;  // [T·B, 4H]
  const T* p;   // [3H] peepholes (zeros when absent)
  const Activation *f, *g, *h;
  bool couple;  // input_forget
};

// One row's gates -> its new cell and hidden state. `z` holds the row's pre-activations.
template <class T>
void lstm_row(const RnnState<T>& s, const LstmDir<T>& dir, T* z, T* c, T* h) {
  const std::int64_t H = s.g.hidden;
  const T *pi = dir.p, *po = dir.p + H, *pf = dir.p + 2 * H;
  for (std::int64_t j = 0; j < H; ++j) {
    const T i = activate(*dir.f, rnn_clip(s, z[j] + pi[j] * c[j]));
    const T f = dir.couple ? T(1) - i : activate(*dir.f, rnn_clip(s, z[2 * H + j] + pf[j] * c[j]));
    const T cand = activate(*dir.g, rnn_clip(s, z[3 * H + j]));
    c[j] = f * c[j] + i * cand;
    const T o = activate(*dir.f, rnn_clip(s, z[H + j] + po[j] * c[j]));
    h[j] = o * activate(*dir.h, c[j]);
  }
}

// All steps of direction d.
template <class T>
void lstm_direction(RnnState<T>& s, const LstmDir<T>& dir, const T* r, std::int64_t d, T* z) {
  const RnnGeom& g = s.g;
  const std::int64_t B = g.batch, H = g.hidden, gh = g.gh();
  T *h = s.h.data() + d * B * H, *c = s.c.data() + d * B * H;
  for (std::int64_t step = 0; step < g.seq; ++step) {
    const std::int64_t t = g.reversed(d) ? g.seq - 1 - step : step;
    rnn_step_gemm(g, h, r, d, 0, gh, z);
    for (std::int64_t b = 0; b < B; ++b) {
      if (t >= s.lens[static_cast<std::size_t>(b)]) continue;  // past this sequence: state kept, Y zero
      T* zb = z + b * gh;
      const T* xb = dir.xw + (t * B + b) * gh;
      for (std::int64_t j = 0; j < gh; ++j) zb[j] += xb[j];
      lstm_row(s, dir, zb, c + b * H, h + b * H);
      rnn_round_h(s, h + b * H, H);
      std::copy(h + b * H, h + (b + 1) * H, s.y.data() + ((t * g.dirs + d) * B + b) * H);
    }
  }
}

template <class T>
void lstm_kernel(KernelContext& ctx) {
  const RnnGeom g = rnn_geom(ctx, RnnKind::kLstm);
  auto [wb, rb] = rnn_biases<T>(ctx, g);
  for (std::size_t i = 0; i < wb.size(); ++i) wb[i] += rb[i];
  RnnState<T> s = rnn_prepare<T>(ctx, g, wb, true);
  const GemmOperand<T> r(ctx.inputs[kRnnR], ctx);
  std::vector<T> p(static_cast<std::size_t>(g.dirs * 3 * g.hidden), T(0));
  if (ctx.inputs.size() > kRnnP && ctx.inputs[kRnnP].data != nullptr) load_into(ctx.inputs[kRnnP], ctx, p.data());
  const std::vector<Activation> acts = rnn_activations(ctx.attrs, g);
  const bool couple = ctx.attrs.get_int("input_forget", 0) != 0;
  std::vector<T> z(static_cast<std::size_t>(g.batch * g.gh()));
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    const Activation* a = acts.data() + d * 3;
    const LstmDir<T> dir{
        s.xw.data() + d * g.seq * g.batch * g.gh(), p.data() + d * 3 * g.hidden, a, a + 1, a + 2, couple};
    lstm_direction(s, dir, r.data(), d, z.data());
  }
  rnn_finish(ctx, s, true);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "LSTM",
                              .category = OpCategory::kCube,
                              .min_inputs = 3,
                              .max_inputs = 8,
                              .infer = infer_recurrent<RnnKind::kLstm>,
                              .cost = cost_recurrent<RnnKind::kLstm>});
NPUSCOPE_REGISTER_CUBE_KERNELS("LSTM", lstm_kernel, rnn_supports);

}  // namespace npuscope::emulator::kernels
