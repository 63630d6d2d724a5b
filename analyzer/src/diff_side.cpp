// Reading one side of a diff: the ops in compact rows, the time split, memory, APIs and settings.
#include "diff_side.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "cancel_check.h"
#include "diff_time_split.h"
#include "npuscope/analyzer/diff.h"
#include "trace_data.h"

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kNoEnd = std::numeric_limits<std::int64_t>::max();

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

// What read_ops gathers for the classes of the ops (Note [Kernel classes]), by the trace's ids.
struct ClassInputs {
  std::vector<std::int64_t> framework_op_ids;          // parallel to side.ops; empty without framework ops
  std::vector<KernelTraits> name_traits, type_traits;  // by name id, op type id
  std::vector<std::int8_t> seen_name, seen_type;
};

KernelTraits traits_of(std::vector<KernelTraits>& traits, std::vector<std::int8_t>& seen, std::int32_t id,
                       const std::string& text, KernelTraits (*read)(std::string_view)) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= seen.size()) seen.resize(i + 1, 0), traits.resize(i + 1, 0);
  if (seen[i] == 0) traits[i] = read(text), seen[i] = 1;
  return traits[i];
}

void read_ops(const collector::TraceReader& own, const StepRange& range, DiffSide& side, CancelCheck& check,
              ClassInputs& classes, std::vector<Span>& copies, std::unordered_set<std::int64_t>& copy_tasks,
              bool output_shapes) {
  side.ops.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, own.count("TASK"))));
  const bool framework = own.count("PYTORCH_API") > 0;  // else no framework op launched any
  // A task belongs to the step its launch falls in; it starts at or after its launch. An imported
  // task's launch is unknown (queued_ns 0): its start stands in.
  own.for_each(
      [&](const collector::TaskRow& t) {
        check.row();
        check_times(own, "TASK", "task_id", t.task_id,
                    {{"start_ns", t.start_ns}, {"end_ns", t.end_ns}, {"queued_ns", t.queued_ns}});
        if (!range.contains(t.queued_ns > 0 ? t.queued_ns : t.start_ns)) return;
        if (is(t.task_type, TaskType::kMemcpy) || is(t.task_type, TaskType::kMemset)) {
          copies.emplace_back(t.start_ns, std::max(t.start_ns, t.end_ns));
          copy_tasks.insert(t.task_id);
        }
        if (!is_kernel_or_collective_op(t.task_type)) return;
        const PairingKeys ids{collector::compact_string_id(t.name_id), collector::compact_string_id(t.op_type_id),
                              collector::compact_string_id(t.input_shapes_id), t.call_index};
        if (is(t.task_type, TaskType::kKernel)) {
          side.gpu = true;
        } else if (!is(t.task_type, TaskType::kCommunication) && !is(t.task_type, TaskType::kHostCpu)) {
          side.npu = true;
        }
        if (is_device_kernel(t.task_type)) {  // the strings' traits, each distinct one read once
          traits_of(classes.name_traits, classes.seen_name, ids.name, own.string(ids.name), kernel_name_traits);
          traits_of(classes.type_traits, classes.seen_type, ids.type, own.string(ids.type), op_type_traits);
        }
        side.ops.push_back({t.task_id, t.start_ns, std::max<std::int64_t>(0, t.end_ns - t.start_ns), ids,
                            static_cast<std::int8_t>(t.task_type), static_cast<std::int8_t>(t.fallback != 0)});
        if (framework) classes.framework_op_ids.push_back(t.pytorch_api_id);
        if (output_shapes) side.output_shapes_of.push_back(collector::compact_string_id(t.output_shapes_id));
      },
      {.starting = {{range.start_ns, kNoEnd}}});
  // A step keeps a part of the trace's tasks: give the rest back (the whole trace keeps ~all, no copy).
  if (side.ops.size() < side.ops.capacity() / 2) side.ops.shrink_to_fit();
  rebase_call_indexes(side.ops);  // so that two steps line up (Note [Op pairing])
}

// The collectives' communicators and waits (COMMUNICATOR, COMMUNICATION), by task id.
std::unordered_map<std::int64_t, CollectiveTimes> read_collectives(const collector::TraceReader& own,
                                                                   std::vector<std::string>& names) {
  std::unordered_map<std::int64_t, std::int32_t> group_of;  // COMMUNICATOR id -> names
  own.for_each([&](const collector::CommunicatorRow& c) {
    group_of[c.communicator_id] = static_cast<std::int32_t>(names.size());
    names.push_back(own.string(c.name_id));
  });
  std::unordered_map<std::int64_t, CollectiveTimes> out;
  own.for_each([&](const collector::CommunicationRow& c) {
    const auto g = group_of.find(c.communicator_id);
    out[c.task_id] = {g != group_of.end() ? g->second : -1, c.arrival_ns, c.start_ns};
  });
  return out;
}

// Adds v to the tally of id, growing the table.
void tally(std::vector<Tally>& by_id, std::int32_t id, std::int64_t v) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= by_id.size()) by_id.resize(i + 1);
  by_id[i].add(v);
}

// A framework op whose name classes the kernels launched inside it (Note [Kernel classes], step 2).
struct ClassingOp {
  std::int64_t start_ns = 0, end_ns = 0;
  FrameworkOpClass what;
};

// Step 2 of Note [Kernel classes]: the earliest-starting classing op that contains `t` (ops sorted by
// start, `reach` the running maximum of their ends).
FrameworkOpClass classing_op_at(const std::vector<ClassingOp>& ops, const std::vector<std::int64_t>& reach,
                                std::int64_t t) {
  const auto i = static_cast<std::size_t>(std::lower_bound(reach.begin(), reach.end(), t) - reach.begin());
  return i < ops.size() && ops[i].start_ns <= t && ops[i].end_ns >= t ? ops[i].what : FrameworkOpClass{};
}

// Returns the framework class of each op (parallel to side.ops; empty without framework ops).
std::vector<FrameworkOpClass> read_host(const collector::TraceReader& own, const StepRange& range, DiffSide& side,
                                        CancelCheck& check, const std::vector<std::int64_t>& framework_op_ids) {
  struct Launcher {
    std::int32_t name = 0, shapes = 0;
    std::int64_t start_ns = -1;
  };
  // The framework ops that launched the side's ops: their name, input shapes and start.
  std::unordered_map<std::int64_t, Launcher> launched;
  for (const std::int64_t id : framework_op_ids) {
    if (id != 0) launched.try_emplace(id);
  }
  own.for_each([&](const collector::ApiRow& a) {
    check.row();
    check_times(own, "API", nullptr, 0, {{"start_ns", a.start_ns}, {"end_ns", a.end_ns}});
    if (range.contains(a.start_ns))
      tally(side.apis, collector::compact_string_id(a.name_id), std::max<std::int64_t>(0, a.end_ns - a.start_ns));
  });
  std::vector<ClassingOp> classing;
  std::vector<std::array<std::int8_t, 2>> class_of_name;  // by name id, then backward pass: kind | backward << 4
  own.for_each([&](const collector::PytorchApiRow& h) {
    check.row();
    check_times(own, "PYTORCH_API", "id", h.id, {{"start_ns", h.start_ns}, {"end_ns", h.end_ns}});
    const std::int32_t name = collector::compact_string_id(h.name_id);
    if (range.contains(h.start_ns)) tally(side.framework_ops, name, std::max<std::int64_t>(0, h.end_ns - h.start_ns));
    if (const auto it = launched.find(h.id); it != launched.end()) {
      it->second = {name, collector::compact_string_id(h.input_shapes_id), h.start_ns};
    }
    if (launched.empty()) return;
    const auto n = static_cast<std::size_t>(name);
    if (n >= class_of_name.size()) class_of_name.resize(n + 1, {-1, -1});
    const bool backward = is(h.pass, ModelPass::kBackward);
    std::int8_t& code = class_of_name[n][backward ? 1 : 0];
    if (code < 0) {
      const FrameworkOpClass c = framework_op_class(own.string(name), backward);
      code = static_cast<std::int8_t>(c.kind | (c.backward ? 16 : 0));
    }
    if (code != FrameworkOpClass::kNone) {
      classing.push_back({h.start_ns, h.end_ns, {static_cast<FrameworkOpClass::Kind>(code & 15), (code & 16) != 0}});
    }
  });
  if (launched.empty()) return {};
  side.framework_op_of.reserve(framework_op_ids.size());
  for (const std::int64_t id : framework_op_ids) {
    const auto it = id != 0 ? launched.find(id) : launched.end();
    side.framework_op_of.emplace_back(it != launched.end() ? std::pair(it->second.name, it->second.shapes)
                                                           : std::pair<std::int32_t, std::int32_t>{});
  }
  std::stable_sort(classing.begin(), classing.end(),
                   [](const ClassingOp& a, const ClassingOp& b) { return a.start_ns < b.start_ns; });
  std::vector<std::int64_t> reach(classing.size());
  for (std::size_t i = 0; i < classing.size(); ++i)
    reach[i] = std::max(classing[i].end_ns, i > 0 ? reach[i - 1] : classing[i].end_ns);
  std::vector<FrameworkOpClass> out(framework_op_ids.size());
  for (std::size_t i = 0; i < framework_op_ids.size() && !classing.empty(); ++i) {
    const auto it = framework_op_ids[i] != 0 ? launched.find(framework_op_ids[i]) : launched.end();
    if (it != launched.end() && it->second.start_ns >= 0) out[i] = classing_op_at(classing, reach, it->second.start_ns);
  }
  return out;
}

void read_memory(const collector::TraceReader& own, const StepRange& range, DiffSide& side, CancelCheck& check) {
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

// The classes of Note [Kernel classes], once the framework ops are read.
void classify(DiffSide& side, const ClassInputs& in, const std::vector<FrameworkOpClass>& framework) {
  const auto traits = [](const std::vector<KernelTraits>& by_id, std::int32_t id) {
    return static_cast<std::size_t>(id) < by_id.size() ? by_id[static_cast<std::size_t>(id)] : KernelTraits{0};
  };
  for (std::size_t i = 0; i < side.ops.size(); ++i) {
    DiffOp& op = side.ops[i];
    const auto t =
        static_cast<KernelTraits>(traits(in.name_traits, op.keys.name) | traits(in.type_traits, op.keys.type));
    op.compute_class = compute_class(op.task_type, t, i < framework.size() ? framework[i] : FrameworkOpClass{});
  }
}

DiffSide load_diff_side(const collector::TraceReader& trace, std::optional<std::int64_t> step,
                        const std::atomic<bool>* cancel, bool output_shapes) {
  DiffSide side;
  side.path = trace.path();
  side.source = trace.meta(std::string(collector::kMetaSource)).value_or("");
  side.step = step;
  const StepRange range = step_range(trace, step, side.steps);
  CancelCheck check(cancel);
  const auto own = collector::TraceReader::open(trace.path(), kDiffReading);
  ClassInputs classes;
  // Copies and memsets: TASK rows (an import's), then MEMCPY rows without one (the emulator's).
  std::vector<Span> copies;
  std::unordered_set<std::int64_t> copy_tasks;
  read_ops(*own, range, side, check, classes, copies, copy_tasks, output_shapes);
  trace.for_each([&](const collector::MemcpyRow& m) {
    check_times(trace, "MEMCPY", "task_id", m.task_id,
                {{"start_ns", m.start_ns}, {"end_ns", m.end_ns}, {"queued_ns", m.queued_ns}});
    if (range.contains(m.queued_ns) && !copy_tasks.contains(m.task_id))
      copies.emplace_back(m.start_ns, std::max(m.start_ns, m.end_ns));
  });
  std::stable_sort(copies.begin(), copies.end());
  classify(side, classes, read_host(*own, range, side, check, classes.framework_op_ids));
  read_memory(*own, range, side, check);
  std::vector<std::string> groups;
  const auto collectives = read_collectives(*own, groups);
  side.time = split_time({.ops = side.ops,
                          .copies = copies,
                          .collectives = collectives,
                          .group_names = groups,
                          .step = step ? std::optional(Span{range.start_ns, range.end_ns}) : std::nullopt});
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
