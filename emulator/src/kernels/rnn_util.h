// Shared by the recurrent ops LSTM (rnn_lstm_ops.cpp), GRU (rnn_gru_ops.cpp) and RNN (rnn_ops.cpp):
// ONNX's operators, one emulator op each, with ONNX's inputs, outputs and attributes.
//
// Note [Recurrent ops]
// Inputs: X, W, R, B, sequence_lens, initial_h (LSTM: initial_c, P); outputs Y, Y_h (LSTM: Y_c).
// Attributes as ONNX names them: direction, layout, hidden_size, clip, activations (a comma-separated
// string: the ONNX adapter joins the node's STRINGS), activation_alpha, activation_beta,
// input_forget (LSTM), linear_before_reset (GRU). Every output is always computed (a node that leaves
// one out simply does not bind it).
// Kernels work time-major ([T, B, ...]); layout 1 is transposed on the way in and out. The input
// projection of all steps is one GEMM (X [T·B, I] · W^T, biases pre-filled), then each step is one
// GEMM H_{t-1} · R^T over the whole batch plus the gate math on the rows still inside their
// sequence (t < sequence_lens[b]); the other rows keep their state and write zeros to Y, so Y_h/Y_c
// hold each sequence's last valid step in either direction (zeros for a sequence of length 0, as
// ONNX Runtime gives).
//
// Note [Recurrent numerics]
// As the cube ops (Note [Cube numerics]): the NPU reads its inputs rounded to the compute dtype
// (f16 under force_fp16), the GEMMs accumulate in f32 and the gates compute in f32. The hidden state
// is rounded to the compute dtype after every step, because it is both an output and the next step's
// cube operand; the LSTM cell state stays f32 inside the kernel (it never leaves the vector unit).
// Both sides use the exact activation functions; the CPU golden computes in f32 (f64 for f64
// inputs).
//
// Note [Recurrent cost]
// The op runs as one task, but its NPU kernel models its own time (KernelContext::device_ns) as the
// sum of its parts: one cube GEMM for the input projection, then per step a cube GEMM of [B, H] by
// [H, G·H] (small batches pay the 16-row fractal padding, which is why RNNs use the cube poorly) and
// a vector pass over the gates. One kernel launch overhead is paid; the parts pay only their work.
// Both directions of a bidirectional op run side by side (batch 2). The schema's cost (the task's
// flops, and the AI CPU fallback's time) counts the GEMM flops plus the gates' vector flops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gemm_util.h"

namespace npuscope::emulator::kernels {

enum class RnnKind : std::uint8_t { kRnn, kGru, kLstm };

// Input positions (ONNX's).
inline constexpr int kRnnX = 0, kRnnW = 1, kRnnR = 2, kRnnB = 3, kRnnLens = 4, kRnnH0 = 5, kRnnC0 = 6, kRnnP = 7;

struct RnnGeom {
  RnnKind kind = RnnKind::kRnn;
  const char* op = "RNN";
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  std::int64_t dirs = 1;   // 2 when bidirectional
  std::int64_t gates = 1;  // RNN 1, GRU 3, LSTM 4
  bool reverse_only = false;
  bool batch_major = false;  // layout 1
  std::int64_t gh() const { return gates * hidden; }
  // Direction d runs from the last step to the first.
  bool reversed(std::int64_t d) const { return reverse_only || d == 1; }
};

// Validates the inputs and attributes (shapes, dtypes, direction, layout, hidden_size,
// activations) and gives the geometry. Throws InvalidArgument naming the op and the bad input.
RnnGeom rnn_geom(std::span<const TensorMeta> in, const Attrs& attrs, RnnKind kind);
std::vector<TensorMeta> rnn_infer(std::span<const TensorMeta> in, const Attrs& attrs, RnnKind kind);
KernelCost rnn_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs, RnnKind kind);
// The two above for one kind, as an op schema's infer and cost functions.
template <RnnKind kKind>
std::vector<TensorMeta> infer_recurrent(std::span<const TensorMeta> in, const Attrs& attrs) {
  return rnn_infer(in, attrs, kKind);
}
template <RnnKind kKind>
KernelCost cost_recurrent(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs) {
  return rnn_cost(in, out, attrs, kKind);
}
// The NPU kernel's own time (Note [Recurrent cost]); `extra_step_gemm`: GRU's (r ⊙ H) · Rh.
std::uint64_t rnn_device_ns(const DeviceSpec& spec, const RnnGeom& g, DType dtype, bool extra_step_gemm);
// NPU supports: every float input f16/bf16/f32 (sequence_lens is an integer).
bool rnn_supports(std::span<const TensorMeta> in, const Attrs& attrs);

// ---- activations --------------------------------------------------------------------------------
enum class RnnAct : std::uint8_t {
  kSigmoid,
  kTanh,
  kRelu,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};
struct Activation {
  RnnAct kind = RnnAct::kSigmoid;
  float alpha = 0, beta = 0;
};
// The activations of all directions, per direction in ONNX's order (RNN: f; GRU: f, g; LSTM: f, g,
// h): the `activations` attribute (names in any case) or, absent, ONNX's defaults (RNN: Tanh; else
// Sigmoid for f, Tanh for g and h). alpha/beta are taken in order by the functions that use them,
// as ONNX Runtime takes them; a function left without one gets the default of the ONNX op of its
// name (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1, ThresholdedRelu 1, Affine 1/0, ScaledTanh 1/1;
// ONNX Runtime uses 0 for the last three). Throws InvalidArgument for an unknown name or a count
// other than the functions per direction times the directions.
std::vector<Activation> rnn_activations(const Attrs& attrs, const RnnGeom& g);

template <class T>
T activate(const Activation& a, T x) {
  switch (a.kind) {
    case RnnAct::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case RnnAct::kTanh: return std::tanh(x);
    case RnnAct::kRelu: return x > T(0) ? x : T(0);
    case RnnAct::kAffine: return T(a.alpha) * x + T(a.beta);
    case RnnAct::kLeakyRelu: return x >= T(0) ? x : T(a.alpha) * x;
    case RnnAct::kThresholdedRelu: return x >= T(a.alpha) ? x : T(0);  // the recurrent spec: >=
    case RnnAct::kScaledTanh: return T(a.alpha) * std::tanh(T(a.beta) * x);
    case RnnAct::kHardSigmoid: return std::clamp(T(a.alpha) * x + T(a.beta), T(0), T(1));
    case RnnAct::kElu: return x >= T(0) ? x : T(a.alpha) * (std::exp(x) - T(1));
    case RnnAct::kSoftsign: return x / (T(1) + std::fabs(x));
    case RnnAct::kSoftplus: return x > T(20) ? x : std::log1p(std::exp(x));
  }
  return x;
}

// ---- kernel data --------------------------------------------------------------------------------
// What every recurrent kernel starts from, time-major, in the compute type T.
template <class T>
struct RnnState {
  RnnGeom g;
  std::vector<T> xw;               // [D, T·B, G·H]: X · W^T + the biases the caller pre-filled
  std::vector<T> h, c;             // [D, B, H] current states (initial_h / initial_c or zeros)
  std::vector<std::int64_t> lens;  // [B] valid steps per sequence
  std::vector<T> y;                // [T, D, B, H], zeros where a step is past a sequence's end
  float clip = 0;                  // > 0: gate inputs clipped to [-clip, clip]
  bool round_h = false;            // NPU narrow compute: round H after each step
  DType narrow = DType::kF32;
};

// The geometry of a kernel's inputs (validated by infer already: does not throw).
RnnGeom rnn_geom(const KernelContext& ctx, RnnKind kind);
// Loads X, the lengths and the initial states, and runs the input projection with `bias` [D, G·H]
// pre-filled into xw. `c0`: also load initial_c (LSTM).
template <class T>
RnnState<T> rnn_prepare(KernelContext& ctx, const RnnGeom& g, const std::vector<T>& bias, bool c0);
// Biases B [D, 2·G·H] as (Wb, Rb) in T (zeros when absent).
template <class T>
std::pair<std::vector<T>, std::vector<T>> rnn_biases(KernelContext& ctx, const RnnGeom& g);
// Stores Y, Y_h (and Y_c when `with_c`) in the op's layout.
template <class T>
void rnn_finish(KernelContext& ctx, RnnState<T>& s, bool with_c);
// Rounds a step's hidden state as the NPU stores it (Note [Recurrent numerics]).
template <class T>
void rnn_round_h(const RnnState<T>& s, T* h, std::int64_t n) {
  if (s.round_h) round_in_place(h, n, s.narrow);
}
template <class T>
T rnn_clip(const RnnState<T>& s, T v) {
  return s.clip > 0 ? std::clamp(v, T(-s.clip), T(s.clip)) : v;
}
// One step's GEMM for direction d: out [B, n] = h [B, H] · R_d^T rows [row0, row0 + n).
template <class T>
void rnn_step_gemm(const RnnGeom& g, const T* h, const T* r, std::int64_t d, std::int64_t row0, std::int64_t n,
                   T* out) {
  gemm(false, true, g.batch, n, g.hidden, T(1), h, g.hidden, r + (d * g.gh() + row0) * g.hidden, g.hidden, T(0), out,
       n);
}
// Sets ctx.device_ns on the NPU (Note [Recurrent cost]).
void rnn_model_time(KernelContext& ctx, const RnnGeom& g, bool extra_step_gemm);

}  // namespace npuscope::emulator::kernels
