// Custom (opkit) kernels' pipe utilisation, as the msprof op simulator's PipeUtilization reports
// it, and what to change in the kernel when a pipe waits for another.
//
// Note [Kernel pipe ratios]
// A KERNEL_BLOCK row gives each block's critical path in cycles and the cycles each pipe ran
// instructions (Note [Pipe timing] in opkit/block_state.h). Per kernel (op type), over every
// block of every launch: <pipe>_ratio = the pipe's busy cycles summed / the blocks' cycles summed.
// The blocks' cycles, not the launch's wall time: blocks run side by side on the cores, and a ratio
// says how much of each block's own time the pipe worked. Pipes run concurrently, so the ratios add
// up to more than 1 when they overlap; the highest is the bound pipe (the block ends when it does).
// The advice, each judged on those sums, each threshold a constant below (docs/analyze.md):
// - not double-buffered: MTE2 and Vector both busy (kSerialMinRatio) and overlapping less than
//   kSerialMaxOverlap of what they could (per block, the smaller of the two busy times);
// - UB mostly unused: the largest share of the UB one block's buffers took below kLowUbShare while
//   MTE2 or the scalar unit is the bound pipe, with kMinInstructionsPerBlock or more;
// - tail blocks: in a launch of 2 blocks or more, the longest block over kTailFactor x the median;
// - misaligned copies: any GM copy whose address or row length is not a multiple of 32 bytes;
// - scalar-bound: the scalar unit the bound pipe and busy over kScalarBound of the blocks' cycles.
// The time at stake orders the advice; it estimates what the change could save of the kernel's time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "analyses.h"
#include "npuscope/analyzer/text_table.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

using analyzer::format_bytes;
using analyzer::format_count;
using analyzer::format_pct;
using collector::KernelBlockRow;

constexpr double kSerialMinRatio = 0.2;          // MTE2 and Vector each busy a fifth of the blocks: worth overlapping
constexpr double kSerialMaxOverlap = 0.1;        // ... yet overlapping under a tenth of what they could: in turn
constexpr double kLowUbShare = 0.25;             // the buffers take under a quarter of the UB: tiles could be 4x
constexpr double kMinInstructionsPerBlock = 16;  // about 4 tiles of copy in, compute, copy out: fewer gain little
constexpr double kTailFactor = 1.5;              // the longest block keeps its core busy 50 % after the median's
constexpr double kScalarBound = 0.5;             // the scalar unit busy over half the blocks' cycles
constexpr double kMisalignedShare = 0.1;         // a tenth of the GM copies: more than the one tail of each block

// The table's ratio columns, in the op simulator's order.
constexpr Pipe kRatioPipes[] = {Pipe::kVector, Pipe::kCube, Pipe::kScalar, Pipe::kMte1,
                                Pipe::kMte2,   Pipe::kMte3, Pipe::kFix};
static_assert(std::size(kRatioPipes) == kNumPipes, "a ratio column per pipe");

// One launch's blocks.
struct Launch : PipeTotals {
  std::int64_t task_id = 0;
  std::int32_t longest_block = 0, longest_core = 0;
  std::int64_t longest_cycles = -1, longest_ns = 0;
  double median_cycles = 0;
  std::int64_t long_blocks = 0;  // over kTailFactor x the median
};

PipeTotals totals_of(const KernelBlockRow& b) {
  PipeTotals t;
  t.blocks = 1;
  t.cycles = b.cycles;
  for (int p = 0; p < kNumPipes; ++p) t.busy[static_cast<std::size_t>(p)] = b.busy(static_cast<Pipe>(p));
  t.overlap = b.mte2_vector_overlap_cycles;
  t.overlap_possible = std::min(b.mte2_cycles, b.vector_cycles);
  t.instructions = b.instructions;
  t.gm_copies = b.gm_copies;
  t.unaligned_gm_copies = b.unaligned_gm_copies;
  t.ub_bytes = b.ub_bytes;
  t.ub_capacity = b.ub_capacity;
  return t;
}

void add_block(Launch& l, const KernelBlockRow& b) {
  l.add(totals_of(b));
  if (b.cycles > l.longest_cycles) {
    l.longest_block = b.block;
    l.longest_core = b.core;
    l.longest_cycles = b.cycles;
    l.longest_ns = b.end_ns - b.start_ns;
  }
}

double median(std::vector<std::int64_t>& v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const auto upper = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return upper;
  const auto lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
  return (lower + upper) / 2;
}

// Every launch with KERNEL_BLOCK rows, in task id order (the rows come by task, block). A launch at
// a time is held, not the rows: a trace may have millions.
std::vector<Launch> read_launches(const collector::TraceReader& reader) {
  std::vector<Launch> out;
  std::vector<std::int64_t> cycles;  // the current launch's blocks
  const auto finish = [&] {
    if (out.empty()) return;
    Launch& l = out.back();
    l.median_cycles = median(cycles);
    for (const std::int64_t c : cycles) l.long_blocks += static_cast<double>(c) > kTailFactor * l.median_cycles;
    cycles.clear();
  };
  reader.for_each([&](const KernelBlockRow& b) {
    if (out.empty() || out.back().task_id != b.task_id) {
      finish();
      out.emplace_back().task_id = b.task_id;
    }
    add_block(out.back(), b);
    cycles.push_back(b.cycles);
  });
  finish();
  std::stable_sort(out.begin(), out.end(), [](const Launch& a, const Launch& b) { return a.task_id < b.task_id; });
  return out;
}

// The launch's tail block, if its longest block took over kTailFactor x the median block.
std::optional<TailBlock> tail_of(const Launch& l) {
  if (l.blocks < 2 || l.median_cycles <= 0 || static_cast<double>(l.longest_cycles) <= kTailFactor * l.median_cycles)
    return std::nullopt;
  TailBlock t{l.task_id,       {}, l.longest_block, l.longest_core, l.longest_cycles,
              l.median_cycles, 0,  l.long_blocks,   l.blocks};
  const double excess_cycles = static_cast<double>(l.longest_cycles) - l.median_cycles;
  t.excess_ns = static_cast<std::int64_t>(
      std::llround(excess_cycles * static_cast<double>(l.longest_ns) / static_cast<double>(l.longest_cycles)));
  return t;
}

void add_launch(KernelPipes& k, const Launch& l, const Task& t, const TraceData& data) {
  ++k.calls;
  k.add(l);
  k.total_ns = add_ns(k.total_ns, duration(t));
  if (duration(t) > k.slowest_ns) {
    k.slowest_ns = duration(t);
    k.slowest_task_id = t.task_id;
  }
  if (std::optional<TailBlock> tail = tail_of(l)) {
    ++k.tail_calls;
    k.tail_excess_ns = add_ns(k.tail_excess_ns, tail->excess_ns);
    if (!k.worst_tail || tail->excess_ns > k.worst_tail->excess_ns) {
      tail->op_name = data.str(t.name_id);
      k.worst_tail = std::move(tail);
    }
  }
}

}  // namespace

void PipeTotals::add(const PipeTotals& o) {
  blocks = add_ns(blocks, o.blocks);
  cycles = add_ns(cycles, o.cycles);
  for (std::size_t p = 0; p < busy.size(); ++p) busy[p] = add_ns(busy[p], o.busy[p]);
  overlap = add_ns(overlap, o.overlap);
  overlap_possible = add_ns(overlap_possible, o.overlap_possible);
  instructions = add_ns(instructions, o.instructions);
  gm_copies = add_ns(gm_copies, o.gm_copies);
  unaligned_gm_copies = add_ns(unaligned_gm_copies, o.unaligned_gm_copies);
  if (o.ub_capacity > 0 && (ub_capacity <= 0 || o.ub_share() > ub_share())) {  // the larger share of its UB
    ub_bytes = o.ub_bytes;
    ub_capacity = o.ub_capacity;
  }
}

Pipe PipeTotals::bound() const {
  Pipe best = Pipe::kScalar;
  for (int p = 1; p < kNumPipes; ++p) {
    if (busy[static_cast<std::size_t>(p)] > busy[static_cast<std::size_t>(best)]) best = static_cast<Pipe>(p);
  }
  return best;
}

std::vector<KernelPipes> kernel_pipes(const TraceData& data, std::int64_t& unmatched) {
  const std::vector<Launch> launches = read_launches(data.reader);
  unmatched = static_cast<std::int64_t>(launches.size());
  if (launches.empty()) return {};
  std::map<std::int32_t, KernelPipes> by_type;  // op type id: custom kernels are few
  for (const Task& t : data.kernels) {
    const auto l = std::lower_bound(launches.begin(), launches.end(), t.task_id,
                                    [](const Launch& a, std::int64_t id) { return a.task_id < id; });
    if (l == launches.end() || l->task_id != t.task_id) continue;
    --unmatched;
    add_launch(by_type[t.op_type_id], *l, t, data);
  }
  std::vector<KernelPipes> out;
  for (auto& [type, k] : by_type) {
    k.op_type = data.str(type);
    out.push_back(std::move(k));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelPipes& a, const KernelPipes& b) { return a.total_ns > b.total_ns; });
  return out;
}

namespace {

constexpr Column kKernelPipesColumns[] = {
    {"op_type", Unit::kText, "the custom kernel's op type"},
    {"calls", Unit::kCount, "its launches with KERNEL_BLOCK rows"},
    {"blocks", Unit::kCount, "their blocks, all launches"},
    {"avg_ns", Unit::kNs, "the launches' average duration (TASK), to the nearest ns", "avg"},
    {"total_ns", Unit::kNs, "the launches' total duration", "", true},
    {"vec_ratio", Unit::kRatio,
     "VECTOR's busy cycles / the blocks' cycles, both summed over every block of every launch (the op "
     "simulator's aiv_vec_ratio)",
     "vec"},
    {"cube_ratio", Unit::kRatio, "CUBE's, the same way (aic_cube_ratio)", "cube"},
    {"scalar_ratio", Unit::kRatio, "SCALAR's (it issues every instruction)", "scalar"},
    {"mte1_ratio", Unit::kRatio, "MTE1's (L1 to L0A/L0B)", "mte1"},
    {"mte2_ratio", Unit::kRatio, "MTE2's (GM to UB or L1)", "mte2"},
    {"mte3_ratio", Unit::kRatio, "MTE3's (UB to GM)", "mte3"},
    {"fixp_ratio", Unit::kRatio, "FIXP's (L0C to GM)", "fixp"},
    {"bound_pipe", Unit::kText, "the pipe with the highest ratio: VECTOR, CUBE, SCALAR, MTE1, MTE2, MTE3 or FIXP",
     "bound"},
    {"mte2_vector_overlap", Unit::kRatio,
     "cycles MTE2 and VECTOR both ran / the most they could (per block the smaller of their busy cycles), summed "
     "over the blocks; null when either never ran",
     "MTE2+VECTOR overlap", true},
    {"ub_share", Unit::kRatio, "the largest share of its UB one block's buffers took (ub_bytes / ub_capacity)",
     "UB share", true},
    {"instructions_per_block", Unit::kNumber, "instructions issued per block, on average", "instructions/block", true},
    {"unaligned_copy_share", Unit::kRatio,
     "GM copies whose address or row length is not a multiple of 32 bytes / all GM copies; null without copies",
     "unaligned copies", true},
    {"tail_calls", Unit::kCount, "launches whose longest block took over 1.5x their median block", "tail calls", true},
    {"slowest_task_id", Unit::kTaskId, "its longest launch's TASK.task_id", "slowest task", true},
};

// The ratio columns, in kRatioPipes' order.
constexpr std::size_t kFirstRatioColumn = 5;
constexpr bool ratio_columns_in_place() {
  for (std::size_t i = 0; i < std::size(kRatioPipes); ++i) {
    if (!kKernelPipesColumns[kFirstRatioColumn + i].name.ends_with("_ratio")) return false;
  }
  return kKernelPipesColumns[kFirstRatioColumn].name == "vec_ratio" &&
         kKernelPipesColumns[kFirstRatioColumn + std::size(kRatioPipes) - 1].name == "fixp_ratio";
}
static_assert(ratio_columns_in_place(), "kernel_row writes a ratio per pipe of kRatioPipes from kFirstRatioColumn");

}  // namespace

constexpr TableSpec kKernelPipesTable{
    "kernel_pipes",
    "Custom kernels' pipe utilisation",
    "Per custom (opkit) kernel, over the blocks of all its launches (KERNEL_BLOCK): the share of the blocks' "
    "cycles each pipe was busy, the msprof op simulator's PipeUtilization ratios (Note [Kernel pipe ratios]), "
    "most time first. The advice table says what to change.",
    kKernelPipesColumns,
    Layout::kRows,
    Section::kDetail};

namespace {

Value ratio_cell(std::optional<double> r) { return r ? Value(*r) : Value(); }

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

Row kernel_row(const KernelPipes& k) {
  Row row = {k.op_type, k.calls, k.blocks, static_cast<std::int64_t>(std::llround(share(k.total_ns, k.calls))),
             k.total_ns};
  for (const Pipe p : kRatioPipes) row.push_back(ratio_cell(k.ratio(p)));
  row.push_back(k.cycles > 0 ? Value(std::string(enum_name(k.bound()))) : Value());
  row.push_back(k.ratio(Pipe::kMte2).value_or(0) > 0 && k.ratio(Pipe::kVector).value_or(0) > 0
                    ? Value(share(k.overlap, k.overlap_possible))
                    : Value());
  row.push_back(k.ub_capacity > 0 ? Value(k.ub_share()) : Value());
  row.push_back(share(k.instructions, k.blocks));
  row.push_back(k.gm_copies > 0 ? Value(share(k.unaligned_gm_copies, k.gm_copies)) : Value());
  row.push_back(k.tail_calls);
  row.push_back(k.slowest_task_id);
  return row;
}

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// "vec_ratio 0.71": a pipe's ratio under its column's name.
std::string ratio_text(const KernelPipes& k, Pipe p) {
  const auto at = std::find(std::begin(kRatioPipes), std::end(kRatioPipes), p) - std::begin(kRatioPipes);
  return std::string(kKernelPipesColumns[kFirstRatioColumn + static_cast<std::size_t>(at)].name) + " " +
         fixed2(k.ratio(p).value_or(0));
}

// The kernel's time times `fraction` (clamped to [0, 1]): the share of its blocks' cycles at stake.
std::int64_t at_stake(const KernelPipes& k, double fraction) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(k.total_ns) * std::clamp(fraction, 0.0, 1.0)));
}

// The bound pipe's ratio beyond the next busiest pipe's: what its work could shrink by before
// another pipe bounds the block.
double lead_of_bound(const KernelPipes& k) {
  double first = 0, second = 0;
  for (const Pipe p : kRatioPipes) {
    const double r = k.ratio(p).value_or(0);
    if (r > first) {
      second = first;
      first = r;
    } else if (r > second) {
      second = r;
    }
  }
  return first - second;
}

std::string calls_text(const KernelPipes& k) {
  return format_count(k.calls) + (k.calls == 1 ? " launch, " : " launches, ") + format_count(k.blocks) + " blocks";
}

Advice advice_for(const KernelPipes& k, std::string title) {
  Advice a;
  a.rule = "kernel_pipes";
  a.title = k.op_type + ": " + std::move(title);
  a.ops = {k.op_type};
  return a;
}

std::optional<Advice> advise_double_buffering(const KernelPipes& k) {
  const double mte2 = k.ratio(Pipe::kMte2).value_or(0), vec = k.ratio(Pipe::kVector).value_or(0);
  if (mte2 <= kSerialMinRatio || vec <= kSerialMinRatio || k.overlap_possible <= 0) return std::nullopt;
  const double overlap = share(k.overlap, k.overlap_possible);
  if (overlap >= kSerialMaxOverlap) return std::nullopt;
  Advice a = advice_for(k, "MTE2 and VECTOR run one after the other (not double-buffered)");
  a.detail = ratio_text(k, Pipe::kMte2) + " and " + ratio_text(k, Pipe::kVector) + ", but they overlap for " +
             format_pct(100 * overlap) + " of the " + format_count(k.overlap_possible) + " cycles they could (" +
             calls_text(k) + ", " + fixed2(share(k.gm_copies, k.blocks)) + " GM copies per block)";
  a.action =
      "use a queue of depth 2 (pipe.InitBuffer(queue, 2, bytes)) and 2 or more tiles per block, so MTE2 copies the "
      "next tile while Vector computes this one";
  a.impact_ns = at_stake(k, share(k.overlap_possible - k.overlap, k.cycles));
  return a;
}

std::optional<Advice> advise_ub(const KernelPipes& k) {
  const Pipe bound = k.bound();
  const double per_block = share(k.instructions, k.blocks);
  if (k.ub_bytes <= 0 || k.ub_share() >= kLowUbShare || (bound != Pipe::kMte2 && bound != Pipe::kScalar) ||
      per_block < kMinInstructionsPerBlock) {
    return std::nullopt;  // no UB in use (a cube kernel tiles through L1 and L0), or enough of it
  }
  Advice a = advice_for(k, "its buffers use " + format_pct(100 * k.ub_share()) + " of the UB, and it is " +
                               std::string(enum_name(bound)) + "-bound");
  a.detail = "at most " + format_bytes(static_cast<double>(k.ub_bytes)) + " of " +
             format_bytes(static_cast<double>(k.ub_capacity)) + " per block, " + fixed2(per_block) +
             " instructions per block, " + ratio_text(k, bound) + " (" + calls_text(k) + ")";
  a.action = "make the tiles bigger (the UB holds about " +
             std::to_string(std::llround(1 / std::max(k.ub_share(), 1e-9))) +
             "x these buffers): fewer, longer copies pay the GM latency less often and the scalar unit issues fewer "
             "instructions";
  a.impact_ns = at_stake(k, lead_of_bound(k));
  return a;
}

std::optional<Advice> advise_tail(const KernelPipes& k) {
  if (!k.worst_tail) return std::nullopt;
  const TailBlock& t = *k.worst_tail;
  const std::string times = fixed2(static_cast<double>(t.cycles) / t.median_cycles) + "x the median block";
  Advice a =
      advice_for(k, t.long_blocks == 1 ? "block " + std::to_string(t.block) + " runs " + times + " (a tail block)"
                                       : format_count(t.long_blocks) + " of its " + format_count(t.blocks) +
                                             " blocks run up to " + times + " (tail blocks)");
  a.detail = "in task " + std::to_string(t.task_id) + " (" + t.op_name + "), block " + std::to_string(t.block) +
             " on core " + std::to_string(t.core) + " took " + format_count(t.cycles) + " cycles, the median block " +
             format_count(static_cast<std::int64_t>(std::llround(t.median_cycles))) + "; " +
             format_count(k.tail_calls) + " of " + format_count(k.calls) +
             (k.tail_calls == 1 ? " launch has" : " launches have") + " blocks over " + fixed2(kTailFactor) +
             "x their median, and the other cores wait for them";
  a.action =
      "balance the tiling: give every block the same amount of work (spread the remainder over the blocks, one "
      "tile each, or use smaller tiles so that they divide evenly)";
  a.impact_ns = k.tail_excess_ns;
  return a;
}

std::optional<Advice> advise_misaligned(const KernelPipes& k) {
  const double unaligned = share(k.unaligned_gm_copies, k.gm_copies);
  if (k.unaligned_gm_copies <= 0 || unaligned < kMisalignedShare) return std::nullopt;
  Advice a = advice_for(k, format_pct(100 * unaligned) + " of its GM copies are not 32-byte aligned");
  a.detail = format_count(k.unaligned_gm_copies) + " of " + format_count(k.gm_copies) +
             " copies between GM and the core start at an address, or move rows, that are not a multiple of 32 "
             "bytes: the MTEs move whole 32-byte blocks (" +
             calls_text(k) + ")";
  a.action =
      "align the tile lengths and GM offsets to 32 bytes (pad rows to a multiple of 16 f16 or 8 f32 elements); "
      "copy a tail that cannot be aligned with DataCopyPad";
  const double copy_share = k.ratio(Pipe::kMte2).value_or(0) + k.ratio(Pipe::kMte3).value_or(0);
  a.impact_ns = at_stake(k, unaligned * copy_share);
  return a;
}

std::optional<Advice> advise_scalar(const KernelPipes& k) {
  const double scalar = k.ratio(Pipe::kScalar).value_or(0);
  if (scalar <= kScalarBound || k.bound() != Pipe::kScalar) return std::nullopt;
  Advice a = advice_for(k, "bound by the scalar unit (" + ratio_text(k, Pipe::kScalar) + ")");
  a.detail = fixed2(share(k.instructions, k.blocks)) +
             " instructions per block: the scalar unit issues each (a cycle) and runs GetValue/SetValue, and the "
             "other pipes wait for it (" +
             calls_text(k) + ")";
  a.action =
      "replace the loop of tiny instructions with fewer large ones: larger repeats or counts per vector "
      "instruction, bigger tiles, no per-element GetValue/SetValue in the loop";
  a.impact_ns = at_stake(k, lead_of_bound(k));
  return a;
}

void run_kernel_pipes(RuleContext& c) {
  std::int64_t unmatched = 0;
  const std::vector<KernelPipes> kernels = kernel_pipes(c.data, unmatched);
  if (unmatched > 0) {
    c.note("kernel_pipes: " + std::to_string(unmatched) +
           " custom kernel launches have KERNEL_BLOCK rows but no kernel task (a trace cut short?): left out");
  }
  using Check = std::optional<Advice> (*)(const KernelPipes&);
  constexpr Check kChecks[] = {advise_double_buffering, advise_ub, advise_tail, advise_misaligned, advise_scalar};
  std::vector<Advice> advice;
  for (const Check check : kChecks) {  // the --top most time at stake of each check
    std::vector<Advice> found;
    for (const KernelPipes& k : kernels) {
      if (std::optional<Advice> a = check(k)) found.push_back(std::move(*a));
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Advice& a, const Advice& b) { return a.impact_ns > b.impact_ns; });
    found.resize(std::min(found.size(), static_cast<std::size_t>(c.top)));
    for (Advice& a : found) advice.push_back(std::move(a));
  }
  for (const KernelPipes& k : kernels) c.add(kKernelPipesTable, kernel_row(k));
  add_advice(c, advice);
}

constexpr const TableSpec* kKernelPipesTables[] = {&kKernelPipesTable, &kAdviceTable};

}  // namespace

extern const Rule kKernelPipesRule{
    "kernel_pipes",
    "custom kernels' pipe utilisation (vec_ratio, mte2_ratio, ...) and what to change",
    run_kernel_pipes,
    kKernelPipesTables,
    false,
    "its kernel model's pipe cycles (KERNEL_BLOCK); operator_bound reads the real PMU ratios"};

}  // namespace npuscope::analyzer
