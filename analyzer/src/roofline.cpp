// Roofline class per task: achieved FLOP/s and bytes/s against the ceilings of the device it ran on
// (DEVICE_INFO), the way the cost model charges them (emulator/src/cost_model.cpp).
//
// Note [Roofline bound]
// compute_pct = achieved FLOP/s / the unit's achievable ceiling for the compute dtype; memory_pct =
// achieved bytes/s / the effective HBM bandwidth. The ceilings are the calibrated ones (Note
// [Calibrated cost model] in cost_model.h): what large aligned work reaches on the real chip, e.g.
// 97% of the cube's paper peak and 85% of the specified HBM bandwidth on 910B, so a 4096^3 f16
// MatMul shows ~89% of its ceiling where it shows ~86% of the paper peak; both are reported
// (compute_peak_pct, memory_peak_pct). A trace older than schema 8 has no ceilings: its peaks
// stand in. A task that reaches less than kLatencyPct of both rooflines spends most
// of its time on fixed costs (launch, scheduling, a kernel too small to fill the cores): latency-
// bound. Otherwise it is bound by the roofline it is closer to. AI CPU tasks are held to the vector
// unit's roofline, which they never approach: latency-bound, and listed as fallbacks besides.
#include <algorithm>
#include <map>

#include "analyses.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr double kLatencyPct = 30;

// The unit's throughput for the compute dtype, from its f16 figure (peak or ceiling), as the cost
// model scales it: the cube's int8 twice f16 and f32 at cube_f32_rate; the vector unit by element size.
double unit_flops(const DeviceInfoRow& d, std::int32_t task_type, std::int32_t compute_dtype, double cube_f16,
                  double vector_f16) {
  const auto dtype = static_cast<DType>(compute_dtype);
  if (is(task_type, TaskType::kAiCore)) {  // the cube unit
    if (dtype == DType::kI8 || dtype == DType::kU8) return 2 * cube_f16;
    if (dtype == DType::kF32) return cube_f16 * (d.cube_f32_rate > 0 ? d.cube_f32_rate : 0.25);
    return cube_f16;
  }
  const int size = compute_dtype >= 0 && compute_dtype < kNumDTypes ? static_cast<int>(dtype_size(dtype)) : 2;
  return vector_f16 * 2 / std::max(size, 1);
}

}  // namespace

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kLatency: return "latency";
  }
  return "?";
}

Roofline roofline(std::int32_t task_type, std::int32_t compute_dtype, std::int64_t flops, std::int64_t bytes,
                  std::int64_t duration_ns, const DeviceInfoRow* device) {
  Roofline r;
  const double seconds = static_cast<double>(std::max<std::int64_t>(duration_ns, 1)) * 1e-9;
  r.flops_per_s = static_cast<double>(flops) / seconds;
  r.bytes_per_s = static_cast<double>(bytes) / seconds;
  if (device != nullptr) {
    const DeviceInfoRow& d = *device;
    const auto pct = [](double achieved, double limit) { return limit > 0 ? 100 * achieved / limit : 0; };
    const double peak = unit_flops(d, task_type, compute_dtype, d.cube_peak_flops, d.vector_peak_flops);
    const double ceiling =
        unit_flops(d, task_type, compute_dtype, d.cube_ceiling_flops > 0 ? d.cube_ceiling_flops : d.cube_peak_flops,
                   d.vector_ceiling_flops > 0 ? d.vector_ceiling_flops : d.vector_peak_flops);
    r.compute_peak_pct = pct(r.flops_per_s, peak);
    r.memory_peak_pct = pct(r.bytes_per_s, d.memory_bandwidth);
    r.compute_pct = pct(r.flops_per_s, ceiling);
    r.memory_pct = pct(r.bytes_per_s, d.memory_ceiling_bandwidth > 0 ? d.memory_ceiling_bandwidth : d.memory_bandwidth);
  }
  if (is(task_type, TaskType::kAiCpu) || std::max(r.compute_pct, r.memory_pct) < kLatencyPct) {
    r.bound = Bound::kLatency;
  } else {
    r.bound = r.compute_pct >= r.memory_pct ? Bound::kCompute : Bound::kMemory;
  }
  return r;
}

namespace {

Roofline roofline(const TraceData& data, const Task& t) {
  return analyzer::roofline(t.task_type, t.compute_dtype, t.flops, t.bytes, duration(t), data.device(t.device_id));
}

}  // namespace

TaskPerf task_perf(const TraceData& data, const Task& t) {
  TaskPerf p;
  p.task_id = t.task_id;
  p.op_name = data.str(t.name_id);
  p.op_type = data.str(t.op_type_id);
  p.task_type = collector::task_type_name(t.task_type);
  p.device_id = t.device_id;
  p.stream_id = t.stream_id;
  p.block_dim = t.block_dim;
  p.start_ns = t.start_ns;
  p.duration_ns = duration(t);
  p.flops = t.flops;
  p.bytes = t.bytes;
  const Roofline r = roofline(data, t);
  p.flops_per_s = r.flops_per_s;
  p.bytes_per_s = r.bytes_per_s;
  p.compute_pct = r.compute_pct;
  p.memory_pct = r.memory_pct;
  p.compute_peak_pct = r.compute_peak_pct;
  p.memory_peak_pct = r.memory_peak_pct;
  p.bound = r.bound;
  return p;
}

std::vector<TaskPerf> top_ops(const TraceData& data, int top) {
  // The `top` longest kept in a heap as the tasks go by (the shortest kept on top): no array of all 10M.
  const auto longer = [](const Task* a, const Task* b) {
    return duration(*a) != duration(*b) ? duration(*a) > duration(*b) : a->task_id < b->task_id;
  };
  const auto n = static_cast<std::size_t>(std::max(top, 0));
  std::vector<const Task*> kept;
  if (n == 0) return {};
  for (const Task& t : data.kernels) {
    if (kept.size() < n) {
      kept.push_back(&t);
      std::push_heap(kept.begin(), kept.end(), longer);
    } else if (longer(&t, kept.front())) {
      std::pop_heap(kept.begin(), kept.end(), longer);
      kept.back() = &t;
      std::push_heap(kept.begin(), kept.end(), longer);
    }
  }
  std::sort_heap(kept.begin(), kept.end(), longer);
  std::vector<TaskPerf> out;
  for (const Task* t : kept) out.push_back(task_perf(data, *t));
  return out;
}

std::vector<BoundShare> bound_shares(const TraceData& data) {
  std::vector<BoundShare> out = {{Bound::kCompute}, {Bound::kMemory}, {Bound::kLatency}};
  for (const Task& t : data.kernels) {
    BoundShare& s = out[static_cast<std::size_t>(roofline(data, t).bound)];
    ++s.tasks;
    s.total_ns = add_ns(s.total_ns, duration(t));
  }
  return out;
}

namespace {

constexpr Column kTopOpsColumns[] = {
    {"task_id", Unit::kTaskId, "TASK.task_id", "task", true},
    {"op_name", Unit::kOpName, "the op instance"},
    {"op_type", Unit::kText, "its op type"},
    {"task_type", Unit::kText, "AI_CORE, AI_VECTOR_CORE or AI_CPU", "", true},
    {"device_id", Unit::kId, "the device it ran on", "device", true},
    {"stream_id", Unit::kId, "its stream", "stream", true},
    {"start_ns", Unit::kNs, "its start", "", true},
    {"duration_ns", Unit::kNs, "end - start"},
    {"block_dim", Unit::kCount, "the blocks it ran on", "", true},
    {"flops", Unit::kCount, "its floating-point operations (the cost model's count)", "", true},
    {"bytes", Unit::kBytes, "the bytes it moved to and from HBM", "", true},
    {"bound", Unit::kText, "compute, memory or latency (Note [Roofline bound])"},
    {"achieved_flops_per_s", Unit::kFlopsPerS, "flops / duration", "FLOP/s"},
    {"compute_pct_of_ceiling", Unit::kPercent,
     "achieved FLOP/s / the unit's achievable ceiling for its compute dtype (Note [Roofline bound])", "% ceil"},
    {"compute_pct_of_peak", Unit::kPercent, "achieved FLOP/s / the unit's paper peak for its compute dtype", "% peak",
     true},
    {"achieved_bytes_per_s", Unit::kBytesPerS, "bytes / duration", "bytes/s"},
    {"memory_pct_of_ceiling", Unit::kPercent, "achieved bytes/s / the effective HBM bandwidth", "% BW"},
    {"memory_pct_of_peak", Unit::kPercent, "achieved bytes/s / the specified HBM bandwidth", "", true},
};
constexpr Column kBoundColumns[] = {
    {"bound", Unit::kText, "compute, memory or latency"},
    {"tasks", Unit::kCount, "kernel tasks of that bound"},
    {"total_ns", Unit::kNs, "their time"},
};

}  // namespace

constexpr TableSpec kTopOpsTable{"top_ops", "Top ops by duration",
                                 "The longest kernel tasks (--top), with their roofline bound.", kTopOpsColumns};
constexpr TableSpec kTimeByBoundTable{
    "time_by_bound", "Kernel time by bound", "All kernel time split by roofline bound.",
    kBoundColumns,   Layout::kRows,          Section::kSummary};

namespace {

void run_top_ops(RuleContext& c) {
  // An imported trace has no cost-model FLOPs or bytes: its roofline cells are null (Note
  // [Emulated-only rules]).
  const bool roofline = !c.data.imported();
  for (const TaskPerf& p : top_ops(c.data, c.top)) {
    Row row{p.task_id,
            p.op_name,
            p.op_type,
            p.task_type,
            std::int64_t{p.device_id},
            std::int64_t{p.stream_id},
            p.start_ns,
            p.duration_ns,
            std::int64_t{p.block_dim}};
    if (roofline) {
      row.insert(row.end(), {p.flops, p.bytes, std::string(bound_name(p.bound)), p.flops_per_s, p.compute_pct,
                             p.compute_peak_pct, p.bytes_per_s, p.memory_pct, p.memory_peak_pct});
    } else {
      row.resize(std::size(kTopOpsColumns));
    }
    c.add(kTopOpsTable, std::move(row));
  }
  if (!roofline) {
    c.leave_out("top_ops' roofline bound and time_by_bound (the cost model's FLOPs and bytes)", &kTimeByBoundTable);
    return;
  }
  for (const BoundShare& b : bound_shares(c.data)) {
    c.add(kTimeByBoundTable, {std::string(bound_name(b.bound)), b.tasks, b.total_ns});
  }
}

constexpr const TableSpec* kTopOpsTables[] = {&kTopOpsTable, &kTimeByBoundTable};

}  // namespace

extern const Rule kTopOpsRule{"top_ops", "the longest tasks and their roofline bound", run_top_ops, kTopOpsTables};

}  // namespace npuscope::analyzer
