// Note [Dump comparison in the viewer] (npuscope/viewer/dump_comparison.h).
#include "npuscope/viewer/dump_comparison.h"

#include <algorithm>

#include "npuscope/comparator/compare_report.h"
#include "npuscope/importer/import.h"
#include "npuscope/importer/msprobe_dump_reader.h"

namespace npuscope::viewer {
namespace {

using collector::DumpEntry;
using collector::MsprobeDump;

constexpr std::string_view kEntriesTable = "entries";
constexpr std::string_view kValuesTable = "compare_result";
constexpr std::size_t kMaxModuleDepth = 256;  // a construct.json whose parents loop ends here

// Thrown from the progress callback when the job is cancelled: out of compare_dumps, caught by run().
struct Cancelled {};

analyzer::Table take_table(analyzer::Report& report, std::string_view name) {
  for (analyzer::Table& t : report.tables) {
    if (t.spec->name == name) return std::move(t);
  }
  return {};
}

}  // namespace

DumpComparison::DumpComparison(const MsprobeDump& npu, const MsprobeDump& bench,
                               const comparator::DumpCompareOptions& options)
    : place_(importer::dump_place(npu)),
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

DumpCompareJob::DumpCompareJob(DumpCompareRequest request) : request_(std::move(request)) {
  worker_ = std::thread([this] { run(); });
}

DumpCompareJob::~DumpCompareJob() {
  cancel_.store(true);
  if (worker_.joinable()) worker_.join();
}

void DumpCompareJob::wait() {
  if (worker_.joinable()) worker_.join();
}

void DumpCompareJob::set_status(std::string status) {
  const std::lock_guard lock(mutex_);
  status_ = std::move(status);
}

void DumpCompareJob::run() {
  try {
    set_status("reading the NPU dump " + request_.npu + " ...");
    npu_ = importer::read_msprobe_dumps(request_.npu);
    set_status("reading the bench dump " + request_.bench + " ...");
    bench_ = importer::read_msprobe_dumps(request_.bench);
    std::vector<std::string> unpaired;
    const std::vector<importer::MsprobeDumpPair> pairs = importer::pair_msprobe_dumps(npu_, bench_, unpaired);
    {
      const std::lock_guard lock(mutex_);
      notes_ = unpaired;
      if (pairs.empty())
        error_ = "no step and rank of " + request_.npu + " is in " + request_.bench + ": nothing to compare";
    }
    std::int64_t total = 0;
    for (const importer::MsprobeDumpPair& p : pairs) total += static_cast<std::int64_t>(p.npu->entries.size());
    entries_total_.store(total);
    std::int64_t before = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string place = importer::dump_place(*pairs[i].npu);
      set_status("comparing " + place + " (" + std::to_string(i + 1) + " of " + std::to_string(pairs.size()) + ")");
      comparator::DumpCompareOptions options = request_.options;
      options.progress = [this, before](std::int64_t done, std::int64_t) {
        if (cancel_.load(std::memory_order_relaxed)) throw Cancelled{};
        entries_done_.store(before + done, std::memory_order_relaxed);
      };
      try {
        auto c = std::make_unique<DumpComparison>(*pairs[i].npu, *pairs[i].bench, options);
        const std::lock_guard lock(mutex_);
        done_.push_back(std::move(c));
      } catch (const comparator::CompareError& e) {
        const std::lock_guard lock(mutex_);
        error_ += (error_.empty() ? "" : "\n") + place + ": " + e.what();
      }
      before += static_cast<std::int64_t>(pairs[i].npu->entries.size());
      entries_done_.store(before);
    }
  } catch (const Cancelled&) {
  } catch (const std::exception& e) {  // importer::ImportError, a bad_alloc: the panel says it
    const std::lock_guard lock(mutex_);
    error_ = e.what();
  }
  set_status("");
  finished_.store(true, std::memory_order_release);
}

std::vector<const DumpComparison*> DumpCompareJob::comparisons() const {
  const std::lock_guard lock(mutex_);
  std::vector<const DumpComparison*> out;
  out.reserve(done_.size());
  for (const auto& c : done_) out.push_back(c.get());
  return out;
}

std::string DumpCompareJob::status() const {
  const std::lock_guard lock(mutex_);
  if (status_.empty() || entries_total_.load() == 0) return status_;
  return status_ + ": " + std::to_string(entries_done_.load()) + " of " + std::to_string(entries_total_.load()) +
         " entries";
}

double DumpCompareJob::fraction() const {
  const std::int64_t total = entries_total_.load();
  return total > 0 ? static_cast<double>(entries_done_.load()) / static_cast<double>(total) : 0.0;
}

std::string DumpCompareJob::error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

std::vector<std::string> DumpCompareJob::notes() const {
  const std::lock_guard lock(mutex_);
  return notes_;
}

}  // namespace npuscope::viewer
