// step_time: msprof's step_trace_time per device and step (Note [Step time] in
// npuscope/analyzer/step_time.h), from the kernels and collectives the analysis holds.
#include "rules.h"
#include "step_time_builder.h"

namespace npuscope::analyzer {
namespace {

constexpr Column kStepTimeColumns[] = {
    {"device_id", Unit::kId, "the device", "device"},
    {"step", Unit::kCount,
     "the step number (ProfilerStep#N, the workload's step markers); null: no step markers, "
     "the whole trace"},
    {"computing_ns", Unit::kNs, "the union of the step's kernels (AI Core, AI Vector, mix, AI CPU, GPU kernels)",
     "Computing"},
    {"communication_not_overlapped_ns", Unit::kNs,
     "Communication - Overlapped (msprof's Communication(Not Overlapped))", "Comm.(Not Overlapped)"},
    {"overlapped_ns", Unit::kNs, "communication while a kernel ran: the intersection of the two unions", "Overlapped"},
    {"communication_ns", Unit::kNs,
     "the union of the step's communication ops (collectives, send/recv; not their "
     "link tasks)",
     "Communication"},
    {"free_ns", Unit::kNs, "the gaps between the step's busy spans: its device span less the union of both", "Free"},
    {"preparing_ns", Unit::kNs,
     "the step's first kernel or collective start - the step's host start (without steps: - the first framework "
     "op's start)",
     "Preparing"},
    {"bubble_ns", Unit::kNs, "the union of its receive ops (hcom_receive*: a pipeline stage waiting)", "Bubble", true},
    {"stage_ns", Unit::kNs, "its device span less Bubble", "Stage", true},
    {"communication_not_overlapped_exclude_receive_ns", Unit::kNs, "Communication(Not Overlapped) - Bubble",
     "Communication(Not Overlapped and Exclude Receive)", true},
    {"start_ns", Unit::kNs, "the step's window on the device: its first kernel's start", "", true},
    {"end_ns", Unit::kNs, "the later of its last kernel's end and the step's host end", "", true},
    {"kernels", Unit::kCount, "kernels launched in the step", "", true},
    {"collectives", Unit::kCount, "communication ops starting in its window", "", true},
};

}  // namespace

constexpr TableSpec kStepTimeTable{
    "step_time",
    "Step time (msprof's step_trace_time)",
    "Per device and step, the device time split as msprof's step_trace_time.csv and analysis.db's StepTraceTime "
    "split it: Computing, Communication(Not Overlapped), Overlapped, Communication, Free, Preparing (Note [Step "
    "time] in analyzer/include/npuscope/analyzer/step_time.h). Without step markers the whole trace is one row per "
    "device.",
    kStepTimeColumns,
    Layout::kRows,
    Section::kDetail,
    "Free is the device idle inside the step (the host launched too late: see idle); Communication(Not "
    "Overlapped) is communication no kernel hides (overlap it with compute, or communicate less); Preparing is "
    "the host's time before the step's first device work"};

namespace {

void run_step_time(RuleContext& c) {
  const TraceData& d = c.data;
  std::optional<std::int64_t> first_framework_op;
  if (!d.host_ops.empty()) first_framework_op = d.host_ops.front().start_ns;
  StepTimeBuilder builder(d.steps, {}, first_framework_op);
  for (const Task& t : d.collectives)
    builder.add_collective(t.device_id, t.start_ns, t.end_ns, StepTimeBuilder::is_receive(d.str(t.name_id)));
  builder.collectives_complete();  // the kernels come in start order
  for (const Task& t : d.kernels) builder.add_kernel(t.device_id, t.queued_ns, t.start_ns, t.end_ns);
  for (const StepTime& s : builder.finish()) {
    c.add(kStepTimeTable, {std::int64_t{s.device_id}, s.step ? Value(*s.step) : Value(), s.computing_ns,
                           s.communication_not_overlapped_ns(), s.overlapped_ns, s.communication_ns, s.free_ns,
                           s.preparing_ns, s.bubble_ns, s.stage_ns, s.communication_not_overlapped_exclude_receive_ns(),
                           s.start_ns, s.end_ns, s.kernels, s.collectives});
  }
}

constexpr const TableSpec* kStepTimeTables[] = {&kStepTimeTable};

}  // namespace

extern const Rule kStepTimeRule{"step_time",
                                "per device and step: Computing, Communication, Overlapped, Free, Preparing "
                                "(msprof's step_trace_time)",
                                run_step_time, kStepTimeTables};

}  // namespace npuscope::analyzer
