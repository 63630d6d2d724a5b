// Bernoulli: random 0/1 values, what dropout draws its mask with (aten bernoulli_.float on the
// PyTorch device). Counter-based, as an NPU's random ops are (stateless, parallel): element i of a
// draw is 1 when uniform(hash(seed, offset + i)) < p, so a seed and an offset give the same values
// on both backends and in any block split. The seed comes from the caller (the PyTorch device draws
// it from PyTorch's default generator, so torch.manual_seed makes runs repeat).
//   Bernoulli  input x (its shape and dtype are the output's; its values are not read, so the output
//              may be x itself); attrs p (float in [0, 1]), seed (int), offset (int, 0).
//   Randperm   a permutation of 0 .. n - 1 (torch.randperm: detection's samplers), in input 0's
//              dtype (int32 / int64; its values are not read); attrs n, seed. A Fisher-Yates shuffle
//              whose draws are the same counter-based hashes; an AI CPU op, as on Ascend (CPU kernel
//              only, run as an AI CPU task on the NPU).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernel_util.h"

namespace npuscope::emulator::kernels {
namespace {

constexpr char kBernoulli[] = "Bernoulli";

std::vector<TensorMeta> infer_bernoulli(std::span<const TensorMeta> in, const Attrs& attrs) {
  const double p = attrs.get_float("p", 0.5);
  if (!(p >= 0.0 && p <= 1.0)) fail(kBernoulli, "p must be in [0, 1], got " + std::to_string(p));
  return {{in[0].shape, in[0].dtype}};
}

KernelCost cost_bernoulli(std::span<const TensorMeta>, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost({}, out, 8);  // the hash and the compare; the input is not read
}

// SplitMix64's finaliser: a well-mixed 64-bit value per (seed, counter).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void bernoulli_kernel(KernelContext& ctx) {
  const double p = ctx.attrs.get_float("p", 0.5);
  const auto seed = static_cast<std::uint64_t>(ctx.attrs.get_int("seed", 0));
  const auto offset = static_cast<std::uint64_t>(ctx.attrs.get_int("offset", 0));
  const std::uint64_t key = mix(seed);
  const TensorView& out = ctx.outputs[0];
  // 53 random bits as a double in [0, 1), compared with p: exact for any p.
  constexpr double kScale = 1.0 / 9007199254740992.0;
  std::vector<double> v(static_cast<std::size_t>(out.numel));
  for (std::int64_t i = 0; i < out.numel; ++i) {
    const double u = static_cast<double>(mix(key ^ (offset + static_cast<std::uint64_t>(i))) >> 11) * kScale;
    v[static_cast<std::size_t>(i)] = u < p ? 1.0 : 0.0;
  }
  store_f64_raw(out, v.data());
}

constexpr char kRandperm[] = "Randperm";

std::vector<TensorMeta> infer_randperm(std::span<const TensorMeta> in, const Attrs& attrs) {
  if (in[0].dtype != DType::kI64 && in[0].dtype != DType::kI32) {
    fail(kRandperm, "input 0 (the dtype) must be int32 or int64, got " + std::string(dtype_name(in[0].dtype)));
  }
  const std::int64_t n = attrs.get_int("n", -1);
  if (n < 0) fail(kRandperm, "needs the attribute 'n' >= 0, got " + std::to_string(n));
  if (in[0].dtype == DType::kI32 && n > (std::int64_t{1} << 31)) {
    fail(kRandperm, "n " + std::to_string(n) + " does not fit in int32");
  }
  return {{{n}, in[0].dtype}};
}

KernelCost cost_randperm(std::span<const TensorMeta>, std::span<const TensorMeta> out, const Attrs&) {
  return vector_cost({}, out, 8);  // a hash and a swap per element
}

void randperm_kernel(KernelContext& ctx) {
  const std::uint64_t key = mix(static_cast<std::uint64_t>(ctx.attrs.get_int("seed", 0)));
  const TensorView& out = ctx.outputs[0];
  std::vector<std::int64_t> v(static_cast<std::size_t>(out.numel));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::uint64_t j = mix(key ^ static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i);
    std::swap(v[i - 1], v[static_cast<std::size_t>(j)]);
  }
  store_i64(out, v.data());
}

}  // namespace

NPUSCOPE_REGISTER_OP(OpSchema{.type = kRandperm,
                              .category = OpCategory::kVector,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_randperm,
                              .cost = cost_randperm});
NPUSCOPE_REGISTER_KERNEL(kRandperm, Backend::kCpu, randperm_kernel);

NPUSCOPE_REGISTER_OP(OpSchema{.type = kBernoulli,
                              .category = OpCategory::kDataMovement,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .infer = infer_bernoulli,
                              .cost = cost_bernoulli});
NPUSCOPE_REGISTER_KERNEL_FOR_BOTH(kBernoulli, bernoulli_kernel);

}  // namespace npuscope::emulator::kernels
