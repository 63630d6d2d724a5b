// Reading one side of a diff: the ops in compact rows, the time split, memory, APIs and settings.
#include "diff_side.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_map>

#include "cancel_check.h"
#include "npuscope/analyzer/diff.h"
#include "trace_data.h"

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kNoEnd = std::numeric_limits<std::int64_t>::max();

// The length of the union of intervals added in start order (a sweep: overlap counts once).
class Union {
 public:
  void add(std::int64_t start, std::int64_t end) {
    if (start > end_) {
      total_ += end_ - start_;
      start_ = start;
    }
    end_ = std::max(end_, end);
  }
  std::int64_t total() const { return total_ + (end_ - start_); }

 private:
  std::int64_t start_ = 0, end_ = 0, total_ = 0;  // the open interval, and what closed before it
};

struct StepRange {  // the whole trace by default
  std::int64_t start_ns = std::numeric_limits<std::int64_t>::min(), end_ns = kNoEnd;
  bool contains(std::int64_t t) const { return t >= start_ns && t < end_ns; }
};

// The step's range from its MARKER (the first, when several threads marked it); the whole trace
// without one. DiffError names the steps the trace has.
StepRange step_range(const collector::TraceReader& trace, std::optional<std::int64_t> step, std::int64_t& steps) {
  std::set<std::int64_t> numbers;
  std::optional<StepRange> found;
  trace.for_each([&](const collector::MarkerRow& m) {
    if (!is(m.kind, MarkerKind::kStep)) return;
    numbers.insert(m.step);
    if (step && m.step == *step && !found) found = StepRange{m.start_ns, m.end_ns};
  });
  steps = static_cast<std::int64_t>(numbers.size());
  if (!step) return {};
  if (found) {
    check_times(trace, "MARKER", "step", *step, {{"start_ns", found->start_ns}, {"end_ns", found->end_ns}});
    return *found;
  }
  std::string what = trace.path() + " has no step " + std::to_string(*step);
  if (numbers.empty()) {
    what +=
        ": it has no step markers (a training loop marks them: torch_npu's profiler step, or "
        "npuscope::emulator::step_begin); compare whole traces without --base-step/--new-step";
  } else {
    what += "; its steps are " + std::to_string(*numbers.begin()) + " to " + std::to_string(*numbers.rbegin()) + " (" +
            std::to_string(numbers.size()) + " steps)";
  }
  throw DiffError(what);
}

// Note [Diff memory]: the side's own reader leaves out the columns a diff does not read (a trace has
// an API call per task).
const collector::ReaderOptions kDiffReading{
    .verify = false,
    .skip_columns = {"TASK.connection_id", "TASK.emulation_ns", "TASK.thread_id", "TASK.underflow", "TASK.subnormal",
                     "TASK.overflow", "TASK.stream_id", "API.connection_id", "API.thread_id", "API.kind",
                     "PYTORCH_API.thread_id", "PYTORCH_API.module_id", "PYTORCH_API.sequence_number",
                     "PYTORCH_API.fwd_thread_id", "PYTORCH_API.input_dtypes_id", "PYTORCH_API.parent_id"}};

// Note [Kernel classes]
// msprof-analyze's compare splits a GPU profile's compute by its kernels: GEMMs (a name with
// "gemm": cuBLAS' and CUTLASS' sm90_xmma_gemm_*, Kernel2<cutlass_*gemm*>, and rocBLAS/Tensile's
// Cijk_* on ROCm), then the rest as vector work; npuscope splits the rest into elementwise kernels
// (PyTorch's elementwise_kernel, vectorized_elementwise_kernel, unrolled_elementwise_kernel) and
// the others (reductions, normalisations, attention, copies' kernels).
enum KernelClass : std::int8_t { kNotAKernel = 0, kGemm = 1, kElementwise = 2, kOtherKernel = 3 };

KernelClass kernel_class(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("gemm") != std::string::npos || lower.starts_with("cijk_")) return kGemm;
  if (lower.find("elementwise") != std::string::npos) return kElementwise;
  return kOtherKernel;
}

void read_ops(const collector::TraceReader& own, const StepRange& range, DiffSide& side, CancelCheck& check,
              std::vector<std::int64_t>& framework_op_ids) {
  side.ops.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, own.count("TASK"))));
  std::vector<std::int8_t> class_of_name;               // by name id; -1 not seen yet
  const bool framework = own.count("PYTORCH_API") > 0;  // else no framework op launched any
  // A task belongs to the step its launch falls in; it starts at or after its launch. An imported
  // task's launch is unknown (queued_ns 0): its start stands in.
  own.for_each(
      [&](const collector::TaskRow& t) {
        check.row();
        check_times(own, "TASK", "task_id", t.task_id,
                    {{"start_ns", t.start_ns}, {"end_ns", t.end_ns}, {"queued_ns", t.queued_ns}});
        if (!is_kernel_or_collective_op(t.task_type) || !range.contains(t.queued_ns > 0 ? t.queued_ns : t.start_ns))
          return;
        const PairingKeys ids{collector::compact_string_id(t.name_id), collector::compact_string_id(t.op_type_id),
                              collector::compact_string_id(t.input_shapes_id), t.call_index};
        std::int8_t kind = kNotAKernel;
        if (is(t.task_type, TaskType::kKernel)) {
          side.gpu = true;
          const auto id = static_cast<std::size_t>(ids.name);
          if (id >= class_of_name.size()) class_of_name.resize(id + 1, -1);
          if (class_of_name[id] < 0) class_of_name[id] = kernel_class(own.string(ids.name));
          kind = class_of_name[id];
        } else if (!is(t.task_type, TaskType::kCommunication) && !is(t.task_type, TaskType::kHostCpu)) {
          side.npu = true;
        }
        side.ops.push_back({t.task_id, t.start_ns, std::max<std::int64_t>(0, t.end_ns - t.start_ns), ids,
                            static_cast<std::int8_t>(t.task_type), static_cast<std::int8_t>(t.fallback != 0), kind});
        if (framework) framework_op_ids.push_back(t.pytorch_api_id);
      },
      {.starting = {{range.start_ns, kNoEnd}}});
  // A step keeps a part of the trace's tasks: give the rest back (the whole trace keeps ~all, no copy).
  if (side.ops.size() < side.ops.capacity() / 2) side.ops.shrink_to_fit();
  rebase_call_indexes(side.ops);  // so that two steps line up (Note [Op pairing])
}

// Adds v to the tally of id, growing the table.
void tally(std::vector<Tally>& by_id, std::int32_t id, std::int64_t v) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= by_id.size()) by_id.resize(i + 1);
  by_id[i].add(v);
}

void read_host(const collector::TraceReader& own, const StepRange& range, DiffSide& side, CancelCheck& check,
               const std::vector<std::int64_t>& framework_op_ids) {
  // The framework ops that launched the side's ops: their name and input shapes.
  std::unordered_map<std::int64_t, std::pair<std::int32_t, std::int32_t>> launched;
  for (const std::int64_t id : framework_op_ids) {
    if (id != 0) launched.try_emplace(id);
  }
  own.for_each([&](const collector::ApiRow& a) {
    check.row();
    check_times(own, "API", nullptr, 0, {{"start_ns", a.start_ns}, {"end_ns", a.end_ns}});
    if (range.contains(a.start_ns))
      tally(side.apis, collector::compact_string_id(a.name_id), std::max<std::int64_t>(0, a.end_ns - a.start_ns));
  });
  own.for_each([&](const collector::PytorchApiRow& h) {
    check.row();
    check_times(own, "PYTORCH_API", "id", h.id, {{"start_ns", h.start_ns}, {"end_ns", h.end_ns}});
    if (range.contains(h.start_ns))
      tally(side.framework_ops, collector::compact_string_id(h.name_id),
            std::max<std::int64_t>(0, h.end_ns - h.start_ns));
    if (const auto it = launched.find(h.id); it != launched.end()) {
      it->second = {collector::compact_string_id(h.name_id), collector::compact_string_id(h.input_shapes_id)};
    }
  });
  if (!launched.empty()) {
    side.framework_op_of.reserve(framework_op_ids.size());
    for (const std::int64_t id : framework_op_ids) {
      const auto it = id != 0 ? launched.find(id) : launched.end();
      side.framework_op_of.push_back(it != launched.end() ? it->second : std::pair<std::int32_t, std::int32_t>{});
    }
  }
  MemoryTotals& m = side.memory;
  own.for_each([&](const collector::MemoryRow& r) {
    check.row();
    if (!range.contains(r.ts_ns)) return;
    m.recorded = true;
    m.peak_allocated = std::max(m.peak_allocated, r.allocated_bytes);
    m.peak_reserved = std::max(m.peak_reserved, r.reserved_bytes);
    if (is(r.op, MemoryOp::kAlloc)) m.allocations.add(r.bytes);
    if (is(r.op, MemoryOp::kFree)) m.frees.add(r.bytes);
  });
}

// The unions of Note [Diff memory]'s TimeSplit, from the ops and the copies, both in start order.
void split_time(const std::vector<DiffOp>& ops, const std::vector<std::pair<std::int64_t, std::int64_t>>& copies,
                std::optional<StepRange> step, TimeSplit& t) {
  Union computing, busy, communication, cube, vector, ai_cpu, host_cpu, copy, gemm, elementwise, other_kernel;
  std::int64_t first = kNoEnd, last = std::numeric_limits<std::int64_t>::min();
  std::size_t c = 0;
  const auto add_copy = [&](std::int64_t s, std::int64_t e) {
    computing.add(s, e);
    busy.add(s, e);
    copy.add(s, e);
    ++t.copy_count;
    first = std::min(first, s);
    last = std::max(last, e);
  };
  for (const DiffOp& op : ops) {
    for (; c < copies.size() && copies[c].first <= op.start_ns; ++c) add_copy(copies[c].first, copies[c].second);
    const std::int64_t s = op.start_ns, e = op.start_ns + op.dur_ns;
    first = std::min(first, s);
    last = std::max(last, e);
    busy.add(s, e);
    if (is(op.task_type, TaskType::kCommunication)) {
      communication.add(s, e);
      ++t.communication_count;
      continue;
    }
    computing.add(s, e);
    if (is(op.task_type, TaskType::kAiCore)) cube.add(s, e), ++t.cube_count;
    if (is(op.task_type, TaskType::kAiVectorCore)) vector.add(s, e), ++t.vector_count;
    if (is(op.task_type, TaskType::kAiCpu)) ai_cpu.add(s, e), ++t.ai_cpu_count, t.fallback_count += op.fallback;
    if (is(op.task_type, TaskType::kHostCpu)) host_cpu.add(s, e), ++t.host_cpu_count;
    if (op.kernel_class == kGemm) gemm.add(s, e), ++t.gemm_count;
    if (op.kernel_class == kElementwise) elementwise.add(s, e), ++t.elementwise_count;
    if (op.kernel_class == kOtherKernel) other_kernel.add(s, e), ++t.other_kernel_count;
  }
  for (; c < copies.size(); ++c) add_copy(copies[c].first, copies[c].second);
  if (step) {  // the step's span, and the device work it launched that ran past it
    first = step->start_ns;
    last = std::max(step->end_ns, last);
  }
  t.e2e_ns = last > first ? last - first : 0;
  t.computing_ns = computing.total();
  t.cube_ns = cube.total();
  t.vector_ns = vector.total();
  t.ai_cpu_ns = ai_cpu.total();
  t.host_cpu_ns = host_cpu.total();
  t.copy_ns = copy.total();
  t.gemm_ns = gemm.total();
  t.elementwise_ns = elementwise.total();
  t.other_kernel_ns = other_kernel.total();
  t.communication_ns = communication.total();
  t.uncovered_communication_ns = busy.total() - t.computing_ns;
  t.free_ns = std::max<std::int64_t>(0, t.e2e_ns - busy.total());
}

// DEVICE_INFO's values, "a, b" when the devices differ.
std::string device_values(const std::vector<collector::DeviceInfoRow>& devices,
                          std::string collector::DeviceInfoRow::*member) {
  std::set<std::string> seen;
  std::string out;
  for (const auto& d : devices) {
    if (seen.insert(d.*member).second) out += (out.empty() ? "" : ", ") + d.*member;
  }
  return out;
}

}  // namespace

DiffSide load_diff_side(const collector::TraceReader& trace, std::optional<std::int64_t> step,
                        const std::atomic<bool>* cancel) {
  DiffSide side;
  side.path = trace.path();
  side.step = step;
  const StepRange range = step_range(trace, step, side.steps);
  CancelCheck check(cancel);
  const auto own = collector::TraceReader::open(trace.path(), kDiffReading);
  std::vector<std::int64_t> framework_op_ids;  // parallel to side.ops
  read_ops(*own, range, side, check, framework_op_ids);
  std::vector<std::pair<std::int64_t, std::int64_t>> copies;
  trace.for_each([&](const collector::MemcpyRow& m) {
    check_times(trace, "MEMCPY", "task_id", m.task_id,
                {{"start_ns", m.start_ns}, {"end_ns", m.end_ns}, {"queued_ns", m.queued_ns}});
    if (range.contains(m.queued_ns)) copies.emplace_back(m.start_ns, std::max(m.start_ns, m.end_ns));
  });
  split_time(side.ops, copies, step ? std::optional(range) : std::nullopt, side.time);
  read_host(*own, range, side, check, framework_op_ids);
  const auto devices = trace.rows<collector::DeviceInfoRow>();
  side.command = trace.meta("command").value_or("");
  side.device = device_values(devices, &collector::DeviceInfoRow::name);
  side.precision_mode = device_values(devices, &collector::DeviceInfoRow::precision_mode);
  side.overflow_mode = device_values(devices, &collector::DeviceInfoRow::overflow_mode);
  side.version = trace.meta("npuscope_version").value_or("");
  side.status = trace.meta("status").value_or("");
  return side;
}

}  // namespace npuscope::analyzer
