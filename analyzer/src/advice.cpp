// The advice rules: what msprof-analyze's advisor and HTA suggest, with the figures behind it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analyses.h"
#include "device_cores.h"
#include "npuscope/analyzer/text_table.h"
#include "rules.h"
#include "tensor_shapes.h"

namespace npuscope::analyzer {

using analyzer::format_ns;
namespace {

constexpr std::int64_t kBigOpNs = 20'000;  // block dim matters for ops at least this long
constexpr std::int64_t kSmallCopyBytes = 64 << 10;
constexpr int kMinSmallCopies = 10;
constexpr int kMinSyncs = 10;
constexpr double kSyncsPerLaunch = 0.1;  // a synchronization every 10 launches or more often
constexpr std::size_t kManyShapes = 8;   // distinct input shapes of one op type

}  // namespace

void advise_cube_alignment(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out) {
  std::map<std::string, std::pair<int, std::int64_t>> misaligned;  // "op type M,N,K" -> (count, time)
  std::map<std::string, double> waste_of;
  std::map<std::string, std::string> type_of;
  for (const Task& t : data.kernels) {
    if (!is(t.task_type, TaskType::kAiCore)) continue;
    const std::optional<Mnk> mnk = shapes.matmul_mnk(t.task_id, data.str(t.op_type_id));
    if (!mnk || (mnk->m % 16 == 0 && mnk->n % 16 == 0 && mnk->k % 16 == 0)) continue;
    const std::string key = data.str(t.op_type_id) + " M=" + std::to_string(mnk->m) + " N=" + std::to_string(mnk->n) +
                            " K=" + std::to_string(mnk->k);
    auto& [count, ns] = misaligned[key];
    ++count;
    ns = add_ns(ns, duration(t));
    waste_of[key] = mnk->padding_waste();
    type_of[key] = data.str(t.op_type_id);
  }
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const auto& [key, v] : misaligned) order.emplace_back(-v.second, key);
  std::sort(order.begin(), order.end());
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const std::string& key = order[i].second;
    const auto [count, ns] = misaligned[key];
    Advice a;
    a.rule = "cube_alignment";
    a.title = key + ": not multiples of 16";
    a.detail = std::to_string(count) + " calls, " + format_ns(static_cast<double>(ns)) +
               "; the cube pads to 16x16x16 fractals, " +
               std::to_string(static_cast<int>(std::lround(100 * waste_of[key]))) + " % of its work is padding";
    a.action = "pad or choose M, N and K as multiples of 16 (the inner axis a multiple of 256 is better still)";
    a.ops = {type_of[key]};
    a.impact_ns = static_cast<std::int64_t>(static_cast<double>(ns) * waste_of[key]);
    out.push_back(std::move(a));
  }
}

void advise_block_dim(const TraceData& data, int top, std::vector<Advice>& out) {
  struct Low {
    int count = 0;
    std::int64_t ns = 0, idle_core_ns = 0;
    std::int32_t cores = 0;
    std::map<std::int32_t, std::int64_t> idle_by_dim;  // calls of one type may differ in block dim
  };
  std::map<std::int32_t, Low> by_type;  // op type id
  for (const Task& t : data.kernels) {
    const bool cube = is(t.task_type, TaskType::kAiCore) || is(t.task_type, TaskType::kMixAiCore);
    const bool vector = is(t.task_type, TaskType::kAiVectorCore) || is(t.task_type, TaskType::kMixAiVector);
    if (duration(t) < kBigOpNs || (!cube && !vector)) continue;
    const DeviceInfoRow* d = data.device(t.device_id);
    if (!d) continue;
    const CoreCounts counts = core_counts(*d);
    // As msprof-analyze's block dim check: the vector cores where the device has its own (910B).
    const std::int32_t cores = cube || counts.vector <= 0 ? counts.cube : counts.vector;
    if (t.block_dim <= 0 || cores <= 0 || t.block_dim % cores == 0) continue;
    Low& l = by_type[t.op_type_id];
    // The last wave's idle cores: ceil(block_dim / cores) waves of `cores` slots, block_dim used. At
    // most duration(t): in 128 bits, as duration x slots may not fit 64.
    const std::int64_t slots = (t.block_dim + cores - 1) / cores * cores;
    const auto idle = static_cast<std::int64_t>(static_cast<__int128>(duration(t)) * (slots - t.block_dim) / slots);
    ++l.count;
    l.ns = add_ns(l.ns, duration(t));
    l.idle_core_ns = add_ns(l.idle_core_ns, idle);
    std::int64_t& by_dim = l.idle_by_dim[t.block_dim];
    by_dim = add_ns(by_dim, idle);
    l.cores = cores;
  }
  std::vector<std::pair<std::int64_t, std::int32_t>> order;
  for (const auto& [type, l] : by_type) order.emplace_back(-l.idle_core_ns, type);
  std::sort(order.begin(), order.end());
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const Low& l = by_type[order[i].second];
    const std::string& type = data.str(order[i].second);
    // The block dim that left the most core time idle; the range when calls differ.
    const auto worst = std::max_element(l.idle_by_dim.begin(), l.idle_by_dim.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string dims = std::to_string(worst->first);
    if (l.idle_by_dim.size() > 1) {
      dims = std::to_string(l.idle_by_dim.begin()->first) + "-" + std::to_string(l.idle_by_dim.rbegin()->first);
    }
    Advice a;
    a.rule = "block_dim";
    a.title = l.idle_by_dim.rbegin()->first < l.cores
                  ? type + " runs on " + dims + " of " + std::to_string(l.cores) + " cores"
                  : type + " runs " + dims + " blocks on " + std::to_string(l.cores) + " cores";
    if (l.idle_by_dim.size() > 1) a.title += " (mostly " + std::to_string(worst->first) + ")";
    a.detail = std::to_string(l.count) + " calls of at least " + format_ns(static_cast<double>(kBigOpNs)) + ", " +
               format_ns(static_cast<double>(l.ns)) + " in all, with cores left idle";
    a.action = "split the work over more blocks (a larger batch, or tiling along another axis)";
    a.ops = {type};
    a.impact_ns = l.idle_core_ns;
    out.push_back(std::move(a));
  }
}

void advise_synchronization(const TraceData& data, std::vector<Advice>& out) {
  std::int64_t syncs = 0, sync_ns = 0;
  std::map<std::string, std::int64_t> by_name;
  for (const Api& a : data.apis) {
    if (!data.is_sync_api(a)) continue;
    ++syncs;
    sync_ns = add_ns(sync_ns, a.end_ns - a.start_ns);
    ++by_name[data.str(a.name_id)];
  }
  const auto launches = static_cast<double>(data.kernels.size());
  if (syncs < kMinSyncs || static_cast<double>(syncs) < kSyncsPerLaunch * launches) return;
  std::vector<std::string> names;
  for (const auto& [name, n] : by_name) names.push_back(name + " x" + std::to_string(n));
  Advice a;
  a.rule = "synchronization";
  a.title = std::to_string(syncs) + " synchronizations for " + std::to_string(data.kernels.size()) + " kernels";
  a.detail = join(names, ", ") + "; the host spent " + format_ns(static_cast<double>(sync_ns)) +
             " blocked in them and the device idles while the host catches up after each";
  a.action = "synchronize only where the host needs a result (e.g. once per step), not after every launch";
  a.ops = {};
  a.impact_ns = sync_ns;
  out.push_back(std::move(a));
}

void advise_small_memcpy(const TraceData& data, std::vector<Advice>& out) {
  std::int64_t count = 0, ns = 0, bytes = 0;
  for (const MemcpyRow& m : data.memcpys) {
    if (m.bytes >= kSmallCopyBytes || m.bytes <= 0) continue;  // 0: a real profile that does not say its size
    ++count;
    ns = add_ns(ns, m.end_ns - m.start_ns);
    bytes = add_ns(bytes, m.bytes);
  }
  if (count < kMinSmallCopies) return;
  Advice a;
  a.rule = "small_memcpy";
  a.title = std::to_string(count) + " copies under 64 KiB";
  a.detail = std::to_string(bytes) + " bytes in " + format_ns(static_cast<double>(ns)) +
             " of copy time: each pays a fixed setup cost that dwarfs its transfer";
  a.action = "batch small tensors into one buffer and copy it once, or keep them on the device";
  a.impact_ns = ns;
  out.push_back(std::move(a));
}

void advise_dynamic_shapes(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out) {
  std::map<std::string, std::set<std::string>> distinct;
  std::map<std::string, std::int64_t> time_of;
  for (const Task& t : data.kernels) {
    const std::string* sig = shapes.input_signature(t.task_id);
    if (!sig) continue;
    distinct[data.str(t.op_type_id)].insert(*sig);
    time_of[data.str(t.op_type_id)] += duration(t);
  }
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [type, sigs] : distinct) {
    if (sigs.size() >= kManyShapes) order.emplace_back(sigs.size(), type);
  }
  std::sort(order.rbegin(), order.rend());
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    Advice a;
    a.rule = "dynamic_shapes";
    a.title = order[i].second + " ran with " + std::to_string(order[i].first) + " distinct input shapes";
    a.detail = "each new shape compiles and tunes a kernel on a real NPU (and misses the kernel cache)";
    a.action = "bucket or pad the varying dimension to a few sizes";
    a.ops = {order[i].second};
    a.impact_ns = time_of[order[i].second] / 10;  // a guess at the compile share, for ordering only
    out.push_back(std::move(a));
  }
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

namespace {

constexpr Column kAdviceColumns[] = {
    {"rule", Unit::kText, "the advice rule (--rules)"},
    {"title", Unit::kText, "what was found, in one line"},
    {"detail", Unit::kText, "the figures behind it"},
    {"action", Unit::kText, "what to do"},
    {"ops", Unit::kList, "the op types or op names concerned (may be empty)"},
    {"impact_ns", Unit::kNs, "the time at stake, an estimate (orders the advice)", "time at stake"},
};

}  // namespace

constexpr TableSpec kAdviceTable{"advice",
                                 "Advice (most time at stake first)",
                                 "What msprof-analyze's advisor and HTA would suggest, one item per finding of the "
                                 "advice rules, most time at stake first.",
                                 kAdviceColumns,
                                 Layout::kItems,
                                 Section::kAdvice,
                                 {},
                                 "impact_ns"};

void add_advice(RuleContext& c, const std::vector<Advice>& advice) {
  for (const Advice& a : advice) c.add(kAdviceTable, {a.rule, a.title, a.detail, a.action, a.ops, a.impact_ns});
}

namespace {

constexpr const TableSpec* kAdviceTables[] = {&kAdviceTable};

template <class F>
void advise(RuleContext& c, F rule) {
  std::vector<Advice> advice;
  rule(advice);
  add_advice(c, advice);
}

void run_cube_alignment(RuleContext& c) {
  const TensorShapes& shapes = c.shapes();
  advise(c, [&](std::vector<Advice>& out) { advise_cube_alignment(c.data, shapes, c.top, out); });
}
void run_block_dim(RuleContext& c) {
  advise(c, [&](std::vector<Advice>& out) { advise_block_dim(c.data, c.top, out); });
}
void run_synchronization(RuleContext& c) {
  advise(c, [&](std::vector<Advice>& out) { advise_synchronization(c.data, out); });
}
void run_small_memcpy(RuleContext& c) {
  advise(c, [&](std::vector<Advice>& out) { advise_small_memcpy(c.data, out); });
}
void run_dynamic_shapes(RuleContext& c) {
  const TensorShapes& shapes = c.shapes();
  advise(c, [&](std::vector<Advice>& out) { advise_dynamic_shapes(c.data, shapes, c.top, out); });
}

}  // namespace

extern const Rule kCubeAlignmentRule{"cube_alignment", "cube ops with M, N or K not a multiple of 16",
                                     run_cube_alignment, kAdviceTables};
extern const Rule kBlockDimRule{"block_dim", "long ops whose block dim is not a multiple of the core count",
                                run_block_dim, kAdviceTables};
extern const Rule kSynchronizationRule{"synchronization", "frequent synchronizations", run_synchronization,
                                       kAdviceTables};
extern const Rule kSmallMemcpyRule{"small_memcpy", "many copies under 64 KiB", run_small_memcpy, kAdviceTables};
extern const Rule kDynamicShapesRule{"dynamic_shapes", "op types with many input shapes", run_dynamic_shapes,
                                     kAdviceTables};

}  // namespace npuscope::analyzer
