// LSTM, GRU and RNN: every option ONNX allows (directions, layouts, initial states, sequence
// lengths, peepholes, input_forget, linear_before_reset, activations with alpha/beta, clip, no
// bias) against the f64 reference of rnn_reference.h, on the cpu and on the npu in
// must_keep_origin_dtype (f32 cube).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/op_test_util.h"
#include "emulator/rnn_reference.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class RnnOptionsTest : public OpTest {};

using V = std::vector<double>;

// [a, b, c] -> [b, a, c].
V swap01(const V& v, std::int64_t a, std::int64_t b, std::int64_t c) {
  V out(v.size());
  for (std::int64_t i = 0; i < a; ++i) {
    for (std::int64_t j = 0; j < b; ++j) {
      for (std::int64_t k = 0; k < c; ++k)
        out[static_cast<std::size_t>((j * a + i) * c + k)] = v[static_cast<std::size_t>((i * b + j) * c + k)];
    }
  }
  return out;
}

Tensor tensor(const V& v, Shape shape) { return floats(std::vector<float>(v.begin(), v.end()), std::move(shape)); }

// The op's inputs for a case, in its layout, optional ones left undefined.
std::vector<Tensor> inputs_of(const RnnCase& c, const RnnData& v) {
  const std::int64_t D = c.dirs(), gh = c.gates() * c.hidden, T = c.seq, B = c.batch, H = c.hidden;
  const bool bm = c.layout == 1;
  auto state = [&](const V& s) { return bm ? tensor(swap01(s, D, B, H), {B, D, H}) : tensor(s, {D, B, H}); };
  std::vector<Tensor> in{bm ? tensor(swap01(v.x, T, B, c.input), {B, T, c.input}) : tensor(v.x, {T, B, c.input}),
                         tensor(v.w, {D, gh, c.input}),
                         tensor(v.r, {D, gh, H}),
                         Tensor(),
                         Tensor(),
                         Tensor()};
  if (c.bias) in[3] = tensor(v.b, {D, 2 * gh});
  if (!c.lens.empty()) in[4] = Tensor::from_ints(c.lens, {B}, DType::kI32);
  if (c.h0) in[5] = state(v.h0);
  if (c.op == "LSTM") {
    in.push_back(c.c0 ? state(v.c0) : Tensor());
    in.push_back(c.peepholes ? tensor(v.p, {D, 3 * H}) : Tensor());
  }
  while (!in.back().defined()) in.pop_back();
  return in;
}

Attrs attrs_of(const RnnCase& c) {
  Attrs a{{"direction", c.direction}, {"layout", std::int64_t{c.layout}}, {"hidden_size", c.hidden}};
  if (c.op == "LSTM") a.set("input_forget", std::int64_t{c.input_forget});
  if (c.op == "GRU") a.set("linear_before_reset", std::int64_t{c.linear_before_reset});
  if (c.clip > 0) a.set("clip", c.clip);
  if (!c.activations.empty()) {
    std::string list;
    for (const auto& n : c.activations) list += (list.empty() ? "" : ",") + n;
    a.set("activations", list);
  }
  if (!c.alpha.empty()) a.set("activation_alpha", c.alpha);
  if (!c.beta.empty()) a.set("activation_beta", c.beta);
  return a;
}

// Runs the case on one backend and compares Y, Y_h (and Y_c) with the reference.
void check_on(const RnnCase& c, bool npu) {
  const RnnData v = rnn_data(c);
  const RnnOut ref = rnn_reference(c, v);
  std::vector<Tensor> in = inputs_of(c, v);
  if (npu) in = on_npu(in);
  const std::vector<Tensor> out = call_op(c.op, in, attrs_of(c));
  ASSERT_EQ(out.size(), c.op == "LSTM" ? 3u : 2u);
  const std::int64_t D = c.dirs(), T = c.seq, B = c.batch, H = c.hidden;
  V y = to_vec(out[0]), yh = to_vec(out[1]);
  if (c.layout == 1) {           // [B, T, D, H] -> [T, D, B, H]
    y = swap01(y, B, T, D * H);  // [T, B, D, H]
    V tdbh(y.size());
    for (std::int64_t t = 0; t < T; ++t) {
      const V slice(y.begin() + t * B * D * H, y.begin() + (t + 1) * B * D * H);
      const V s = swap01(slice, B, D, H);
      std::copy(s.begin(), s.end(), tdbh.begin() + t * B * D * H);
    }
    y = tdbh;
    yh = swap01(yh, B, D, H);
  }
  const char* where = npu ? "npu" : "cpu";
  EXPECT_TRUE(all_close(y, ref.y, 1e-5, 1e-5)) << where << " Y";
  EXPECT_TRUE(all_close(yh, ref.yh, 1e-5, 1e-5)) << where << " Y_h";
  if (c.op == "LSTM") {
    V yc = to_vec(out[2]);
    if (c.layout == 1) yc = swap01(yc, B, D, H);
    EXPECT_TRUE(all_close(yc, ref.yc, 1e-5, 1e-5)) << where << " Y_c";
  }
}

void check(const std::vector<std::pair<std::string, RnnCase>>& cases) {
  for (const auto& [name, c] : cases) {
    SCOPED_TRACE(c.op + " " + name);
    check_on(c, false);
    check_on(c, true);
  }
}

// The options every op has, for `op`.
std::vector<std::pair<std::string, RnnCase>> common_cases(const std::string& op) {
  RnnCase base;
  base.op = op;
  std::vector<std::pair<std::string, RnnCase>> out;
  auto add = [&](const char* name, auto edit) {
    RnnCase c = base;
    edit(c);
    out.emplace_back(name, c);
  };
  add("defaults", [](RnnCase&) {});
  add("no bias", [](RnnCase& c) { c.bias = false; });
  add("reverse", [](RnnCase& c) { c.direction = "reverse"; });
  add("bidirectional", [](RnnCase& c) { c.direction = "bidirectional"; });
  add("initial states", [](RnnCase& c) { c.h0 = c.c0 = true; });
  add("layout 1 bidirectional with states", [](RnnCase& c) {
    c.layout = 1;
    c.direction = "bidirectional";
    c.h0 = c.c0 = true;
  });
  add("sequence_lens forward", [](RnnCase& c) {
    c.seq = 4;
    c.batch = 3;
    c.lens = {4, 2, 0};
    c.h0 = c.c0 = true;
  });
  add("sequence_lens bidirectional layout 1", [](RnnCase& c) {
    c.seq = 4;
    c.batch = 3;
    c.lens = {1, 4, 3};
    c.direction = "bidirectional";
    c.layout = 1;
  });
  add("sequence_lens reverse", [](RnnCase& c) {
    c.seq = 3;
    c.lens = {2, 3};
    c.direction = "reverse";
  });
  add("clip", [](RnnCase& c) { c.clip = 0.4; });
  add("hidden 17, batch 5", [](RnnCase& c) {
    c.hidden = 17;
    c.batch = 5;
    c.input = 7;
  });
  return out;
}

}  // namespace

TEST_F(RnnOptionsTest, LstmOptions) {
  auto cases = common_cases("LSTM");
  RnnCase c;
  c.peepholes = true;
  c.h0 = c.c0 = true;
  cases.emplace_back("peepholes", c);
  c.direction = "bidirectional";
  c.clip = 0.5;
  cases.emplace_back("peepholes bidirectional clip", c);
  RnnCase f;
  f.input_forget = 1;
  f.peepholes = true;
  cases.emplace_back("input_forget", f);
  RnnCase a;
  a.direction = "bidirectional";
  a.activations = {"HardSigmoid", "Elu", "Softsign", "LeakyRelu", "ScaledTanh", "Affine"};
  a.alpha = {0.3, 0.9, 0.05, 0.7};  // Affine's alpha runs out: its default 1
  a.beta = {0.4, 1.2, 0.1};
  cases.emplace_back("activations with alpha/beta", a);
  RnnCase r;
  r.activations = {"Sigmoid", "Relu", "Softplus"};
  cases.emplace_back("relu softplus", r);
  check(cases);
}

TEST_F(RnnOptionsTest, GruOptions) {
  auto cases = common_cases("GRU");
  for (auto& [name, c] : common_cases("GRU")) {
    c.linear_before_reset = 1;
    cases.emplace_back(name + ", linear_before_reset", c);
  }
  RnnCase a;
  a.op = "GRU";
  a.direction = "bidirectional";
  a.activations = {"ThresholdedRelu", "Softplus", "HardSigmoid", "ScaledTanh"};
  a.alpha = {-0.2, 0.25, 0.8};
  a.beta = {0.45};  // ScaledTanh's beta runs out: its default 1
  cases.emplace_back("activations with alpha/beta", a);
  a.linear_before_reset = 1;
  a.clip = 0.3;
  cases.emplace_back("activations, linear_before_reset, clip", a);
  check(cases);
}

TEST_F(RnnOptionsTest, RnnOptions) {
  auto cases = common_cases("RNN");
  RnnCase a;
  a.op = "RNN";
  a.direction = "bidirectional";
  a.activations = {"Relu", "Affine"};
  a.alpha = {0.5};
  a.beta = {-0.25};
  cases.emplace_back("relu and affine", a);
  a.activations = {"Sigmoid", "Elu"};
  a.alpha = {};
  a.beta = {};
  cases.emplace_back("sigmoid and elu default alpha", a);
  check(cases);
}
