// The opkit sanitizer's findings in custom kernels (KERNEL_FINDING, msSanitizer's memcheck and
// racecheck): errors, each with its kernel, block, check, instruction and source line, and their
// counts per kernel and check.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr std::size_t kMaxListed = 1000;  // findings listed; the counts cover all of them

constexpr Column kCountColumns[] = {
    {"kernel", Unit::kText, "the kernel"},
    {"check", Unit::kText, "the sanitizer's check (docs/opkit.md lists them)"},
    {"instruction", Unit::kText, "the instruction that failed it; null if none"},
    {"source", Unit::kText, "file:line of the call; null if unknown"},
    {"findings", Unit::kCount, "its findings of that check at that place"},
    {"tasks", Unit::kCount, "the launches they were found in"},
    {"blocks", Unit::kCount, "the blocks they were found in, all launches (a finding about a whole launch: none)"},
};

constexpr Column kFindingColumns[] = {
    {"check", Unit::kText, "the sanitizer's check (KERNEL_FINDING.check_kind's name)"},
    {"kernel", Unit::kText, "the kernel"},
    {"block", Unit::kId, "the block; null for a finding about the whole launch (blocks writing the same bytes)"},
    {"instruction", Unit::kText, "the instruction: DataCopy, DeQue, AllocTensor, ...; null if none", "instruction"},
    {"source", Unit::kText, "file:line of the call in the kernel's source; null if unknown", "source"},
    {"message", Unit::kText, "what the check saw"},
    {"severity", Unit::kText, "error: a kernel with findings computes wrong results or faults on an NPU", "", true},
    {"op_name", Unit::kOpName, "the launch's op", "op", true},
    {"task_id", Unit::kTaskId, "the launch's TASK.task_id", "task", true},
};

}  // namespace

constexpr TableSpec kKernelFindingCountsTable{
    "kernel_sanitizer_counts",
    "Sanitizer findings in custom kernels",
    "The opkit sanitizer's findings (KERNEL_FINDING) counted per kernel, check and place in the source, most "
    "first: a bug met in every tile is one row.",
    kCountColumns,
    Layout::kRows,
    Section::kAlert};
constexpr TableSpec kKernelFindingsTable{
    "kernel_sanitizer",
    "Sanitizer errors (custom kernels)",
    "Every finding of the opkit sanitizer (msSanitizer's memcheck and racecheck, KERNEL_FINDING), in trace order "
    "(by task, block; the first 1000): an error each.",
    kFindingColumns,
    Layout::kItems,
    Section::kAlert,
    "fix the kernel at the line shown (docs/opkit.md \"The sanitizer\" explains each check); without `npuscope run "
    "--keep-going` only the first finding of each launch is recorded",
    {},
    5};  // often the same error in every tile: kernel_sanitizer_counts sums them up

namespace {

struct Count {
  std::int64_t findings = 0, tasks = 0, blocks = 0;
  std::int64_t last_task = -1;
  std::int32_t last_block = -1;
};

std::string check_name(std::int32_t kind) { return collector::stored_name<KernelCheck>(kind, "check"); }

Value text_or_null(std::string s) { return s.empty() ? Value() : Value(std::move(s)); }

std::string source_of(const TraceData& data, collector::StringId file_id, std::int32_t line) {
  std::string source = data.str(file_id);
  if (!source.empty() && line > 0) {
    source += ':';  // not ":" + std::to_string(): g++ 12 warns about that (-Wrestrict, a false positive)
    source += std::to_string(line);
  }
  return source;
}

Row finding_row(const TraceData& data, const collector::KernelFindingRow& f, const Task* task) {
  return {check_name(f.check_kind),
          data.str(f.kernel_id),
          f.block >= 0 ? Value(std::int64_t{f.block}) : Value(),
          text_or_null(data.str(f.instruction_id)),
          text_or_null(source_of(data, f.file_id, f.line)),
          data.str(f.message_id),
          std::string("error"),
          task != nullptr ? Value(data.str(task->name_id)) : Value(),
          f.task_id};
}

void tally(Count& n, const collector::KernelFindingRow& f) {
  ++n.findings;
  const bool new_task = f.task_id != n.last_task;
  n.tasks += new_task;
  n.blocks += f.block >= 0 && (new_task || f.block != n.last_block);  // the rows come by task, block
  n.last_task = f.task_id;
  n.last_block = f.block;
}

void run_kernel_sanitizer(RuleContext& c) {
  // Streamed: a --keep-going run may find something in every tile of every launch.
  std::vector<collector::KernelFindingRow> listed;
  // (kernel, check, instruction, file, line)
  using Key = std::tuple<collector::StringId, std::int32_t, collector::StringId, collector::StringId, std::int32_t>;
  std::map<Key, Count> counts;
  std::int64_t total = 0;
  c.data.reader.for_each([&](const collector::KernelFindingRow& f) {
    ++total;
    tally(counts[{f.kernel_id, f.check_kind, f.instruction_id, f.file_id, f.line}], f);
    if (listed.size() < kMaxListed) listed.push_back(f);
  });
  if (total == 0) return;
  std::unordered_map<std::int64_t, const Task*> tasks;  // of the listed findings
  for (const collector::KernelFindingRow& f : listed) tasks.emplace(f.task_id, nullptr);
  for (const Task& t : c.data.kernels) {
    if (const auto it = tasks.find(t.task_id); it != tasks.end()) it->second = &t;
  }
  std::vector<std::pair<Key, Count>> order(counts.begin(), counts.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.findings > b.second.findings; });
  for (const auto& [key, n] : order) {
    const auto& [kernel, check, instruction, file, line] = key;
    c.add(kKernelFindingCountsTable, {c.data.str(kernel), check_name(check), text_or_null(c.data.str(instruction)),
                                      text_or_null(source_of(c.data, file, line)), n.findings, n.tasks, n.blocks});
  }
  for (const collector::KernelFindingRow& f : listed)
    c.add(kKernelFindingsTable, finding_row(c.data, f, tasks[f.task_id]));
  if (total > static_cast<std::int64_t>(listed.size())) {
    c.note("kernel_sanitizer lists the first " + std::to_string(listed.size()) + " of " + std::to_string(total) +
           " sanitizer findings (kernel_sanitizer_counts counts them all)");
  }
}

constexpr const TableSpec* kKernelSanitizerTables[] = {&kKernelFindingCountsTable, &kKernelFindingsTable};

}  // namespace

extern const Rule kKernelSanitizerRule{"kernel_sanitizer",
                                       "the opkit sanitizer's errors in custom kernels, and their counts",
                                       run_kernel_sanitizer,
                                       kKernelSanitizerTables,
                                       false,
                                       "its kernel sanitizer"};

}  // namespace npuscope::analyzer
