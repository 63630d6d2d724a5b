// The connectionist temporal classification loss and its gradient, as aten's ctc_loss_cpu and
// ctc_loss_backward_cpu compute them (PyTorch 1.13, aten/src/ATen/native/LossCTC.cpp), named as CANN
// names them:
//   CTCLossV2     (log_probs [T, N, C], targets [N, S] padded or [sum(target_lengths)] concatenated,
//                  input_lengths [N], target_lengths [N]; blank 0, zero_infinity 0,
//                  max_target_length) -> neg_log_likelihood [N], log_alpha [N, T, 2·max_target_length + 1]
//   CTCLossV2Grad (grad_out [N], log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
//                  log_alpha; blank 0, zero_infinity 0) -> grad [T, N, C]
// log_probs and the outputs share a floating dtype; targets and lengths are integers. The reduction
// (none, mean over target lengths, sum) is the caller's: aten's _ctc_loss returns per-sample losses.
//
// Note [CTC loss]
// With l' the target with a blank around each label (length 2·tl + 1), log_alpha[b, t, s] is the log
// probability of the paths of the first t + 1 frames that end in l'[s]: a log-sum-exp of up to three
// states of frame t − 1 (s, s − 1, and s − 2 when l'[s] differs from l'[s − 2]) plus
// log_probs[t, b, l'[s]]; the loss is −log of the sum of the last two states at frame il − 1 (the last
// one alone for an empty target). The gradient runs the mirror recursion (log_beta) backwards from
// frame il − 1, collecting log(Σ_s alpha·beta) per (t, label) as it goes (two rows of beta suffice),
// and ends with grad = (exp(lp) − exp(collected + nll − lp))·grad_out for t < il, 0 beyond. Each
// log-sum-exp takes the maximum out first, as aten's, with a maximum of −inf taken as 0.
// log_alpha states beyond a sample's lengths are −inf (aten leaves them uninitialised). An infeasible
// sample (too few frames for its labels) has loss +inf; zero_infinity on CTCLossV2 writes 0 instead
// (CANN's attribute; aten's _ctc_loss leaves that to its caller, so the PyTorch kernel passes 0), and on
// CTCLossV2Grad zeroes the gradient of samples whose loss is +inf. An input length of 0 (undefined
// in aten) gives loss 0 for an empty target, +inf otherwise.
//
// Data errors are kernel faults (Note [Kernel faults]): an input length outside [0, T], a target
// length outside [0, max_target_length], concatenated targets whose count is not the sum of the
// target lengths, a label outside [0, C).
//
// Where it runs: CANN's l0op::CtcLossV2 (hicann/ops-nn, loss/ctc_loss_v2) launches CTCLossV2 on the AI
// Core (CTCLossV3 on Ascend 910B, f32/f16/bf16) while max_target_length <= 1000, C <= 200000 and
// N <= 8180, and as an AI CPU task beyond (CTCLossV2Grad likewise). The NPU kernel (f32, a
// precision-sensitive vector op: log-sum-exp) says so in ctc_npu_supports; the CPU golden is f64.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kLossOp[] = "CTCLossV2", kGradOp[] = "CTCLossV2Grad";
// CANN's AI Core limits (IsV3AiCoreSupport); larger problems run on the AI CPU.
constexpr std::int64_t kAiCoreMaxLabels = 1000, kAiCoreMaxClasses = 200000, kAiCoreMaxBatch = 8180;

bool is_integer(DType t) { return !is_floating(t) && t != DType::kBool; }

void require_integer(std::span<const TensorMeta> in, std::size_t i, const char* what, const char* op) {
  if (!is_integer(in[i].dtype))
    fail(op, std::string(what) + " must be an integer tensor, got " + std::string(dtype_name(in[i].dtype)));
}

// The sizes every CTC input agrees on.
struct CtcDims {
  std::int64_t t = 0, n = 0, c = 0, s_max = 0;
};

// log_probs [T, N, C] at input `x`, then targets, input_lengths, target_lengths: validated. `s_max` (the
// longest target length: the loss's attribute, the gradient's log_alpha) is passed through.
CtcDims check_inputs(std::span<const TensorMeta> in, std::size_t x, std::int64_t s_max, const Attrs& attrs,
                     const char* op) {
  require_floating(in, static_cast<int>(x), op);
  const Shape &lp = in[x].shape, &tg = in[x + 1].shape;
  if (lp.size() != 3) fail(op, "log_probs must be [T, N, C], got " + shape_str(lp));
  const CtcDims d{lp[0], lp[1], lp[2], s_max};
  const std::int64_t blank = attrs.get_int("blank", 0);
  if (blank < 0 || blank >= d.c)
    fail(op, "blank " + std::to_string(blank) + " is outside the classes [0, " + std::to_string(d.c) + ")");
  require_integer(in, x + 1, "targets", op);
  if (tg.size() == 2 ? tg[0] != d.n : tg.size() != 1) {
    fail(op, "targets must be [N, S] = [" + std::to_string(d.n) + ", S] or concatenated [sum(target_lengths)], got " +
                 shape_str(tg));
  }
  for (std::size_t i = x + 2; i < x + 4; ++i) {
    require_integer(in, i, i == x + 2 ? "input_lengths" : "target_lengths", op);
    if (in[i].shape != Shape{d.n})
      fail(op, std::string(i == x + 2 ? "input_lengths" : "target_lengths") + " must be [" + std::to_string(d.n) +
                   "], got " + shape_str(in[i].shape));
  }
  return d;
}

std::int64_t max_target_attr(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& tg = in[1].shape;
  if (!attrs.has("max_target_length") && tg.size() == 1)
    fail(kLossOp, "concatenated targets need the 'max_target_length' attribute (the longest target length)");
  const std::int64_t s = attrs.get_int("max_target_length", tg.size() == 2 ? tg[1] : 0);
  if (s < 0 || (tg.size() == 2 && s > tg[1]) || (tg.size() == 1 && s > tg[0])) {
    fail(kLossOp, "max_target_length " + std::to_string(s) + " is outside [0, " +
                      std::to_string(tg.size() == 2 ? tg[1] : tg[0]) + "] for targets " + shape_str(tg));
  }
  return s;
}

std::vector<TensorMeta> infer_loss(std::span<const TensorMeta> in, const Attrs& attrs) {
  const CtcDims d = check_inputs(in, 0, max_target_attr(in, attrs), attrs, kLossOp);
  const std::int64_t states =
      checked_add(checked_mul(d.s_max, 2, kLossOp, "2·max_target_length"), 1, kLossOp, "2·max_target_length + 1");
  checked_mul(checked_mul(d.n, d.t, kLossOp, "N·T"), states, kLossOp, "log_alpha's size");
  return {{{d.n}, in[0].dtype}, {{d.n, d.t, states}, in[0].dtype}};
}

std::vector<TensorMeta> infer_grad(std::span<const TensorMeta> in, const Attrs& attrs) {
  const Shape& alpha = in[6].shape;
  const std::int64_t s_max = alpha.size() == 3 && alpha[2] % 2 == 1 ? (alpha[2] - 1) / 2 : -1;
  const CtcDims d = check_inputs(in, 1, s_max, attrs, kGradOp);
  if (s_max < 0 || alpha[0] != d.n || alpha[1] != d.t) {
    fail(kGradOp, "log_alpha must be [N, T, 2·S + 1] = [" + std::to_string(d.n) + ", " + std::to_string(d.t) +
                      ", odd], got " + shape_str(alpha));
  }
  for (const std::size_t i : {std::size_t{0}, std::size_t{5}}) {
    require_floating(in, static_cast<int>(i), kGradOp);
    if (in[i].shape != Shape{d.n})
      fail(kGradOp, std::string(i == 0 ? "grad_out" : "neg_log_likelihood") + " must be [" + std::to_string(d.n) +
                        "], got " + shape_str(in[i].shape));
  }
  return {{in[1].shape, in[1].dtype}};
}

// The AI Core runs what fits its unified buffer (see the header comment); the rest is an AI CPU task.
bool ctc_npu_supports(std::span<const TensorMeta> in, std::size_t x, std::int64_t states) {
  const Shape& lp = in[x].shape;
  return (states - 1) / 2 <= kAiCoreMaxLabels && lp[2] <= kAiCoreMaxClasses && lp[1] <= kAiCoreMaxBatch;
}
bool loss_npu_supports(std::span<const TensorMeta> in, const Attrs& attrs) {
  return ctc_npu_supports(in, 0, 2 * max_target_attr(in, attrs) + 1);
}
bool grad_npu_supports(std::span<const TensorMeta> in, const Attrs&) { return ctc_npu_supports(in, 1, in[6].shape[2]); }

// One log-sum-exp of 2 or 3 states per (frame, state), a sample per block, the frames one after
// another (a dependent vector pass each).
KernelCost ctc_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const TensorMeta& alpha,
                    double flops_per_state) {
  KernelCost c = vector_cost(in, out, 0);
  c.flops = static_cast<double>(alpha.numel()) * flops_per_state;
  c.block_dim = static_cast<std::uint32_t>(std::clamp<std::int64_t>(alpha.shape[0], 1, 65535));
  c.stages = static_cast<std::uint8_t>(std::clamp<std::int64_t>(alpha.shape[1] - 1, 0, 255));
  return c;
}
KernelCost cost_loss(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  return ctc_cost(in, out, out[1], 12);
}
KernelCost cost_grad(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs&) {
  KernelCost c = ctc_cost(in, out, in[6], 24);
  c.flops += static_cast<double>(out[0].numel()) * 4;  // the closing exp pass over [T, N, C]
  return c;
}

// The integer inputs of one call, checked against the sizes (a fault leaves ok false).
struct CtcProblem {
  CtcDims d;
  std::int64_t blank = 0;
  std::vector<std::int64_t> targets, input_len, target_len, offset;  // offset: each sample's first label
  bool ok = false;
  // l'[s] of sample b: blank at even s, the (s / 2)th label at odd s.
  std::int64_t label(std::int64_t b, std::int64_t s) const {
    return s % 2 == 0 ? blank : targets[static_cast<std::size_t>(offset[b] + s / 2)];
  }
};

// Whether `v`, the value of what[b], is in [0, most]; else a fault.
bool length_ok(KernelContext& ctx, const char* op, const char* what, std::int64_t b, std::int64_t v,
               std::int64_t most) {
  if (v >= 0 && v <= most) [[likely]]
    return true;
  set_fault(ctx, std::string(op) + ": " + what + "[" + std::to_string(b) + "] = " + std::to_string(v) +
                     " is outside [0, " + std::to_string(most) + "]");
  return false;
}

// Reads targets and lengths from inputs x + 1 .. x + 3 and checks them; a fault on bad data.
CtcProblem read_problem(KernelContext& ctx, std::size_t x, std::int64_t s_max, const char* op) {
  CtcProblem p;
  const Shape& lp = *ctx.inputs[x].shape;
  p.d = {lp[0], lp[1], lp[2], s_max};
  p.blank = ctx.attrs.get_int("blank", 0);
  const auto read = [&](std::size_t i) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(ctx.inputs[i].numel));
    load_i64(ctx.inputs[i], v.data());
    return v;
  };
  p.targets = read(x + 1), p.input_len = read(x + 2), p.target_len = read(x + 3);
  const Shape& tg = *ctx.inputs[x + 1].shape;
  const bool padded = tg.size() == 2;
  p.offset.resize(static_cast<std::size_t>(p.d.n));
  std::int64_t pos = 0;
  for (std::int64_t b = 0; b < p.d.n; ++b) {
    if (!length_ok(ctx, op, "input_lengths", b, p.input_len[b], p.d.t) ||
        !length_ok(ctx, op, "target_lengths", b, p.target_len[b], padded ? std::min(s_max, tg[1]) : s_max))
      return p;
    p.offset[b] = padded ? b * tg[1] : pos;
    pos += p.target_len[b];
  }
  if (!padded && pos != tg[0]) [[unlikely]] {
    set_fault(ctx, std::string(op) + ": concatenated targets hold " + std::to_string(tg[0]) +
                       " labels, but the target lengths add up to " + std::to_string(pos));
    return p;
  }
  for (std::int64_t b = 0; b < p.d.n; ++b) {
    for (std::int64_t s = 1; s < 2 * p.target_len[b]; s += 2) {
      const std::int64_t v = p.label(b, s);
      if (v < 0 || v >= p.d.c) [[unlikely]] {
        set_fault(ctx, std::string(op) + ": target " + std::to_string(v) + " of sample " + std::to_string(b) +
                           " is out of bounds [0, " + std::to_string(p.d.c) + ")");
        return p;
      }
    }
  }
  p.ok = true;
  return p;
}

template <class T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// log(Σ exp(v)) with the maximum taken out first (a maximum of −inf taken as 0), as aten's.
template <class T>
T log_sum(T a, T b, T c = kNegInf<T>) {
  T m = std::max({a, b, c});
  if (m == kNegInf<T>) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// The alpha recursion of one sample (Note [CTC loss]) into its [T, L] rows; returns its loss.
template <class T>
T alpha_of_sample(const CtcProblem& p, std::int64_t b, const T* lp, T* alpha, std::int64_t states) {
  const std::int64_t il = p.input_len[b], tl = p.target_len[b], n = p.d.n, c = p.d.c;
  const auto x = [&](std::int64_t t, std::int64_t k) { return lp[(t * n + b) * c + k]; };
  if (il == 0) return tl == 0 ? T(0) : std::numeric_limits<T>::infinity();
  alpha[0] = x(0, p.blank);
  if (tl > 0) alpha[1] = x(0, p.label(b, 1));
  for (std::int64_t t = 1; t < il; ++t) {
    const T* prev = alpha + (t - 1) * states;
    T* row = alpha + t * states;
    for (std::int64_t s = 0; s <= 2 * tl; ++s) {
      const std::int64_t k = p.label(b, s);
      const T a2 = s > 0 ? prev[s - 1] : kNegInf<T>;
      const T a3 = s > 1 && p.label(b, s - 2) != k ? prev[s - 2] : kNegInf<T>;
      row[s] = log_sum(prev[s], a2, a3) + x(t, k);
    }
  }
  const T* last = alpha + (il - 1) * states;
  return tl == 0 ? -last[0] : -log_sum(last[2 * tl], last[2 * tl - 1]);
}

template <class T>
void loss_kernel(KernelContext& ctx) {
  const std::int64_t states = (*ctx.outputs[1].shape)[2];
  const CtcProblem p = read_problem(ctx, 0, (states - 1) / 2, kLossOp);
  std::vector<T> nll(static_cast<std::size_t>(p.d.n), T(0));
  std::vector<T> alpha(static_cast<std::size_t>(ctx.outputs[1].numel), p.ok ? kNegInf<T> : T(0));
  if (p.ok) {
    const std::vector<T> lp = load<T>(ctx.inputs[0], ctx);
    const bool zero_infinity = ctx.attrs.get_int("zero_infinity", 0) != 0;
    for (std::int64_t b = 0; b < p.d.n; ++b) {
      nll[b] = alpha_of_sample(p, b, lp.data(), alpha.data() + b * p.d.t * states, states);
      if (zero_infinity && nll[b] == std::numeric_limits<T>::infinity()) nll[b] = 0;
    }
  }
  store<T>(ctx.outputs[0], nll.data(), ctx);
  store<T>(ctx.outputs[1], alpha.data(), ctx);
}

// The beta recursion of one sample, collecting log Σ alpha·beta per (t, label) into `grad` (log space,
// −inf for none), then the gradient itself (Note [CTC loss]).
template <class T>
void grad_of_sample(const CtcProblem& p, std::int64_t b, const T* lp, const T* alpha, std::int64_t states, T nll, T g,
                    T* grad) {
  const std::int64_t il = p.input_len[b], tl = p.target_len[b], n = p.d.n, c = p.d.c;
  const auto at = [&](std::int64_t t, std::int64_t k) { return (t * n + b) * c + k; };
  std::vector<T> next(static_cast<std::size_t>(2 * tl + 1), kNegInf<T>), cur(next.size());
  if (il > 0) {
    const T* a = alpha + (il - 1) * states;
    next[2 * tl] = lp[at(il - 1, p.blank)];
    grad[at(il - 1, p.blank)] = a[2 * tl] + next[2 * tl];
    if (tl > 0) {
      const std::int64_t k = p.label(b, 2 * tl - 1);
      next[2 * tl - 1] = lp[at(il - 1, k)];
      grad[at(il - 1, k)] = a[2 * tl - 1] + next[2 * tl - 1];  // assigned, as aten's
    }
  }
  for (std::int64_t t = il - 2; t >= 0; --t) {
    const T* a = alpha + t * states;
    for (std::int64_t s = 2 * tl; s >= 0; --s) {
      const std::int64_t k = p.label(b, s);
      const T b2 = s < 2 * tl ? next[s + 1] : kNegInf<T>;
      const T b3 = s < 2 * tl - 1 && p.label(b, s + 2) != k ? next[s + 2] : kNegInf<T>;
      cur[s] = log_sum(next[s], b2, b3) + lp[at(t, k)];
      const T ab = a[s] + cur[s];
      T& acc = grad[at(t, k)];
      acc = acc == kNegInf<T> ? ab : log_sum(acc, ab);
    }
    std::swap(cur, next);
  }
  for (std::int64_t t = 0; t < p.d.t; ++t) {
    for (std::int64_t k = 0; k < c; ++k) {
      T& r = grad[at(t, k)];
      const T x = lp[at(t, k)];
      r = t < il ? (std::exp(x) - std::exp(r + nll - x)) * g : T(0);
    }
  }
}

template <class T>
void grad_kernel(KernelContext& ctx) {
  const std::int64_t states = (*ctx.inputs[6].shape)[2];
  const CtcProblem p = read_problem(ctx, 1, (states - 1) / 2, kGradOp);
  std::vector<T> grad(static_cast<std::size_t>(ctx.outputs[0].numel), p.ok ? kNegInf<T> : T(0));
  if (p.ok) {
    const std::vector<T> g = load<T>(ctx.inputs[0], ctx), lp = load<T>(ctx.inputs[1], ctx),
                         nll = load<T>(ctx.inputs[5], ctx), alpha = load<T>(ctx.inputs[6], ctx);
    const bool zero_infinity = ctx.attrs.get_int("zero_infinity", 0) != 0;
    for (std::int64_t b = 0; b < p.d.n; ++b) {
      if (zero_infinity && nll[b] == std::numeric_limits<T>::infinity()) {
        for (std::int64_t t = 0; t < p.d.t; ++t) std::fill_n(grad.data() + (t * p.d.n + b) * p.d.c, p.d.c, T(0));
        continue;
      }
      grad_of_sample(p, b, lp.data(), alpha.data() + b * p.d.t * states, states, nll[b], g[b], grad.data());
    }
  }
  store<T>(ctx.outputs[0], grad.data(), ctx);
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kLossOp,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 4,
                              .max_inputs = 4,
                              .infer = infer_loss,
                              .cost = cost_loss});
NPUSCOPE_REGISTER_OP(OpSchema{.type = kGradOp,
                              .category = OpCategory::kPrecisionSensitive,
                              .min_inputs = 7,
                              .max_inputs = 7,
                              .infer = infer_grad,
                              .cost = cost_grad});
// The AI Core kernel where CANN has one (ctc_npu_supports), else an AI CPU task (op_registry.h's rule).
NPUSCOPE_REGISTER_KERNEL_IF(kLossOp, Backend::kNpu, loss_kernel<float>, loss_npu_supports);
NPUSCOPE_REGISTER_KERNEL(kLossOp, Backend::kCpu, loss_kernel<double>);
NPUSCOPE_REGISTER_KERNEL_IF(kGradOp, Backend::kNpu, grad_kernel<float>, grad_npu_supports);
NPUSCOPE_REGISTER_KERNEL(kGradOp, Backend::kCpu, grad_kernel<double>);

}  // namespace npuscope::emulator::kernels
