// The advice rules: what msprof-analyze's advisor and HTA suggest, with the figures behind it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analyses.h"
#include "tensor_shapes.h"
#include "text_table.h"

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kSmallOpNs = 20'000;    // a vector op this short is worth fusing
constexpr int kMinChain = 2, kMaxChain = 10;   // msprof-analyze: chains of 2-10 ops...
constexpr int kMinRepeats = 5;                 // ...seen at least 5 times
constexpr std::int64_t kBigOpNs = 20'000;      // block dim matters for ops at least this long
constexpr std::int64_t kSmallCopyBytes = 64 << 10;
constexpr int kMinSmallCopies = 10;
constexpr int kMinSyncs = 10;
constexpr double kSyncsPerLaunch = 0.1;        // a synchronization every 10 launches or more often
constexpr std::size_t kManyShapes = 8;         // distinct input shapes of one op type

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

bool small_vector_op(const TaskRow& t) {
  return t.task_type == static_cast<int>(collector::TaskType::kAiVectorCore) && duration(t) < kSmallOpNs;
}

}  // namespace

void advise_fusion(const TraceData& data, int top, std::vector<Advice>& out) {
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<const TaskRow*>> streams;
  for (const TaskRow& t : data.kernels) streams[{t.device_id, t.stream_id}].push_back(&t);
  struct Chain {
    int repeats = 0;
    std::int64_t saving_ns = 0;  // each time: the chain's time minus its longest op (one fused kernel)
    std::size_t next_free = 0;   // occurrences do not overlap: where the last one counted ended
    const void* run = nullptr;
  };
  std::map<std::vector<std::int64_t>, Chain> chains;  // op type ids
  for (const auto& [key, tasks] : streams) {
    for (std::size_t begin = 0; begin < tasks.size();) {
      std::size_t end = begin;
      while (end < tasks.size() && small_vector_op(*tasks[end])) ++end;
      for (std::size_t i = begin; i < end; ++i) {  // every chain of 2-10 ops inside the run
        std::vector<std::int64_t> types;
        std::int64_t sum = 0, longest = 0;
        for (std::size_t j = i; j < end && j - i < kMaxChain; ++j) {
          types.push_back(tasks[j]->op_type_id);
          sum += duration(*tasks[j]);
          longest = std::max(longest, duration(*tasks[j]));
          if (types.size() < kMinChain) continue;
          Chain& c = chains[types];
          if (c.run == &tasks && i < c.next_free) continue;  // overlaps the occurrence counted last
          c.run = &tasks;
          c.next_free = j + 1;
          ++c.repeats;
          c.saving_ns += sum - longest;
        }
      }
      begin = end + 1;
    }
  }
  std::vector<std::pair<std::vector<std::int64_t>, Chain>> found;
  for (const auto& [types, c] : chains) {
    if (c.repeats >= kMinRepeats) found.emplace_back(types, c);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second.saving_ns != b.second.saving_ns ? a.second.saving_ns > b.second.saving_ns
                                                    : a.first.size() > b.first.size();
  });
  std::vector<std::vector<std::int64_t>> reported;
  // A part of a reported chain, or a rotation of one (Add Mul vs Mul Add in one run) says nothing new.
  auto inside = [](const std::vector<std::int64_t>& part, const std::vector<std::int64_t>& whole) {
    std::vector<std::int64_t> twice = whole;
    twice.insert(twice.end(), whole.begin(), whole.end());
    return part.size() <= whole.size() && std::search(twice.begin(), twice.end(), part.begin(), part.end()) != twice.end();
  };
  for (const auto& [types, c] : found) {
    if (static_cast<int>(reported.size()) >= top) break;
    if (std::any_of(reported.begin(), reported.end(), [&](const auto& r) { return inside(types, r) || inside(r, types); })) {
      continue;  // a part (or an extension) of a chain already reported
    }
    reported.push_back(types);
    std::vector<std::string> names;
    for (std::int64_t id : types) names.push_back(data.str(id));
    Advice a;
    a.rule = "fusion";
    a.title = "fuse the chain " + join(names, " -> ") + " (" + std::to_string(c.repeats) + " times)";
    a.detail = std::to_string(types.size()) + " small vector ops launched back to back " + std::to_string(c.repeats) +
               " times; one fused kernel would save about " + format_ns(static_cast<double>(c.saving_ns)) +
               " of device time, and the host " + std::to_string(types.size() - 1) + " launches each time";
    a.action = "fuse them into one kernel (a fused op or graph mode) to pay one launch instead of " +
               std::to_string(types.size());
    a.ops = names;
    a.impact_ns = c.saving_ns;
    out.push_back(std::move(a));
  }
}

void advise_cube_alignment(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out) {
  std::map<std::string, std::pair<int, std::int64_t>> misaligned;  // "op type M,N,K" -> (count, time)
  std::map<std::string, double> waste_of;
  std::map<std::string, std::string> type_of;
  for (const TaskRow& t : data.kernels) {
    if (t.task_type != static_cast<int>(collector::TaskType::kAiCore)) continue;
    const std::optional<Mnk> mnk = shapes.matmul_mnk(t.task_id, data.str(t.op_type_id));
    if (!mnk || (mnk->m % 16 == 0 && mnk->n % 16 == 0 && mnk->k % 16 == 0)) continue;
    const std::string key = data.str(t.op_type_id) + " M=" + std::to_string(mnk->m) + " N=" +
                            std::to_string(mnk->n) + " K=" + std::to_string(mnk->k);
    auto& [count, ns] = misaligned[key];
    ++count;
    ns += duration(t);
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
    a.detail = std::to_string(count) + " calls, " + format_ns(static_cast<double>(ns)) + "; the cube pads to 16x16x16 fractals, " +
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
    std::int32_t block_dim = 0, cores = 0;
  };
  std::map<std::string, Low> by_type;
  for (const TaskRow& t : data.kernels) {
    const DeviceInfoRow* d = data.device(t.device_id);
    if (!d || duration(t) < kBigOpNs || t.task_type == static_cast<int>(collector::TaskType::kAiCpu)) continue;
    const std::int32_t cores = t.task_type == static_cast<int>(collector::TaskType::kAiCore) ? d->cube_cores : d->vector_cores;
    if (t.block_dim <= 0 || t.block_dim >= cores) continue;
    Low& l = by_type[data.str(t.op_type_id)];
    ++l.count;
    l.ns += duration(t);
    l.idle_core_ns += duration(t) * (cores - t.block_dim) / cores;
    l.block_dim = t.block_dim;
    l.cores = cores;
  }
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const auto& [type, l] : by_type) order.emplace_back(-l.idle_core_ns, type);
  std::sort(order.begin(), order.end());
  for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const Low& l = by_type[order[i].second];
    Advice a;
    a.rule = "block_dim";
    a.title = order[i].second + " runs on " + std::to_string(l.block_dim) + " of " + std::to_string(l.cores) + " cores";
    a.detail = std::to_string(l.count) + " calls of at least " + format_ns(static_cast<double>(kBigOpNs)) + ", " + format_ns(static_cast<double>(l.ns)) +
               " in all, with cores left idle";
    a.action = "split the work over more blocks (a larger batch, or tiling along another axis)";
    a.ops = {order[i].second};
    a.impact_ns = l.idle_core_ns;
    out.push_back(std::move(a));
  }
}

void advise_synchronization(const TraceData& data, std::vector<Advice>& out) {
  std::int64_t syncs = 0, sync_ns = 0;
  std::map<std::string, std::int64_t> by_name;
  for (const ApiRow& a : data.apis) {
    const std::string& name = data.str(a.name_id);
    if (!name.starts_with("aclrtSynchronize")) continue;
    ++syncs;
    sync_ns += a.end_ns - a.start_ns;
    ++by_name[name];
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
    if (m.bytes >= kSmallCopyBytes) continue;
    ++count;
    ns += m.end_ns - m.start_ns;
    bytes += m.bytes;
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
  for (const TaskRow& t : data.kernels) {
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

}  // namespace npuscope::analyzer
