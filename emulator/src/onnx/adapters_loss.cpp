// ONNX adapters for the loss ops (Note [ONNX adapters]): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss run on the emulator's NLLLoss (the kernel PyTorch's nll_loss uses, see
// Note [NLL loss reductions]), which takes [M, C] log-probabilities and [M] targets.
//
// Note [N-d losses on the 2-D NLLLoss]
// ONNX's losses take an input [N, C, d1, ..., dk] and a target [N, d1, ..., dk]: class dim 1, one
// sample per (n, d1, ..., dk). Moving C last (Transpose to [N, d1, ..., dk, C]) and viewing the
// result as [M, C], M = N·d1·...·dk, with the target as [M], gives the same samples in the same
// order, so the three reductions mean the same (ONNX's mean divides by the summed weights of the
// samples not ignored, as aten's). `none` gives [M], viewed back as [N, d1, ..., dk]. Without an
// ignore_index attribute no target is ignored: the kernel is given one no target can equal.
#include <limits>
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;

constexpr std::int64_t kIgnoreNothing = std::numeric_limits<std::int64_t>::min();

const Tensor& required(const NodeContext& ctx, std::size_t i, const char* name) {
  if (!ctx.has_input(i)) ctx.fail(std::string("needs input ") + std::to_string(i) + " (" + name + ")");
  return ctx.input(i);
}

// ONNX's reduction names -> aten's Reduction enum (NLLLoss's 'reduction').
std::int64_t reduction_code(const NodeContext& ctx) {
  const std::string r = ctx.attrs.get_string("reduction", "mean");
  if (r == "none") return 0;
  if (r == "mean") return 1;
  if (r == "sum") return 2;
  ctx.fail("reduction '" + r + "' is not none, mean or sum");
}

// The loss over log-probabilities `logp` [N, C, d...] and `target` [N, d...]: see Note [N-d losses
// on the 2-D NLLLoss].
Tensor nll_loss(const NodeContext& ctx, const Tensor& logp, const Tensor& target, const Tensor& weight) {
  const Shape& s = logp.shape();
  if (s.size() < 2) ctx.fail("the input must be [N, C, d1, ..., dk], got " + shape_str(s));
  Shape per_sample = s;
  per_sample.erase(per_sample.begin() + 1);
  if (target.shape() != per_sample) {
    ctx.fail("the target must be " + shape_str(per_sample) + " for an input " + shape_str(s) + ", got " +
             shape_str(target.shape()));
  }
  const std::int64_t reduction = reduction_code(ctx);
  std::vector<Tensor> in{logp, target};
  if (s.size() > 2) {
    Ints perm{0};
    for (std::int64_t d = 2; d < static_cast<std::int64_t>(s.size()); ++d) perm.push_back(d);
    perm.push_back(1);
    const std::int64_t c = s[1], m = shape_numel(per_sample);
    const Tensor moved = call_op1("Transpose", {logp}, {{"perm", perm}}, ctx.call());
    in[0] = call_op1("Reshape", {moved}, {{"shape", Ints{m, c}}}, ctx.call());
    in[1] = call_op1("Reshape", {target}, {{"shape", Ints{m}}}, ctx.call());
  }
  if (weight.defined()) in.push_back(weight);
  const Attrs attrs{{"reduction", reduction}, {"ignore_index", ctx.attrs.get_int("ignore_index", kIgnoreNothing)}};
  Tensor loss = call_op("NLLLoss", std::move(in), attrs, ctx.call())[0];
  if (reduction == 0 && s.size() > 2) loss = call_op1("Reshape", {loss}, {{"shape", Ints(per_sample)}}, ctx.call());
  return loss;
}

std::vector<Tensor> negative_log_likelihood_loss(NodeContext& ctx) {
  return {nll_loss(ctx, required(ctx, 0, "input"), required(ctx, 1, "target"), ctx.input(2))};
}

// LogSoftmax over the class dim, then the NLL loss; the log-probabilities are the optional output 1.
std::vector<Tensor> softmax_cross_entropy_loss(NodeContext& ctx) {
  const Tensor& scores = required(ctx, 0, "scores");
  if (scores.shape().size() < 2) ctx.fail("scores must be [N, C, d1, ..., dk], got " + shape_str(scores.shape()));
  const Tensor logp = call_op1("LogSoftmax", {scores}, {{"axis", std::int64_t{1}}}, ctx.call());
  Tensor loss = nll_loss(ctx, logp, required(ctx, 1, "labels"), ctx.input(2));
  if (ctx.num_outputs > 1) return {loss, logp};
  return {loss};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("NegativeLogLikelihoodLoss", negative_log_likelihood_loss);
NPUSCOPE_REGISTER_ONNX_ADAPTER("SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss);

}  // namespace npuscope::emulator::onnx_import
