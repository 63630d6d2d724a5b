// Note [Dump comparison in the viewer] (npuscope/viewer/dump_comparison.h).
#include "npuscope/viewer/dump_comparison.h"

#include <algorithm>

#include "npuscope/comparator/compare_report.h"

namespace npuscope::viewer {
namespace {

using collector::DumpEntry;
using collector::MsprobeDump;

constexpr std::string_view kEntriesTable = "entries";
constexpr std::string_view kValuesTable = "compare_result";
constexpr std::size_t kMaxModuleDepth = 256;  // a construct.json whose parents loop ends here

analyzer::Table take_table(analyzer::Report& report, std::string_view name) {
  for (analyzer::Table& t : report.tables) {
    if (t.spec->name == name) return std::move(t);
  }
  return {};
}

}  // namespace

DumpComparison::DumpComparison(const MsprobeDump& npu, const MsprobeDump& bench,
                               const comparator::DumpCompareOptions& options, std::string place)
    : place_(std::move(place)),
      result_(comparator::compare_dumps(npu, bench, options)),
      report_(comparator::compare_report(result_, 0, false)) {
  entries_ = report_.find(kEntriesTable);
  const std::size_t n = result_.entries.size();
  entry_by_name_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) entry_by_name_.emplace(npu_entry(i).name, i);
  npu_by_name_.reserve(npu.entries.size());
  for (std::size_t i = 0; i < npu.entries.size(); ++i) npu_by_name_.emplace(npu.entries[i].name, i);
  entry_of_row_.resize(entries_->rows.size());
  row_of_entry_.assign(n, 0);
  for (std::size_t r = 0; r < entries_->rows.size(); ++r) {
    entry_of_row_[r] = entry_by_name_.at(std::get<std::string>(entries_->rows[r][0]));
    row_of_entry_[entry_of_row_[r]] = r;
  }
}

std::optional<std::size_t> DumpComparison::find_entry(std::string_view name) const {
  const auto it = entry_by_name_.find(name);
  return it == entry_by_name_.end() ? std::nullopt : std::optional(it->second);
}

const DumpEntry& DumpComparison::npu_entry(std::size_t entry) const {
  return result_.npu->entries[static_cast<std::size_t>(result_.entries[entry].npu)];
}

const DumpEntry& DumpComparison::bench_entry(std::size_t entry) const {
  return result_.bench->entries[static_cast<std::size_t>(result_.entries[entry].bench)];
}

analyzer::Table DumpComparison::values(std::size_t entry) const {
  comparator::DumpCompareResult one;
  one.npu = result_.npu;
  one.bench = result_.bench;
  one.mode = result_.mode;
  comparator::DumpEntryVerdict e = result_.entries[entry];
  one.rows.assign(result_.rows.begin() + static_cast<std::ptrdiff_t>(e.first_row),
                  result_.rows.begin() + static_cast<std::ptrdiff_t>(e.last_row));
  for (comparator::DumpRow& row : one.rows) row.entry = 0;
  e.first_row = 0;
  e.last_row = one.rows.size();
  one.entries.push_back(e);
  analyzer::Report report = comparator::compare_report(one);
  return take_table(report, kValuesTable);
}

const std::vector<std::string>& DumpComparison::stack(std::size_t entry) const {
  static const std::vector<std::string> kNone;
  const std::int32_t at = npu_entry(entry).stack;
  return at >= 0 && static_cast<std::size_t>(at) < result_.npu->stacks.size()
             ? result_.npu->stacks[static_cast<std::size_t>(at)]
             : kNone;
}

std::vector<std::string> DumpComparison::module_chain(std::size_t entry) const {
  std::vector<std::string> chain;
  const DumpEntry* e = &npu_entry(entry);
  while (!e->parent.empty() && chain.size() < kMaxModuleDepth) {
    chain.push_back(e->parent);
    const auto it = npu_by_name_.find(e->parent);
    if (it == npu_by_name_.end()) break;
    e = &result_.npu->entries[it->second];
  }
  return chain;
}

}  // namespace npuscope::viewer
