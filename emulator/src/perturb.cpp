// See Note [Perturbation] in perturb.h.
#include "npuscope/emulator/perturb.h"

#include <fnmatch.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "kernels/kernel_util.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/float16.h"
#include "perturb_apply.h"

namespace npuscope::emulator {

struct PerturbSet {
  struct Entry {
    PerturbRule rule;
    mutable std::atomic<std::uint64_t> ops{0}, outputs{0};  // bumped by device workers
  };
  explicit PerturbSet(std::size_t n) : entries(n) {}
  std::vector<Entry> entries;
};

namespace detail {
std::atomic<const PerturbSet*> g_perturbations{nullptr};
}

namespace {

constexpr const char* kModes = "noise[=REL], bitflip[=BIT] or f16";

// Every set ever published stays alive: a worker may still hold the previous one when a new one is
// set. A set is a few hundred bytes and is replaced once per run, so this is not worth reclaiming.
std::mutex g_sets_mutex;
std::vector<std::unique_ptr<PerturbSet>> g_sets;
const PerturbSet* g_current = nullptr;  // under g_sets_mutex; kept when the rules are empty (stats)

[[noreturn]] void bad_spec(std::string_view spec, const std::string& why) {
  throw InvalidArgument("perturbation '" + std::string(spec) + "': " + why + " (expected GLOB:MODE with MODE one of " +
                        kModes + ", e.g. 'block3.matmul:noise=0.05')");
}

double parse_rel(std::string_view spec, const std::string& text) {
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0) {
    bad_spec(spec, "noise needs a positive relative amplitude REL, got '" + text + "'");
  }
  return v;
}

int parse_bit(std::string_view spec, const std::string& text) {
  int v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0 || v > 63) {
    bad_spec(spec, "bitflip needs a bit number 0..63 (0 = least significant), got '" + text + "'");
  }
  return v;
}

// ---- the modes ---------------------------------------------------------------------------------

struct Outcome {
  bool applied = false;    // the mode applies to this output (see Note [Perturbation])
  bool nonfinite = false;  // and left some element inf or NaN
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(const char* s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (; *s != '\0'; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
  return h;
}

// Loads, edits in f64 and stores back: store_f64_raw rounds once to the storage dtype.
template <class Edit>
Outcome edit_values(const TensorView& v, Edit edit) {
  std::vector<double> x(static_cast<std::size_t>(v.numel));
  kernels::load_f64(v, x.data());
  edit(x);
  return {true, kernels::store_f64_raw(v, x.data())};
}

Outcome add_noise(const TensorView& v, double rel, std::uint64_t seed) {
  return edit_values(v, [&](std::vector<double>& x) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double u = static_cast<double>(splitmix64(seed + i) >> 11) * 0x1p-53 * 2.0 - 1.0;  // [-1, 1)
      x[i] *= 1.0 + rel * u;
    }
  });
}

template <class U>
void flip(std::byte* p, int bit) {
  U u;
  std::memcpy(&u, p, sizeof u);
  u ^= static_cast<U>(U{1} << bit);
  std::memcpy(p, &u, sizeof u);
}

Outcome flip_bit(const TensorView& v, int bit) {
  const int width = static_cast<int>(dtype_size(v.dtype)) * 8;
  if (bit == kDefaultFlipBit) bit = width - 2;  // the exponent's top bit: just below the sign
  if (bit >= width) return {};
  switch (width) {
    case 16: flip<std::uint16_t>(v.data, bit); break;
    case 32: flip<std::uint32_t>(v.data, bit); break;
    case 64: flip<std::uint64_t>(v.data, bit); break;
    default: return {};
  }
  double first = 0;
  kernels::load_f64(TensorView{v.data, v.dtype, v.shape, 1}, &first);
  return {true, !std::isfinite(first)};
}

Outcome round_through_f16(const TensorView& v) {
  if (v.dtype == DType::kF16) return {};
  return edit_values(v, [](std::vector<double>& x) {
    for (double& d : x) d = round_to_half(kernels::round_to_f32_odd(d));  // one rounding, even from f64
  });
}

Outcome apply_rule(const PerturbRule& rule, const TensorView& v, std::uint64_t name_hash, std::size_t index) {
  switch (rule.mode) {
    case PerturbMode::kNoise: return add_noise(v, rule.rel, splitmix64(name_hash ^ splitmix64(index)));
    case PerturbMode::kBitFlip: return flip_bit(v, rule.bit);
    case PerturbMode::kF16: return round_through_f16(v);
  }
  return {};
}

}  // namespace

std::string PerturbRule::str() const {
  std::string s = glob;
  switch (mode) {
    case PerturbMode::kNoise: {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, rel);  // shortest text that reads back
      s.append(":noise=").append(buf, r.ptr);
      break;
    }
    case PerturbMode::kBitFlip:
      s.append(":bitflip");
      if (bit != kDefaultFlipBit) s.append("=").append(std::to_string(bit));
      break;
    case PerturbMode::kF16: s.append(":f16"); break;
  }
  return s;
}

bool PerturbRule::matches(const char* op_name) const { return ::fnmatch(glob.c_str(), op_name, 0) == 0; }

PerturbRule parse_perturb_rule(std::string_view spec) {
  const auto colon = spec.rfind(':');
  if (colon == std::string_view::npos) bad_spec(spec, "no ':' between the glob and the mode");
  PerturbRule rule;
  rule.glob = std::string(spec.substr(0, colon));
  if (rule.glob.empty()) bad_spec(spec, "the glob is empty (say '*' to perturb every op)");
  const std::string_view mode = spec.substr(colon + 1);
  const auto eq = mode.find('=');
  const std::string_view name = mode.substr(0, eq);
  const bool has_value = eq != std::string_view::npos;
  const std::string value = has_value ? std::string(mode.substr(eq + 1)) : std::string();
  if (name == "noise") {
    rule.mode = PerturbMode::kNoise;
    if (has_value) rule.rel = parse_rel(spec, value);
  } else if (name == "bitflip") {
    rule.mode = PerturbMode::kBitFlip;
    if (has_value) rule.bit = parse_bit(spec, value);
  } else if (name == "f16") {
    rule.mode = PerturbMode::kF16;
    if (has_value) bad_spec(spec, "f16 takes no value");
  } else {
    bad_spec(spec, name.empty() ? std::string("no mode after ':'") : "unknown mode '" + std::string(name) + "'");
  }
  return rule;
}

std::vector<PerturbRule> parse_perturb_rules(std::string_view text, std::string_view source) {
  std::vector<PerturbRule> rules;
  std::size_t line = 0;
  while (!text.empty()) {
    ++line;
    const auto end = text.find('\n');
    std::string_view spec = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!spec.empty() && spec.back() == '\r') spec.remove_suffix(1);
    if (spec.find_first_not_of(" \t") == std::string_view::npos) continue;
    try {
      rules.push_back(parse_perturb_rule(spec));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(source) + " line " + std::to_string(line) + ": " + e.what());
    }
  }
  return rules;
}

void set_perturbations(std::vector<PerturbRule> rules) {
  for (const auto& r : rules) {
    if (r.glob.empty()) throw InvalidArgument("perturbation rule '" + r.str() + "' has an empty glob");
  }
  auto set = std::make_unique<PerturbSet>(rules.size());
  for (std::size_t i = 0; i < rules.size(); ++i) set->entries[i].rule = std::move(rules[i]);
  std::lock_guard lock(g_sets_mutex);
  g_current = set.get();
  detail::g_perturbations.store(set->entries.empty() ? nullptr : set.get(), std::memory_order_release);
  g_sets.push_back(std::move(set));
}

void clear_perturbations() { set_perturbations({}); }

std::vector<PerturbStats> perturbation_stats() {
  std::lock_guard lock(g_sets_mutex);
  std::vector<PerturbStats> out;
  if (g_current == nullptr) return out;
  for (const auto& e : g_current->entries) {
    out.push_back({e.rule, e.ops.load(std::memory_order_relaxed), e.outputs.load(std::memory_order_relaxed)});
  }
  return out;
}

void apply_perturbations(const PerturbSet& set, const char* op_name, KernelContext& ctx) {
  std::uint64_t name_hash = 0;  // 0: not computed yet (only a matching op pays for it)
  for (const auto& e : set.entries) {
    if (op_name == nullptr || !e.rule.matches(op_name)) continue;
    e.ops.fetch_add(1, std::memory_order_relaxed);
    if (name_hash == 0) name_hash = fnv1a(op_name) | 1;
    for (std::size_t i = 0; i < ctx.outputs.size(); ++i) {
      const TensorView& v = ctx.outputs[i];
      if (v.data == nullptr || v.numel == 0 || !is_floating(v.dtype)) continue;
      const Outcome o = apply_rule(e.rule, v, name_hash, i);
      if (!o.applied) continue;
      e.outputs.fetch_add(1, std::memory_order_relaxed);
      ctx.overflow = ctx.overflow || o.nonfinite;
    }
  }
}

}  // namespace npuscope::emulator
