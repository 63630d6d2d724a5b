#include "diff_job.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {

DiffJob::DiffJob(std::unique_ptr<collector::TraceReader> base, const std::string& new_path) : base_path_(base->path()) {
  running_ = std::async(std::launch::async, [base = std::move(base), new_path, cancel = &cancel_] {
    const auto next = collector::TraceReader::open(new_path, {.verify = false});
    return analyzer::diff(*base, *next, {.keep_pairs = true, .cancel = cancel});
  });
}

DiffJob::~DiffJob() { cancel_.store(true); }

const analyzer::DiffResult* DiffJob::result(bool wait) {
  if (result_ || !error_.empty()) return result_ ? &*result_ : nullptr;
  if (!wait && running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
  try {
    result_ = running_.get();
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  return result_ ? &*result_ : nullptr;
}

std::string describe_pair(const analyzer::DiffResult& diff, const collector::TaskRow& task) {
  if (!is_kernel_or_collective_op(task.task_type)) return "";  // what diff pairs (Note [What is an op])
  const analyzer::DiffPair* p = diff.pair_of_new(task.task_id);
  if (p == nullptr) return "added: not in BASE";
  const std::int64_t d = p->new_ns - p->base_ns;
  char ratio[32] = "-";
  if (p->base_ns > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", static_cast<double>(p->new_ns) / p->base_ns);
  return "base duration: " + format_duration(p->base_ns) + " (diff " + (d < 0 ? "-" : "+") +
         format_duration(std::llabs(d)) + ", ratio " + ratio + ")";
}

}  // namespace npuscope::viewer
