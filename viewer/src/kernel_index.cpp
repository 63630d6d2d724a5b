#include "npuscope/viewer/kernel_index.h"

#include <algorithm>

namespace npuscope::viewer {
namespace {

// The rows of `task_id` in `rows` (sorted by task).
template <class Row>
std::span<const Row> rows_of(const std::vector<Row>& rows, std::int64_t task_id) {
  const auto a = std::partition_point(rows.begin(), rows.end(), [&](const Row& r) { return r.task_id < task_id; });
  const auto b = std::partition_point(a, rows.end(), [&](const Row& r) { return r.task_id == task_id; });
  return {a, b};
}

template <class Row>
void sort_by_task_and_block(std::vector<Row>& rows) {
  const auto less = [](const Row& a, const Row& b) {
    return std::pair{a.task_id, a.block} < std::pair{b.task_id, b.block};
  };
  if (!std::is_sorted(rows.begin(), rows.end(), less)) std::stable_sort(rows.begin(), rows.end(), less);
  rows.shrink_to_fit();
}

}  // namespace

void KernelIndex::load(const collector::TraceReader& trace) {
  blocks_ = trace.rows<collector::KernelBlockRow>();  // in the reader's order: by task, block (sorted again if not)
  findings_ = trace.rows<collector::KernelFindingRow>();
  sort_by_task_and_block(blocks_);
  sort_by_task_and_block(findings_);
  clocks_.clear();
  for (const collector::DeviceInfoRow& d : trace.rows<collector::DeviceInfoRow>())
    clocks_.emplace_back(d.device_id, d.clock_hz);
}

std::span<const collector::KernelBlockRow> KernelIndex::blocks_of(std::int64_t task_id) const {
  return rows_of(blocks_, task_id);
}

std::span<const collector::KernelFindingRow> KernelIndex::findings_of(std::int64_t task_id) const {
  return rows_of(findings_, task_id);
}

std::vector<std::int64_t> KernelIndex::kernel_tasks() const {
  std::vector<std::int64_t> ids;
  for (const auto& b : blocks_) {
    if (ids.empty() || ids.back() != b.task_id) ids.push_back(b.task_id);
  }
  const std::vector<std::int64_t> found = tasks_with_findings();
  std::vector<std::int64_t> all;
  std::set_union(ids.begin(), ids.end(), found.begin(), found.end(), std::back_inserter(all));
  return all;
}

std::vector<std::int64_t> KernelIndex::tasks_with_findings() const {
  std::vector<std::int64_t> ids;
  for (const auto& f : findings_) {
    if (ids.empty() || ids.back() != f.task_id) ids.push_back(f.task_id);
  }
  return ids;
}

double KernelIndex::clock_hz(std::int32_t device_id) const {
  for (const auto& [device, hz] : clocks_) {
    if (device == device_id) return hz;
  }
  return 0;
}

std::size_t KernelIndex::memory_bytes() const {
  return blocks_.capacity() * sizeof(collector::KernelBlockRow) +
         findings_.capacity() * sizeof(collector::KernelFindingRow) + clocks_.capacity() * sizeof(clocks_[0]);
}

}  // namespace npuscope::viewer
