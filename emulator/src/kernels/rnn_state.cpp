// The parts every recurrent kernel shares (see rnn_util.h): loading X and the states time-major, the
// input projection GEMM, the sequence lengths, and storing Y, Y_h, Y_c in the op's layout.
#include <algorithm>
#include <string>

#include "rnn_util.h"

namespace npuscope::emulator::kernels {
namespace {

// [a, b, c] -> [b, a, c].
template <class T>
void swap_leading(const T* src, std::int64_t a, std::int64_t b, std::int64_t c, T* dst) {
  for (std::int64_t i = 0; i < a; ++i) {
    for (std::int64_t j = 0; j < b; ++j)
      std::copy(src + (i * b + j) * c, src + (i * b + j + 1) * c, dst + (j * a + i) * c);
  }
}

// A state input [D, B, H] (layout 1: [B, D, H]) as [D, B, H]; zeros when absent.
template <class T>
std::vector<T> load_state(const KernelContext& ctx, std::size_t i, const RnnGeom& g) {
  std::vector<T> out(static_cast<std::size_t>(g.dirs * g.batch * g.hidden), T(0));
  if (ctx.inputs.size() <= i || ctx.inputs[i].data == nullptr) return out;
  std::vector<T> raw = load<T>(ctx.inputs[i], ctx);
  if (g.batch_major) {
    swap_leading(raw.data(), g.batch, g.dirs, g.hidden, out.data());
  } else {
    out = std::move(raw);
  }
  return out;
}

// sequence_lens, or seq for every sequence. A length outside [0, seq] is a kernel fault (Note
// [Kernel faults]), clamped so that the kernel stays in bounds.
std::vector<std::int64_t> load_lens(KernelContext& ctx, const RnnGeom& g) {
  std::vector<std::int64_t> lens(static_cast<std::size_t>(g.batch), g.seq);
  if (ctx.inputs.size() <= kRnnLens || ctx.inputs[kRnnLens].data == nullptr) return lens;
  load_i64(ctx.inputs[kRnnLens], lens.data());
  for (std::int64_t b = 0; b < g.batch; ++b) {
    std::int64_t& l = lens[static_cast<std::size_t>(b)];
    if (l < 0 || l > g.seq) {
      set_fault(ctx, std::string(g.op) + ": sequence_lens[" + std::to_string(b) + "] = " + std::to_string(l) +
                         " is out of range [0, " + std::to_string(g.seq) + "] (seq_length of X)");
      l = std::clamp<std::int64_t>(l, 0, g.seq);
    }
  }
  return lens;
}

}  // namespace

RnnGeom rnn_geom(const KernelContext& ctx, RnnKind kind) {
  std::vector<TensorMeta> meta;
  for (const TensorView& v : ctx.inputs) {
    meta.push_back(v.data == nullptr ? TensorMeta{{}, DType::kF32, false} : TensorMeta{*v.shape, v.dtype});
  }
  return rnn_geom(meta, ctx.attrs, kind);  // validated by infer: cannot throw here
}

template <class T>
std::pair<std::vector<T>, std::vector<T>> rnn_biases(KernelContext& ctx, const RnnGeom& g) {
  const auto n = static_cast<std::size_t>(g.dirs * g.gh());
  std::vector<T> wb(n, T(0)), rb(n, T(0));
  if (ctx.inputs.size() > kRnnB && ctx.inputs[kRnnB].data != nullptr) {
    const std::vector<T> b = load<T>(ctx.inputs[kRnnB], ctx);  // [D, Wb | Rb]
    for (std::int64_t d = 0; d < g.dirs; ++d) {
      const T* row = b.data() + d * 2 * g.gh();
      std::copy(row, row + g.gh(), wb.begin() + d * g.gh());
      std::copy(row + g.gh(), row + 2 * g.gh(), rb.begin() + d * g.gh());
    }
  }
  return {std::move(wb), std::move(rb)};
}

template <class T>
RnnState<T> rnn_prepare(KernelContext& ctx, const RnnGeom& geom, const std::vector<T>& bias, bool c0) {
  RnnState<T> s;
  s.g = geom;
  const RnnGeom& g = s.g;
  const std::int64_t tb = g.seq * g.batch, gh = g.gh();
  std::vector<T> x = load<T>(ctx.inputs[kRnnX], ctx);
  if (g.batch_major) {
    std::vector<T> tm(x.size());
    swap_leading(x.data(), g.batch, g.seq, g.input, tm.data());
    x = std::move(tm);
  }
  GemmOperand<T> w(ctx.inputs[kRnnW], ctx);
  s.xw.resize(static_cast<std::size_t>(g.dirs * tb * gh));
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    T* xw = s.xw.data() + d * tb * gh;
    for (std::int64_t r = 0; r < tb; ++r) std::copy(bias.begin() + d * gh, bias.begin() + (d + 1) * gh, xw + r * gh);
    gemm(false, true, tb, gh, g.input, T(1), x.data(), g.input, w.data() + d * gh * g.input, g.input, T(1), xw, gh);
  }
  s.lens = load_lens(ctx, g);
  s.h = load_state<T>(ctx, kRnnH0, g);
  if (c0) s.c = load_state<T>(ctx, kRnnC0, g);
  s.y.assign(static_cast<std::size_t>(tb * g.dirs * g.hidden), T(0));
  s.clip = static_cast<float>(ctx.attrs.get_float("clip", 0));
  s.narrow = ctx.compute_dtype;
  s.round_h = ctx.backend == Backend::kNpu && (s.narrow == DType::kF16 || s.narrow == DType::kBF16);
  return s;
}

template <class T>
void rnn_finish(KernelContext& ctx, RnnState<T>& s, bool with_c) {
  const RnnGeom& g = s.g;
  if (g.batch_major) {  // [T, D, B, H] -> [B, T, D, H]
    std::vector<T> y(s.y.size());
    const std::int64_t row = g.dirs * g.hidden;
    for (std::int64_t t = 0; t < g.seq; ++t) {
      for (std::int64_t d = 0; d < g.dirs; ++d) {
        for (std::int64_t b = 0; b < g.batch; ++b) {
          const T* src = s.y.data() + ((t * g.dirs + d) * g.batch + b) * g.hidden;
          std::copy(src, src + g.hidden, y.data() + (b * g.seq + t) * row + d * g.hidden);
        }
      }
    }
    s.y = std::move(y);
  }
  // A sequence of length 0 ends in zero states, as ONNX Runtime's kernels leave it.
  for (std::int64_t b = 0; b < g.batch; ++b) {
    if (s.lens[static_cast<std::size_t>(b)] != 0) continue;
    for (std::int64_t d = 0; d < g.dirs; ++d) {
      const std::int64_t at = (d * g.batch + b) * g.hidden;
      std::fill(s.h.begin() + at, s.h.begin() + at + g.hidden, T(0));
      if (with_c) std::fill(s.c.begin() + at, s.c.begin() + at + g.hidden, T(0));
    }
  }
  store<T>(ctx.outputs[0], s.y.data(), ctx);
  auto store_state = [&](const TensorView& v, std::vector<T>& st) {
    if (!g.batch_major) return store<T>(v, st.data(), ctx);
    std::vector<T> out(st.size());
    swap_leading(st.data(), g.dirs, g.batch, g.hidden, out.data());
    store<T>(v, out.data(), ctx);
  };
  store_state(ctx.outputs[1], s.h);
  if (with_c) store_state(ctx.outputs[2], s.c);
  rnn_model_time(ctx, g, g.kind == RnnKind::kGru && ctx.attrs.get_int("linear_before_reset", 0) == 0);
}

template RnnState<float> rnn_prepare(KernelContext&, const RnnGeom&, const std::vector<float>&, bool);
template RnnState<double> rnn_prepare(KernelContext&, const RnnGeom&, const std::vector<double>&, bool);
template std::pair<std::vector<float>, std::vector<float>> rnn_biases(KernelContext&, const RnnGeom&);
template std::pair<std::vector<double>, std::vector<double>> rnn_biases(KernelContext&, const RnnGeom&);
template void rnn_finish(KernelContext&, RnnState<float>&, bool);
template void rnn_finish(KernelContext&, RnnState<double>&, bool);

}  // namespace npuscope::emulator::kernels
