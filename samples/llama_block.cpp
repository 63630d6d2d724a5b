// One LLaMA-style decoder layer on the emulator: RMSNorm, Q/K/V projections, rotary embedding,
// causal attention with Softmax, output projection, RMSNorm and a SwiGLU MLP, with residuals.
//
//   llama_block --device npu            # f16 on the emulated Ascend 910B
//   llama_block --device cpu            # the f32 golden run
//   llama_block --seq 256 --hidden 1024 --heads 16 --layers 2
//
// Op names follow the model structure (layer0/attn/q_proj...), so an NPU run and a CPU run match up
// op by op.
#include <cmath>
#include <string>
#include <vector>

#include "sample_common.h"

namespace emu = npuscope::emulator;
namespace ops = npuscope::emulator::ops;
using npuscope::samples::CommonOptions;

namespace {

struct LlamaConfig {
  std::int64_t batch = 1, seq = 64, hidden = 256, heads = 4, ffn = 688;
  int layers = 1;
  float rope_theta = 10000.0f;
};

struct LayerWeights {
  emu::Tensor attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down;
};

LayerWeights make_layer(const LlamaConfig& c, emu::DType dtype, emu::DeviceRef dev, std::uint64_t seed) {
  const float std_in = 1.0f / std::sqrt(static_cast<float>(c.hidden));
  const float std_ffn = 1.0f / std::sqrt(static_cast<float>(c.ffn));
  auto ones = std::vector<float>(static_cast<std::size_t>(c.hidden), 1.0f);
  LayerWeights w;
  w.attn_norm = emu::Tensor::from_floats(ones, {c.hidden}, dtype, dev);
  w.mlp_norm = emu::Tensor::from_floats(ones, {c.hidden}, dtype, dev);
  w.wq = emu::Tensor::randn({c.hidden, c.hidden}, dtype, dev, seed + 1, std_in);
  w.wk = emu::Tensor::randn({c.hidden, c.hidden}, dtype, dev, seed + 2, std_in);
  w.wv = emu::Tensor::randn({c.hidden, c.hidden}, dtype, dev, seed + 3, std_in);
  w.wo = emu::Tensor::randn({c.hidden, c.hidden}, dtype, dev, seed + 4, std_in);
  w.w_gate = emu::Tensor::randn({c.hidden, c.ffn}, dtype, dev, seed + 5, std_in);
  w.w_up = emu::Tensor::randn({c.hidden, c.ffn}, dtype, dev, seed + 6, std_in);
  w.w_down = emu::Tensor::randn({c.ffn, c.hidden}, dtype, dev, seed + 7, std_ffn);
  return w;
}

// cos/sin tables [S, D/2] for rotate-half rotary embedding.
std::pair<emu::Tensor, emu::Tensor> rope_tables(const LlamaConfig& c, emu::DType dtype, emu::DeviceRef dev) {
  const std::int64_t half = c.hidden / c.heads / 2;
  std::vector<float> cos(static_cast<std::size_t>(c.seq * half)), sin(cos.size());
  for (std::int64_t s = 0; s < c.seq; ++s) {
    for (std::int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(static_cast<double>(c.rope_theta), -2.0 * static_cast<double>(i) / (2.0 * half));
      cos[static_cast<std::size_t>(s * half + i)] = static_cast<float>(std::cos(s * freq));
      sin[static_cast<std::size_t>(s * half + i)] = static_cast<float>(std::sin(s * freq));
    }
  }
  return {emu::Tensor::from_floats(cos, {c.seq, half}, dtype, dev),
          emu::Tensor::from_floats(sin, {c.seq, half}, dtype, dev)};
}

// Additive causal mask [S, S]: 0 on and below the diagonal, a large negative above (finite, so that
// f16 softmax stays NaN-free).
emu::Tensor causal_mask(const LlamaConfig& c, emu::DType dtype, emu::DeviceRef dev) {
  std::vector<float> mask(static_cast<std::size_t>(c.seq * c.seq), 0.0f);
  for (std::int64_t i = 0; i < c.seq; ++i) {
    for (std::int64_t j = i + 1; j < c.seq; ++j) mask[static_cast<std::size_t>(i * c.seq + j)] = -30000.0f;
  }
  return emu::Tensor::from_floats(mask, {c.seq, c.seq}, dtype, dev);
}

emu::Tensor split_heads(const emu::Tensor& x, const LlamaConfig& c, const char* name) {
  const std::int64_t head_dim = c.hidden / c.heads;
  auto r = ops::reshape(x, {c.batch, c.seq, c.heads, head_dim}, {.name = std::string(name) + "_reshape"});
  return ops::transpose(r, {0, 2, 1, 3}, {.name = std::string(name) + "_transpose"});
}

emu::Tensor attention(const emu::Tensor& h, const LayerWeights& w, const LlamaConfig& c, const emu::Tensor& cos,
                      const emu::Tensor& sin, const emu::Tensor& mask, const emu::Tensor& scale) {
  emu::NameScope scope("attn");
  auto q = split_heads(ops::matmul(h, w.wq, {.name = "q_proj"}), c, "q");
  auto k = split_heads(ops::matmul(h, w.wk, {.name = "k_proj"}), c, "k");
  auto v = split_heads(ops::matmul(h, w.wv, {.name = "v_proj"}), c, "v");
  q = ops::rotary_embedding(q, cos, sin, false, {.name = "q_rope"});
  k = ops::rotary_embedding(k, cos, sin, false, {.name = "k_rope"});
  auto kt = ops::transpose(k, {0, 1, 3, 2}, {.name = "k_t"});
  auto scores = ops::mul(ops::matmul(q, kt, {.name = "qk"}), scale, {.name = "scale"});
  auto probs = ops::softmax(ops::add(scores, mask, {.name = "mask"}), -1, {.name = "softmax"});
  auto ctx = ops::matmul(probs, v, {.name = "pv"});
  ctx = ops::reshape(ops::transpose(ctx, {0, 2, 1, 3}, {.name = "merge_transpose"}), {c.batch, c.seq, c.hidden},
                     {.name = "merge_reshape"});
  return ops::matmul(ctx, w.wo, {.name = "o_proj"});
}

emu::Tensor mlp(const emu::Tensor& h, const LayerWeights& w) {
  emu::NameScope scope("mlp");
  auto gate = ops::silu(ops::matmul(h, w.w_gate, {.name = "gate_proj"}), {.name = "act"});
  auto up = ops::matmul(h, w.w_up, {.name = "up_proj"});
  return ops::matmul(ops::mul(gate, up, {.name = "gate_mul"}), w.w_down, {.name = "down_proj"});
}

int run(int argc, char** argv) {
  LlamaConfig c;
  CommonOptions common;
  npuscope::samples::po::options_description desc("llama_block: one LLaMA-style decoder layer on the emulated NPU");
  npuscope::samples::add_common_options(desc, common);
  desc.add_options()("batch", npuscope::samples::po::value(&c.batch)->default_value(c.batch), "batch size")(
      "seq", npuscope::samples::po::value(&c.seq)->default_value(c.seq), "sequence length")(
      "hidden", npuscope::samples::po::value(&c.hidden)->default_value(c.hidden), "hidden size")(
      "heads", npuscope::samples::po::value(&c.heads)->default_value(c.heads), "attention heads")(
      "ffn", npuscope::samples::po::value(&c.ffn)->default_value(c.ffn), "MLP intermediate size")(
      "layers", npuscope::samples::po::value(&c.layers)->default_value(c.layers), "decoder layers");
  int exit_code = 0;
  if (!npuscope::samples::parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  if (c.batch < 1 || c.seq < 1 || c.heads < 1 || c.ffn < 1 || c.layers < 1 || c.hidden % c.heads != 0 ||
      (c.hidden / c.heads) % 2 != 0) {
    throw emu::InvalidArgument("sizes must be positive and hidden/heads an even head dimension");
  }
  npuscope::samples::configure_runtime(common);
  const emu::DeviceRef dev = common.device_ref();
  const emu::DType dtype = common.dtype_value();

  std::vector<LayerWeights> layers;
  for (int l = 0; l < c.layers; ++l) layers.push_back(make_layer(c, dtype, dev, common.seed + 100 * l));
  auto [cos, sin] = rope_tables(c, dtype, dev);
  auto mask = causal_mask(c, dtype, dev);
  const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(c.hidden / c.heads));
  auto scale = emu::Tensor::from_floats(std::vector<float>{inv_sqrt_d}, {1}, dtype, dev);
  auto x0 = emu::Tensor::randn({c.batch, c.seq, c.hidden}, dtype, dev, common.seed + 7);

  npuscope::samples::RunTimer timer(dev);
  emu::Tensor x;
  for (int it = 0; it < common.iterations; ++it) {
    x = x0;
    for (int l = 0; l < c.layers; ++l) {
      emu::NameScope scope("layer" + std::to_string(l));
      const LayerWeights& w = layers[static_cast<std::size_t>(l)];
      auto h = ops::rms_norm(x, w.attn_norm, 1e-6f, {.name = "attn_norm"});
      x = ops::add(x, attention(h, w, c, cos, sin, mask, scale), {.name = "attn_residual"});
      h = ops::rms_norm(x, w.mlp_norm, 1e-6f, {.name = "mlp_norm"});
      x = ops::add(x, mlp(h, w), {.name = "mlp_residual"});
    }
  }
  npuscope::samples::print_summary("llama_block", common, x, timer);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return npuscope::samples::run_sample("llama_block", [&] { return run(argc, argv); });
}
