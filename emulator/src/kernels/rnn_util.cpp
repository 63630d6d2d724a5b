// Geometry, validation, activations and cost of the recurrent ops (see rnn_util.h).
#include "rnn_util.h"

#include <cctype>
#include <string_view>

namespace npuscope::emulator::kernels {
namespace {

// Input i, when present, must have shape `want` and X's dtype.
void require_input(std::span<const TensorMeta> in, int i, const char* name, const Shape& want, const RnnGeom& g) {
  if (static_cast<int>(in.size()) <= i || !in[static_cast<std::size_t>(i)].present) return;
  const TensorMeta& m = in[static_cast<std::size_t>(i)];
  if (m.shape != want) {
    fail(g.op, std::string(name) + " must be " + shape_str(want) + ", got " + shape_str(m.shape) +
                   " (seq_length, batch_size, input_size and hidden_size come from X and R)");
  }
  if (m.dtype != in[0].dtype) {
    fail(g.op, std::string(name) + " has dtype " + std::string(dtype_name(m.dtype)) + " but X has " +
                   std::string(dtype_name(in[0].dtype)));
  }
}

// The state shape of initial_h / initial_c / Y_h / Y_c in the op's layout.
Shape state_shape(const RnnGeom& g) {
  return g.batch_major ? Shape{g.batch, g.dirs, g.hidden} : Shape{g.dirs, g.batch, g.hidden};
}

void parse_direction(const Attrs& attrs, RnnGeom& g) {
  const std::string dir = attrs.get_string("direction", "forward");
  if (dir == "bidirectional") {
    g.dirs = 2;
  } else if (dir == "reverse") {
    g.reverse_only = true;
  } else if (dir != "forward") {
    fail(g.op, "direction '" + dir + "' is not one of forward, reverse, bidirectional");
  }
  const std::int64_t layout = attrs.get_int("layout", 0);
  if (layout != 0 && layout != 1) fail(g.op, "layout must be 0 or 1, got " + std::to_string(layout));
  g.batch_major = layout == 1;
}

// The hidden size from R [D, G·H, H], checked against the attribute.
void parse_hidden(std::span<const TensorMeta> in, const Attrs& attrs, RnnGeom& g) {
  const Shape& r = in[kRnnR].shape;
  if (r.size() != 3)
    fail(g.op, "R must be 3-D [num_directions, " + std::to_string(g.gates) + "*hidden_size, hidden_size], got " +
                   shape_str(r));
  g.hidden = r[2];
  const std::int64_t attr = attrs.get_int("hidden_size", g.hidden);
  if (attr != g.hidden) {
    fail(g.op, "hidden_size = " + std::to_string(attr) + " but R " + shape_str(r) + " has hidden size " +
                   std::to_string(g.hidden));
  }
}

}  // namespace

RnnGeom rnn_geom(std::span<const TensorMeta> in, const Attrs& attrs, RnnKind kind) {
  RnnGeom g;
  g.kind = kind;
  g.op = kind == RnnKind::kLstm ? "LSTM" : kind == RnnKind::kGru ? "GRU" : "RNN";
  g.gates = kind == RnnKind::kLstm ? 4 : kind == RnnKind::kGru ? 3 : 1;
  parse_direction(attrs, g);
  for (int i : {kRnnX, kRnnW, kRnnR}) {
    if (!in[static_cast<std::size_t>(i)].present) fail(g.op, "inputs X, W and R are required");
  }
  if (!is_floating(in[0].dtype)) fail(g.op, "X must be floating, got " + std::string(dtype_name(in[0].dtype)));
  const Shape& x = in[kRnnX].shape;
  if (x.size() != 3) {
    fail(g.op, std::string("X must be 3-D ") + (g.batch_major ? "[batch, seq, input]" : "[seq, batch, input]") +
                   ", got " + shape_str(x));
  }
  g.seq = g.batch_major ? x[1] : x[0];
  g.batch = g.batch_major ? x[0] : x[1];
  g.input = x[2];
  parse_hidden(in, attrs, g);
  const std::int64_t gh = checked_mul(g.gates, g.hidden, g.op, "gates * hidden_size");
  require_input(in, kRnnW, "W", {g.dirs, gh, g.input}, g);
  require_input(in, kRnnR, "R", {g.dirs, gh, g.hidden}, g);
  require_input(in, kRnnB, "B", {g.dirs, 2 * gh}, g);
  require_input(in, kRnnH0, "initial_h", state_shape(g), g);
  if (kind == RnnKind::kLstm) {
    require_input(in, kRnnC0, "initial_c", state_shape(g), g);
    require_input(in, kRnnP, "P", {g.dirs, 3 * g.hidden}, g);
  }
  if (in.size() > kRnnLens && in[kRnnLens].present) {
    const TensorMeta& l = in[kRnnLens];
    if (l.dtype != DType::kI32 && l.dtype != DType::kI64) {
      fail(g.op, "sequence_lens must be int32 or int64, got " + std::string(dtype_name(l.dtype)));
    }
    if (l.shape != Shape{g.batch})
      fail(g.op, "sequence_lens must be [" + std::to_string(g.batch) + "], got " + shape_str(l.shape));
  }
  const double clip = attrs.get_float("clip", 0);
  if (attrs.has("clip") && !(clip > 0)) fail(g.op, "clip must be > 0, got " + std::to_string(clip));
  return g;
}

std::vector<TensorMeta> rnn_infer(std::span<const TensorMeta> in, const Attrs& attrs, RnnKind kind) {
  const RnnGeom g = rnn_geom(in, attrs, kind);
  (void)rnn_activations(attrs, g);  // validates the names and their count
  auto what = [] { return std::string("Y size"); };
  checked_mul(checked_mul(checked_mul(g.seq, g.batch, g.op, what), g.dirs, g.op, what), g.hidden, g.op, what);
  const Shape y = g.batch_major ? Shape{g.batch, g.seq, g.dirs, g.hidden} : Shape{g.seq, g.dirs, g.batch, g.hidden};
  std::vector<TensorMeta> out{{y, in[0].dtype}, {state_shape(g), in[0].dtype}};
  if (kind == RnnKind::kLstm) out.push_back({state_shape(g), in[0].dtype});
  return out;
}

// ---- activations --------------------------------------------------------------------------------
namespace {

struct ActName {
  std::string_view name;
  RnnAct kind;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float alpha, beta;
};
constexpr ActName kActs[] = {
    {"sigmoid", RnnAct::kSigmoid, 0, 0, 0},
    {"tanh", RnnAct::kTanh, 0, 0, 0},
    {"relu", RnnAct::kRelu, 0, 0, 0},
    {"affine", RnnAct::kAffine, 2, 1.0f, 0.0f},
    {"leakyrelu", RnnAct::kLeakyRelu, 1, 0.01f, 0},
    {"thresholdedrelu", RnnAct::kThresholdedRelu, 1, 1.0f, 0},
    {"scaledtanh", RnnAct::kScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", RnnAct::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", RnnAct::kElu, 1, 1.0f, 0},
    {"softsign", RnnAct::kSoftsign, 0, 0, 0},
    {"softplus", RnnAct::kSoftplus, 0, 0, 0},
};

const ActName* find_act(std::string name) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const ActName& a : kActs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<Activation> rnn_activations(const Attrs& attrs, const RnnGeom& g) {
  static const std::vector<RnnAct> kDefaults[] = {
      {RnnAct::kTanh}, {RnnAct::kSigmoid, RnnAct::kTanh}, {RnnAct::kSigmoid, RnnAct::kTanh, RnnAct::kTanh}};
  const std::vector<RnnAct>& defaults = kDefaults[static_cast<int>(g.kind)];
  const auto per_dir = static_cast<std::int64_t>(defaults.size());
  const std::string list = attrs.get_string("activations", "");
  if (list.empty()) {
    std::vector<Activation> out;
    for (std::int64_t d = 0; d < g.dirs; ++d) {
      for (RnnAct k : defaults) out.push_back({k, 0, 0});
    }
    return out;
  }
  const std::vector<std::string> names = split_names(list);
  const auto n = static_cast<std::int64_t>(names.size());
  if (n != per_dir * g.dirs) {
    fail(g.op, "activations lists " + std::to_string(n) + " functions, expected " + std::to_string(per_dir * g.dirs) +
                   " (" + std::to_string(per_dir) + " per direction)");
  }
  const std::vector<double> alphas = attrs.get_floats("activation_alpha"), betas = attrs.get_floats("activation_beta");
  std::size_t ia = 0, ib = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    const ActName* a = find_act(name);
    if (a == nullptr) {
      fail(g.op, "unknown activation '" + name +
                     "' (supported: Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                     "HardSigmoid, Elu, Softsign, Softplus)");
    }
    Activation act{a->kind, a->alpha, a->beta};
    if (a->params >= 1 && ia < alphas.size()) act.alpha = static_cast<float>(alphas[ia++]);
    if (a->params >= 2 && ib < betas.size()) act.beta = static_cast<float>(betas[ib++]);
    out.push_back(act);
  }
  return out;
}

// ---- cost ---------------------------------------------------------------------------------------
namespace {

// Vector flops per hidden unit and step of the gate math (activations count ~4 each).
double gate_flops(RnnKind kind) { return kind == RnnKind::kLstm ? 40 : kind == RnnKind::kGru ? 30 : 8; }

}  // namespace

KernelCost rnn_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs, RnnKind kind) {
  const RnnGeom g = rnn_geom(in, attrs, kind);
  const double steps = static_cast<double>(g.dirs * g.seq * g.batch);
  KernelCost c = cube_cost(g.dirs, g.seq * g.batch, g.gh(), g.input + g.hidden, io_bytes(in, out), out_bytes(out));
  c.flops += steps * static_cast<double>(g.hidden) * gate_flops(kind);
  return c;
}

std::uint64_t rnn_device_ns(const DeviceSpec& spec, const RnnGeom& g, DType dtype, bool extra_step_gemm) {
  const double es = static_cast<double>(dtype_size(dtype)), f32 = 4;
  const auto D = static_cast<double>(g.dirs), TB = static_cast<double>(g.seq * g.batch);
  const auto B = static_cast<double>(g.batch), H = static_cast<double>(g.hidden), GH = static_cast<double>(g.gh());
  const auto I = static_cast<double>(g.input);
  const KernelCost proj =
      cube_cost(g.dirs, g.seq * g.batch, g.gh(), g.input, (TB * I + D * GH * I) * es + D * TB * GH * f32);
  const KernelCost step =
      cube_cost(g.dirs, g.batch, g.gh(), g.hidden, (D * GH * H + D * B * H) * es + D * B * GH * f32);
  const KernelCost extra =
      cube_cost(g.dirs, g.batch, g.hidden, g.hidden, (D * H * H + D * B * H) * es + D * B * H * f32);
  KernelCost gates;
  gates.flops = D * B * H * gate_flops(g.kind);
  gates.bytes = D * B * (2 * GH * f32 + 2 * H * es + (g.kind == RnnKind::kLstm ? 2 * H * f32 : 0));
  const CostEstimate ep = estimate_kernel(spec, proj, dtype);
  // The parts' work without their launch overheads: one kernel pays one.
  auto work = [&](const KernelCost& c) {
    const CostEstimate e = estimate_kernel(spec, c, dtype);
    return static_cast<double>(e.duration_ns - e.overhead_ns);
  };
  double per_step = work(step) + work(gates) + (extra_step_gemm ? work(extra) : 0.0);
  const double total = static_cast<double>(ep.duration_ns) + static_cast<double>(g.seq) * per_step;
  return total >= static_cast<double>(kMaxTaskNs) ? kMaxTaskNs : static_cast<std::uint64_t>(total);
}

void rnn_model_time(KernelContext& ctx, const RnnGeom& g, bool extra_step_gemm) {
  if (ctx.backend != Backend::kNpu || ctx.spec == nullptr) return;
  ctx.device_ns = std::max<std::uint64_t>(1, rnn_device_ns(*ctx.spec, g, ctx.compute_dtype, extra_step_gemm));
}

bool rnn_supports(std::span<const TensorMeta> in, const Attrs&) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i != kRnnLens && in[i].present && !cube_dtype(in[i].dtype)) return false;
  }
  return true;
}

}  // namespace npuscope::emulator::kernels
