// Pairs of runs whose difference is known in advance: what `npuscope diff BASE.db NEW.db` must
// find between them (its tests run them under `npuscope run`; they double as demos, docs/diff.md).
// Each step runs an MLP block (ffn: MatMul, Gelu, MatMul, Add) and a projection head (proj/MatMul,
// head/Softmax) on 512 rows of 1024, inside a step marker.
//
//   diff_cases --variant base         the reference
//   diff_cases --variant misaligned   proj/MatMul's K is 1030, not 1024: not a multiple of 16, so the
//                                     cube pads it to 1040 (and its inputs' rows are not 32-byte
//                                     aligned); nothing else changes
//   diff_cases --variant fallback     mlp/gelu computes in f64, which no NPU kernel does: an AI CPU
//                                     task (two Casts around it)
//   diff_cases --variant renamed      the mlp/ scope is called ffn/ (a refactoring that renamed it)
//   diff_cases --steps 4 --grow       4 steps; with --grow, step s runs (s + 1) x 512 rows
//
// Plus the common flags: --precision-mode, --dtype (f32 with must_keep_origin_dtype vs force_fp16:
// cube time falls), --device, --spec.
#include <cstdint>
#include <cstdio>
#include <string>

#include "npuscope/emulator/markers.h"
#include "sample_common.h"

namespace {

namespace emu = npuscope::emulator;
namespace ops = npuscope::emulator::ops;
using npuscope::samples::CommonOptions;
namespace po = npuscope::samples::po;

constexpr std::int64_t kRows = 512, kHidden = 1024, kClasses = 256;

struct Weights {
  emu::Tensor w1, w2, wp;
};

Weights make_weights(const std::string& variant, emu::DType dtype, emu::DeviceRef dev, std::uint64_t seed) {
  const std::int64_t k = variant == "misaligned" ? 1030 : kHidden;
  return {emu::Tensor::randn({kHidden, kHidden}, dtype, dev, seed + 1, 0.03f),
          emu::Tensor::randn({kHidden, kHidden}, dtype, dev, seed + 2, 0.03f),
          emu::Tensor::randn({k, kClasses}, dtype, dev, seed + 3, 0.03f)};
}

emu::Tensor step(const std::string& variant, const Weights& w, std::int64_t rows, emu::DType dtype, emu::DeviceRef dev,
                 std::uint64_t seed) {
  const std::string scope = variant == "renamed" ? "ffn/" : "mlp/";
  const auto x = emu::Tensor::uniform({rows, kHidden}, dtype, dev, seed, -1, 1);
  auto h = ops::matmul(x, w.w1, {.name = scope + "fc1"});
  if (variant == "fallback") {
    h = ops::cast(h, emu::DType::kF64, {.name = scope + "gelu/cast_in"});
    h = ops::gelu(h, {.name = scope + "gelu"});
    h = ops::cast(h, dtype, {.name = scope + "gelu/cast_out"});
  } else {
    h = ops::gelu(h, {.name = scope + "gelu"});
  }
  h = ops::matmul(h, w.w2, {.name = scope + "fc2"});
  h = ops::add(h, x, {.name = scope + "residual"});
  // The head reads features of its own: the misaligned variant changes its K and nothing else.
  const auto features = emu::Tensor::uniform({rows, w.wp.shape()[0]}, dtype, dev, seed + 7, -1, 1);
  const auto logits = ops::matmul(features, w.wp, {.name = "proj/MatMul"});
  ops::softmax(logits, -1, {.name = "head/Softmax"});
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  CommonOptions o;
  std::string variant = "base";
  int steps = 1;
  bool grow = false;
  po::options_description desc("diff_cases: pairs of runs with a known difference (docs/diff.md)");
  npuscope::samples::add_common_options(desc, o);
  desc.add_options()("variant", po::value(&variant)->default_value(variant), "base | misaligned | fallback | renamed")(
      "steps", po::value(&steps)->default_value(steps), "steps to run, each inside a step marker")(
      "grow", po::bool_switch(&grow), "step s runs (s + 1) x 512 rows");
  int exit_code = 0;
  if (!npuscope::samples::parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  if (variant != "base" && variant != "misaligned" && variant != "fallback" && variant != "renamed") {
    std::fprintf(stderr, "diff_cases: error: unknown --variant '%s' (base, misaligned, fallback, renamed)\n",
                 variant.c_str());
    return 2;
  }
  try {
    npuscope::samples::configure_runtime(o);
    const emu::DeviceRef dev = o.device_ref();
    const emu::DType dtype = o.dtype_value();
    const Weights w = make_weights(variant, dtype, dev, o.seed);
    const npuscope::samples::RunTimer timer(dev);
    emu::Tensor out;
    for (int s = 0; s < steps; ++s) {
      const emu::ScopedStep marker(s);
      out = step(variant, w, grow ? kRows * (s + 1) : kRows, dtype, dev, o.seed + 100 * static_cast<std::uint64_t>(s));
      if (dev.is_npu()) emu::Runtime::get().device(dev.index).synchronize();
    }
    npuscope::samples::print_summary(("diff_cases --variant " + variant).c_str(), o, out, timer);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diff_cases: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
