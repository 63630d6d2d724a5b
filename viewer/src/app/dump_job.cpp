// Note [Dump comparison in the viewer] (npuscope/viewer/dump_comparison.h).
#include "dump_job.h"

#include "npuscope/importer/msprobe_dump_reader.h"  // dump_place

namespace npuscope::viewer {
namespace {

// Thrown from the progress callback when the job is cancelled: out of compare_dumps, caught by run().
struct Cancelled {};

}  // namespace

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
    set_status("reading " + request_.npu + " and " + request_.bench + " ...");
    // A trace side: the path `npuscope view` handed on, recovered and imported there (Note [Dump
    // comparison sides]).
    sides_ = comparator::read_dump_sides(request_.npu, request_.bench, [](const std::string& path) {
      return collector::TraceReader::open(path, {.verify = false});
    });
    const std::vector<importer::MsprobeDumpPair>& pairs = sides_.pairs;
    {
      const std::lock_guard lock(mutex_);
      notes_ = sides_.unpaired;
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
        auto c = std::make_unique<DumpComparison>(*pairs[i].npu, *pairs[i].bench, options, place);
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
  } catch (const std::exception& e) {  // comparator::CompareError, a TraceError, a bad_alloc: the panel says it
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
