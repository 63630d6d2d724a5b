// GRU (ONNX): gates in W/R/B order z, r, h.
//   z = f(X·Wz + H·Rz + Wbz + Rbz)      r = f(X·Wr + H·Rr + Wbr + Rbr)
//   h = g(X·Wh + (r ⊙ H)·Rh + Rbh + Wbh)          linear_before_reset = 0 (default)
//   h = g(X·Wh + r ⊙ (H·Rh + Rbh) + Wbh)          linear_before_reset != 0
//   H' = (1 - z) ⊙ h + z ⊙ H
// The default form needs r before its GEMM: each step runs H·[Rz; Rr], the z/r gates, then
// (r ⊙ H)·Rh. See Note [Recurrent ops], Note [Recurrent numerics] and Note [Recurrent cost].
#include "rnn_util.h"

namespace npuscope::emulator::kernels {
namespace {

template <class T>
struct GruDir {
  const T* xw;   // [T·B, 3H]
  const T* rbh;  // [H] recurrent bias of h (used only with linear_before_reset)
  const Activation *f, *g;
  bool lbr;  // linear_before_reset
};

// Scratch of one step: the recurrent GEMM's output (z, r [, h] per row), r ⊙ H and its GEMM.
template <class T>
struct GruScratch {
  std::vector<T> zr, rh, hr;
};

// Pass 1 for row b: z and r activated in place; r ⊙ H for the default form.
template <class T>
void gru_gates(const RnnState<T>& s, const GruDir<T>& dir, const T* xb, T* zb, const T* hb, T* rhb) {
  const std::int64_t H = s.g.hidden;
  for (std::int64_t j = 0; j < 2 * H; ++j) zb[j] = activate(*dir.f, rnn_clip(s, zb[j] + xb[j]));
  if (!dir.lbr) {
    for (std::int64_t j = 0; j < H; ++j) rhb[j] = zb[H + j] * hb[j];
  }
}

// Pass 2 for row b: the candidate and the new state.
template <class T>
void gru_update(const RnnState<T>& s, const GruDir<T>& dir, const T* xb, const T* zb, const T* hrb, T* hb) {
  const std::int64_t H = s.g.hidden;
  for (std::int64_t j = 0; j < H; ++j) {
    const T pre = dir.lbr ? xb[2 * H + j] + zb[H + j] * (zb[2 * H + j] + dir.rbh[j]) : xb[2 * H + j] + hrb[j];
    const T cand = activate(*dir.g, rnn_clip(s, pre));
    hb[j] = (T(1) - zb[j]) * cand + zb[j] * hb[j];
  }
}

template <class T>
void gru_direction(RnnState<T>& s, const GruDir<T>& dir, const T* r, std::int64_t d, GruScratch<T>& w) {
  const RnnGeom& g = s.g;
  const std::int64_t B = g.batch, H = g.hidden, gh = g.gh(), ld = dir.lbr ? 3 * H : 2 * H;
  T* h = s.h.data() + d * B * H;
  for (std::int64_t step = 0; step < g.seq; ++step) {
    const std::int64_t t = g.reversed(d) ? g.seq - 1 - step : step;
    rnn_step_gemm(g, h, r, d, 0, ld, w.zr.data());
    auto valid = [&](std::int64_t b) { return t < s.lens[static_cast<std::size_t>(b)]; };
    for (std::int64_t b = 0; b < B; ++b) {
      if (valid(b)) gru_gates(s, dir, dir.xw + (t * B + b) * gh, w.zr.data() + b * ld, h + b * H, w.rh.data() + b * H);
    }
    if (!dir.lbr) rnn_step_gemm(g, w.rh.data(), r, d, 2 * H, H, w.hr.data());
    for (std::int64_t b = 0; b < B; ++b) {
      if (!valid(b)) continue;  // past this sequence: state kept, Y zero
      gru_update(s, dir, dir.xw + (t * B + b) * gh, w.zr.data() + b * ld, w.hr.data() + b * H, h + b * H);
      rnn_round_h(s, h + b * H, H);
      std::copy(h + b * H, h + (b + 1) * H, s.y.data() + ((t * g.dirs + d) * B + b) * H);
    }
  }
}

template <class T>
void gru_kernel(KernelContext& ctx) {
  const RnnGeom g = rnn_geom(ctx, RnnKind::kGru);
  const bool lbr = ctx.attrs.get_int("linear_before_reset", 0) != 0;
  const std::int64_t H = g.hidden, gh = g.gh();
  auto [wb, rb] = rnn_biases<T>(ctx, g);
  // Rbh joins the projection's bias unless it sits inside r ⊙ (...).
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    for (std::int64_t j = 0; j < (lbr ? 2 * H : gh); ++j) wb[d * gh + j] += rb[d * gh + j];
  }
  RnnState<T> s = rnn_prepare<T>(ctx, g, wb, false);
  const GemmOperand<T> r(ctx.inputs[kRnnR], ctx);
  const std::vector<Activation> acts = rnn_activations(ctx.attrs, g);
  const auto bh = static_cast<std::size_t>(g.batch * H);
  GruScratch<T> w{std::vector<T>(bh * 3), std::vector<T>(bh, T(0)), std::vector<T>(bh)};
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    const Activation* a = acts.data() + d * 2;
    const GruDir<T> dir{s.xw.data() + d * g.seq * g.batch * gh, rb.data() + d * gh + 2 * H, a, a + 1, lbr};
    gru_direction(s, dir, r.data(), d, w);
  }
  rnn_finish(ctx, s, false);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = "GRU",
                              .category = OpCategory::kCube,
                              .min_inputs = 3,
                              .max_inputs = 6,
                              .infer = infer_recurrent<RnnKind::kGru>,
                              .cost = cost_recurrent<RnnKind::kGru>});
NPUSCOPE_REGISTER_CUBE_KERNELS("GRU", gru_kernel, rnn_supports);

}  // namespace npuscope::emulator::kernels
