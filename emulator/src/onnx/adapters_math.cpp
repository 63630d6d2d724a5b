// ONNX Einsum (opset 12) as emulator ops (Note [ONNX adapters]): any equation the spec allows
// (explicit or implicit output, '...' batch dims broadcast numpy-style, repeated labels as diagonals
// and traces, labels summed away, spaces anywhere). Also the window functions' and
// MelWeightMatrix's scalar inputs and output_datatype (-> attributes of the emulator ops in
// kernels/window_ops.cpp).
//
// Note [Einsum as device ops]
// The equation is lowered, as torch.einsum and torch_npu lower it, to ops that each run as a device
// task with its own cost:
//   1. an operand with a repeated label (ii, bii) becomes its diagonal: a strided view of its flat
//      storage (AsStrided with stride = the sum of the repeated dims' strides), a vector copy;
//   2. labels that appear in one operand only and not in the output are summed first (ReduceSum);
//   3. the operands are contracted left to right, two at a time: labels in both and needed later are
//      batch dims, labels in both and not needed are contracted (K), the rest are M (left) and N
//      (right). Each operand is transposed to [batch, M, K] / [batch, K, N] (or left as [batch, K, M]
//      / [batch, N, K], which the cube reads transposed) and reshaped (a view) so that one
//      BatchMatMul on the cube does the contraction, batch dims broadcast; with no K it is an outer
//      product, a broadcasting Mul on the vector unit;
//   4. the last operand is summed over what the output leaves out and transposed to the output order.
// A label of size 1 in one operand broadcasts against the other's size, as '...' dims do.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "onnx_adapter.h"

namespace npuscope::emulator::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;
// Labels: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (ASCII order, the implicit output's order); the
// dims under '...' are kEllipsis + 0.. (right-aligned across operands).
constexpr int kLetters = 52, kEllipsis = 64;

struct Term {
  std::vector<int> labels;  // per dim
};

struct Equation {
  std::vector<Term> inputs;
  std::vector<int> output;
};

int label_of(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One term's labels for an operand of `rank` dims ('...' takes the dims no letter names; rank -1:
// the output, where '...' stands for all `max_ell` of them); `ell` is the number of dims under
// '...' (out), `max_ell` right-aligns them (0 while counting).
std::vector<int> parse_term(const NodeContext& ctx, const std::string& s, std::int64_t rank, std::int64_t max_ell,
                            std::int64_t& ell) {
  std::vector<int> before, after;
  bool seen = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      if (seen) ctx.fail("equation term '" + s + "' has '...' twice");
      seen = true;
      i += 2;
    } else if (is_letter(s[i])) {
      (seen ? after : before).push_back(label_of(s[i]));
    } else {
      ctx.fail("equation term '" + s + "' has '" + std::string(1, s[i]) + "': only letters and '...' are allowed");
    }
  }
  const auto letters = static_cast<std::int64_t>(before.size() + after.size());
  ell = !seen ? 0 : rank < 0 ? max_ell : rank - letters;
  if (rank >= 0 && (ell < 0 || (!seen && letters != rank))) {
    ctx.fail("equation term '" + s + "' names " + std::to_string(letters) + " dims" + (seen ? " besides '...'" : "") +
             " but its operand has " + std::to_string(rank));
  }
  for (std::int64_t d = 0; d < ell; ++d) before.push_back(static_cast<int>(kEllipsis + max_ell - ell + d));
  before.insert(before.end(), after.begin(), after.end());
  return before;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

// The implicit output: the '...' dims, then the letters used exactly once, in ASCII order.
std::vector<int> implicit_output(const Equation& eq, std::int64_t max_ell) {
  std::map<int, int> uses;
  for (const Term& t : eq.inputs)
    for (int l : t.labels) ++uses[l];
  std::vector<int> out;
  for (std::int64_t d = 0; d < max_ell; ++d) out.push_back(static_cast<int>(kEllipsis + d));
  for (auto [l, n] : uses)
    if (l < kLetters && n == 1) out.push_back(l);
  return out;
}

Equation parse_equation(const NodeContext& ctx) {
  std::string text = ctx.attrs.get_string("equation", "");
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (text.empty()) ctx.fail("needs the 'equation' attribute");
  const auto arrow = text.find("->");
  const auto terms = split(text.substr(0, arrow), ',');
  if (terms.size() != ctx.inputs.size()) {
    ctx.fail("equation '" + text + "' has " + std::to_string(terms.size()) + " input terms for " +
             std::to_string(ctx.inputs.size()) + " inputs");
  }
  std::int64_t max_ell = 0, ell = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    parse_term(ctx, terms[i], ctx.input(i).ndim(), 0, ell);
    max_ell = std::max(max_ell, ell);
  }
  Equation eq;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    eq.inputs.push_back({parse_term(ctx, terms[i], ctx.input(i).ndim(), max_ell, ell)});
  }
  if (arrow == std::string::npos) {
    eq.output = implicit_output(eq, max_ell);
    return eq;
  }
  eq.output = parse_term(ctx, text.substr(arrow + 2), -1, max_ell, ell);
  for (std::size_t i = 0; i < eq.output.size(); ++i) {
    const int l = eq.output[i];
    if (std::count(eq.output.begin(), eq.output.end(), l) > 1)
      ctx.fail("equation '" + text + "' repeats an output label");
    const bool used = std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](const Term& t) {
      return std::find(t.labels.begin(), t.labels.end(), l) != t.labels.end();
    });
    if (!used) ctx.fail("equation '" + text + "' has an output label that no input term has");
  }
  return eq;
}

// ---- lowering (Note [Einsum as device ops]) -----------------------------------------------------

struct Operand {
  Tensor t;
  std::vector<int> labels;  // one per dim of t, distinct after take_diagonals
};

bool has(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

Tensor op1(const NodeContext& ctx, const char* type, std::vector<Tensor> in, const Attrs& attrs = {}) {
  return call_op1(type, std::move(in), attrs, ctx.call());
}

Tensor reshape(const NodeContext& ctx, const Tensor& t, Shape shape) {
  if (t.shape() == shape) return t;
  return op1(ctx, "Reshape", {t}, {{"shape", std::move(shape)}, {"allowzero", std::int64_t{1}}});
}

// Repeated labels -> the diagonal, as a strided view of the flat storage (AsStrided).
void take_diagonals(const NodeContext& ctx, Operand& op) {
  std::vector<int> unique;
  Ints size, stride;
  Ints strides(op.labels.size(), 1);
  for (std::size_t d = op.labels.size(); d-- > 1;) strides[d - 1] = strides[d] * op.t.shape()[d];
  for (std::size_t d = 0; d < op.labels.size(); ++d) {
    const auto at = std::find(unique.begin(), unique.end(), op.labels[d]) - unique.begin();
    if (at < static_cast<std::ptrdiff_t>(unique.size())) {
      if (size[static_cast<std::size_t>(at)] != op.t.shape()[d]) {
        ctx.fail("a repeated label spans dims of different sizes in " + shape_str(op.t.shape()));
      }
      stride[static_cast<std::size_t>(at)] += strides[d];
      continue;
    }
    unique.push_back(op.labels[d]);
    size.push_back(op.t.shape()[d]);
    stride.push_back(strides[d]);
  }
  if (unique.size() == op.labels.size()) return;
  const Tensor flat = reshape(ctx, op.t, {op.t.numel()});
  op.t = op1(ctx, "AsStrided", {flat}, {{"size", size}, {"stride", stride}, {"storage_offset", std::int64_t{0}}});
  op.labels = unique;
}

// Sums `op` over the labels for which drop(label) holds.
template <class Pred>
void sum_labels(const NodeContext& ctx, Operand& op, Pred drop) {
  Ints axes;
  std::vector<int> kept;
  for (std::size_t d = 0; d < op.labels.size(); ++d) {
    if (drop(op.labels[d])) {
      axes.push_back(static_cast<std::int64_t>(d));
    } else {
      kept.push_back(op.labels[d]);
    }
  }
  if (axes.empty()) return;
  op.t = op1(ctx, "ReduceSum", {op.t}, {{"axes", axes}, {"keepdims", std::int64_t{0}}});
  op.labels = kept;
}

// Transposes `op` so that its labels come in `order` (a permutation of them).
void arrange(const NodeContext& ctx, Operand& op, const std::vector<int>& order) {
  if (order == op.labels) return;
  Ints perm;
  for (int l : order) perm.push_back(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin());
  op.t = op1(ctx, "Transpose", {op.t}, {{"perm", perm}});
  op.labels = order;
}

std::int64_t size_of(const Operand& op, int l) {
  return op.t.shape()[static_cast<std::size_t>(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin())];
}

std::int64_t product(const Operand& op, const std::vector<int>& labels) {
  std::int64_t n = 1;
  for (int l : labels) n *= size_of(op, l);
  return n;
}

Shape sizes(const Operand& op, const std::vector<int>& labels) {
  Shape s;
  for (int l : labels) s.push_back(size_of(op, l));
  return s;
}

// Sums a and b over what only one of them has and nothing later needs. A label to contract that has
// size 1 on one side broadcasts: summing that side over it (a squeeze) leaves it to the other.
void sum_private_labels(const NodeContext& ctx, Operand& a, Operand& b, const std::vector<int>& needed) {
  for (int l : std::vector<int>(a.labels)) {
    if (!has(b.labels, l) || has(needed, l)) continue;
    const std::int64_t sa = size_of(a, l), sb = size_of(b, l);
    if (sa == sb) continue;
    if (sa != 1 && sb != 1) {
      ctx.fail("label '" + std::string(1, l < 26 ? char('A' + l) : char('a' + l - 26)) + "' has sizes " +
               std::to_string(sa) + " and " + std::to_string(sb) + " in two inputs");
    }
    sum_labels(ctx, sa == 1 ? a : b, [&](int x) { return x == l; });
  }
  sum_labels(ctx, a, [&](int l) { return !has(b.labels, l) && !has(needed, l); });
  sum_labels(ctx, b, [&](int l) { return !has(a.labels, l) && !has(needed, l); });
}

// Contracts a with b, keeping the labels in `needed` (the output's and the later operands').
Operand contract(const NodeContext& ctx, Operand a, Operand b, const std::vector<int>& needed) {
  sum_private_labels(ctx, a, b, needed);
  std::vector<int> batch, k, m, n;
  for (int l : a.labels) (has(b.labels, l) ? (has(needed, l) ? batch : k) : m).push_back(l);
  for (int l : b.labels)
    if (!has(a.labels, l)) n.push_back(l);
  auto cat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  // An operand already laid out as [batch, K, M] (or [batch, N, K]) is read transposed by the cube
  // (BatchMatMul's adj_x / adj_y) rather than copied by a Transpose first.
  const bool adj_a = !k.empty() && a.labels == cat(batch, k, m) && a.labels != cat(batch, m, k);
  const bool adj_b = !k.empty() && b.labels == cat(batch, n, k) && b.labels != cat(batch, k, n);
  if (!adj_a) arrange(ctx, a, cat(batch, m, k));
  if (!adj_b) arrange(ctx, b, cat(batch, k, n));
  const std::int64_t mm = product(a, m), kk = product(a, k), nn = product(b, n);
  Shape out = sizes(a, batch), a_shape = out, b_shape = sizes(b, batch);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], b_shape[i]);
  a_shape.insert(a_shape.end(), {adj_a ? kk : mm, adj_a ? mm : kk});
  b_shape.insert(b_shape.end(), {adj_b ? nn : kk, adj_b ? kk : nn});
  Operand r;
  if (k.empty()) {  // an outer product: [.., M, 1] x [.., 1, N] on the vector unit
    r.t = op1(ctx, "Mul", {reshape(ctx, a.t, a_shape), reshape(ctx, b.t, b_shape)});
  } else {
    const Attrs adj{{"adj_x", std::int64_t{adj_a}}, {"adj_y", std::int64_t{adj_b}}};
    r.t = op1(ctx, "BatchMatMul", {reshape(ctx, a.t, a_shape), reshape(ctx, b.t, b_shape)}, adj);
  }
  const Shape ms = sizes(a, m), ns = sizes(b, n);
  out.insert(out.end(), ms.begin(), ms.end());
  out.insert(out.end(), ns.begin(), ns.end());
  r.t = reshape(ctx, r.t, out);
  r.labels = cat(batch, m, n);
  return r;
}

std::vector<Tensor> einsum(NodeContext& ctx) {
  if (ctx.inputs.empty()) ctx.fail("needs at least one input");
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) ctx.fail("input " + std::to_string(i) + " is empty");
  }
  const Equation eq = parse_equation(ctx);
  std::vector<Operand> ops;
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    ops.push_back({ctx.input(i), eq.inputs[i].labels});
    take_diagonals(ctx, ops.back());
  }
  while (ops.size() > 1) {
    std::vector<int> needed = eq.output;
    for (std::size_t i = 2; i < ops.size(); ++i)
      needed.insert(needed.end(), ops[i].labels.begin(), ops[i].labels.end());
    Operand r = contract(ctx, ops[0], ops[1], needed);
    ops.erase(ops.begin(), ops.begin() + 2);
    ops.insert(ops.begin(), std::move(r));
  }
  Operand& r = ops[0];
  sum_labels(ctx, r, [&](int l) { return !has(eq.output, l); });
  arrange(ctx, r, eq.output);
  return {r.t};
}

// ---- window functions ---------------------------------------------------------------------------

// HannWindow, HammingWindow, BlackmanWindow: the size input's value and the ONNX output_datatype
// become attributes; the size tensor stays input 0 (it places the op on its device).
template <const char* kType>
std::vector<Tensor> window(NodeContext& ctx) {
  if (!ctx.has_input(0) || ctx.input(0).numel() != 1) ctx.fail("needs the size input, one value");
  Attrs a;
  a.set("size", ctx.input_ints(0)[0]);
  a.set("periodic", ctx.attrs.get_int("periodic", 1));
  a.set("dtype", static_cast<std::int64_t>(dtype_from_onnx(onnx_type_attr(ctx, "output_datatype", 1), ctx.name)));
  return {call_op1(kType, {ctx.input(0)}, a, ctx.call())};
}

constexpr char kHann[] = "HannWindow", kHamming[] = "HammingWindow", kBlackman[] = "BlackmanWindow";

// MelWeightMatrix: its five scalar inputs become attributes; input 0 stays (it places the op).
std::vector<Tensor> mel_weight_matrix(NodeContext& ctx) {
  const char* names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
  Attrs a;
  for (std::size_t i = 0; i < 5; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).numel() != 1) ctx.fail(std::string(names[i]) + " must be one value");
    if (i < 3) {
      a.set(names[i], ctx.input_ints(i)[0]);
    } else {
      a.set(names[i], ctx.input_floats(i)[0]);
    }
  }
  a.set("dtype", static_cast<std::int64_t>(dtype_from_onnx(onnx_type_attr(ctx, "output_datatype", 1), ctx.name)));
  return {call_op1("MelWeightMatrix", {ctx.input(0)}, a, ctx.call())};
}

}  // namespace

NPUSCOPE_REGISTER_ONNX_ADAPTER("Einsum", einsum);
NPUSCOPE_REGISTER_ONNX_ADAPTER(kHann, window<kHann>);
NPUSCOPE_REGISTER_ONNX_ADAPTER(kHamming, window<kHamming>);
NPUSCOPE_REGISTER_ONNX_ADAPTER(kBlackman, window<kBlackman>);
NPUSCOPE_REGISTER_ONNX_ADAPTER("MelWeightMatrix", mel_weight_matrix);

}  // namespace npuscope::emulator::onnx_import
