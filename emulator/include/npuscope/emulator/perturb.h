// Perturbation of NPU kernel outputs, in the spirit of msprobe's free_benchmark: make one op, found
// by name, compute wrongly on purpose, and see whether (and where) the comparison notices.
//
// Note [Perturbation]
// A rule is "GLOB:MODE" (`npuscope exec --perturb`, parse_perturb_rule). GLOB is matched against the
// op instance name (an ONNX node name, or "scope/Name" from a NameScope) with fnmatch(3) and no
// flags: `*` also matches '/' and '.', so "block3.*" and "*/MatMul" do what they look like. The split
// is at the last ':', so a glob may itself contain ':'. Modes:
//   noise[=REL]    every element x becomes x·(1 + REL·u), u uniform in [-1, 1) (REL default 1e-2).
//                  u is a hash of (op name, output index, element index): the same op on the same
//                  data always gives the same bits, whatever the thread or run. Zeros stay zero.
//                  The output's cosine similarity to the clean one is about 1 - REL²/6, so REL >= 0.3
//                  fails msprobe's Cosine < 0.99 verdict; REL = 0.05 (cosine ≈ 0.9996) fails only an
//                  allclose check.
//   bitflip[=BIT]  flips bit BIT (0 = least significant) of element 0 of each output, in its
//                  storage format. Default: the exponent's top bit (30 for f32, 14 for f16/bf16, 62
//                  for f64), which always fails a comparison: |x| in [1, 2) becomes NaN (±1: inf),
//                  smaller |x| (0 included) become >= 2, larger ones become < 1 (so |error| > 1).
//                  An output narrower than BIT + 1 bits is left alone (and not counted as perturbed).
//   f16            rounds each element through f16 (round-to-nearest-even) and back, as a forced
//                  downcast would: f32 loses mantissa bits, values beyond 65504 become inf. A no-op
//                  (not counted) for f16 outputs.
// Where it happens: on the device worker, right after an NPU-device task's kernel ran and before its
// tensors reach the hooks, so profiles and dumps see the perturbed outputs as the op's own. Every
// kernel task on an `npu:N` device qualifies, an AI CPU fallback included; the `cpu` golden backend
// never does, nor view ops (Reshape, Flatten...), which run no task. Only floating outputs change;
// integer and bool outputs of a matched op are left alone. Several matching rules apply in the order
// given. An output left non-finite by a perturbation marks the task as overflowed, as the op's own
// inf would (the saturation mode does not clamp it: the fault is the point).
// Cost: with no rule set, the worker pays one atomic load and one predictable branch per task, as a
// hook point does. With rules, an fnmatch per rule per task, and the perturbation itself.
// Rules are process-wide: set them between runs, after a synchronize (a task already queued may see
// either the old or the new rules). The counters in perturbation_stats() say what each rule did, so a
// caller can tell a user that a rule matched nothing. A golden run's tasks (Note [Golden run] in
// runtime.h) are never perturbed.
//
// Note [Perturbations from the environment]
// NPUSCOPE_PERTURB perturbs any program without a code change (a PyTorch script, a sample; `npuscope
// compare -- CMD` sets it for its NPU run): one rule per line, each as parse_perturb_rule reads it
// (blank lines are skipped). The runtime reads it when it starts (Runtime::get(), configure()) and
// installs the rules with set_perturbations, once per process. A bad rule is never ignored: it is an
// InvalidArgument ("NPUSCOPE_PERTURB line N: perturbation '...': ..."), said once on stderr as
// "npuscope: error: ..." and thrown at every start, so no op runs unperturbed by mistake. At process
// exit (after the devices drained) each rule that matched no op, or changed no output, is a warning
// on stderr ("npuscope: warning: perturbation 'X' matched no op ..."): a user with a wrong glob must
// know. Nothing is said if the program replaced the rules meanwhile (`npuscope exec --perturb`
// reports its own). In a golden run the rules are checked but not installed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::emulator {

enum class PerturbMode : std::uint8_t {
  kNoise,    // x·(1 + rel·u), u uniform in [-1, 1)
  kBitFlip,  // flip `bit` of element 0
  kF16,      // round through f16
};

inline constexpr double kDefaultNoiseRel = 1e-2;
inline constexpr int kDefaultFlipBit = -1;  // the exponent's top bit of each output's dtype

struct PerturbRule {
  std::string glob;  // fnmatch(3) pattern over op instance names, never empty
  PerturbMode mode = PerturbMode::kNoise;
  double rel = kDefaultNoiseRel;  // kNoise: > 0 and finite
  int bit = kDefaultFlipBit;      // kBitFlip: 0..63, or kDefaultFlipBit

  // The rule as parse_perturb_rule reads it back ("block4.matmul:noise=0.05").
  std::string str() const;
  bool matches(const char* op_name) const;
};

// Parses "GLOB:MODE" (see Note [Perturbation]). Throws InvalidArgument naming the spec and what is
// wrong with it: no ':', an empty glob, an unknown mode, a bad REL or BIT.
PerturbRule parse_perturb_rule(std::string_view spec);

// Parses NPUSCOPE_PERTURB's text: one rule per line, blank lines skipped (Note [Perturbations from the
// environment]). Throws InvalidArgument "<source> line N: " + parse_perturb_rule's message.
std::vector<PerturbRule> parse_perturb_rules(std::string_view text, std::string_view source = "NPUSCOPE_PERTURB");

// Replaces the process-wide rules (an empty list turns perturbation off) and zeroes the counters.
void set_perturbations(std::vector<PerturbRule> rules);
void clear_perturbations();

// What each current rule did since set_perturbations, in rule order. Read it after a synchronize.
struct PerturbStats {
  PerturbRule rule;
  std::uint64_t ops_matched = 0;        // kernel tasks whose name matched
  std::uint64_t outputs_perturbed = 0;  // floating outputs the mode applied to (see the modes above)
};
std::vector<PerturbStats> perturbation_stats();

}  // namespace npuscope::emulator
