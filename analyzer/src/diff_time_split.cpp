// Note [Overall time split] (diff_time_split.h): one sweep over the ops and copies in start order,
// then each communicator's collectives against the computing union.
#include "diff_time_split.h"

#include <algorithm>
#include <limits>
#include <map>

namespace npuscope::analyzer {
namespace {

constexpr std::int64_t kNoEnd = std::numeric_limits<std::int64_t>::max();

// The length of the union of intervals added in start order (a sweep: overlap counts once); the
// merged intervals kept when asked.
class Union {
 public:
  explicit Union(std::vector<Span>* merged = nullptr) : merged_(merged) {}
  // Adds [start, end); returns what it adds to the union.
  std::int64_t add(std::int64_t start, std::int64_t end) {
    const std::int64_t before = total();
    if (start > end_) {
      if (merged_ != nullptr && end_ > start_) merged_->emplace_back(start_, end_);
      total_ += end_ - start_;
      start_ = start;
      end_ = start;
    }
    end_ = std::max(end_, end);
    return total() - before;
  }
  std::int64_t total() const { return total_ + (end_ - start_); }
  void finish() {
    if (merged_ != nullptr && end_ > start_) merged_->emplace_back(start_, end_);
  }

 private:
  std::vector<Span>* merged_;
  std::int64_t start_ = 0, end_ = 0, total_ = 0;  // the open interval, and what closed before it
};

// Sorted, overlaps merged.
std::vector<Span> merged(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// |U spans| - |U spans n U computing|: the spans' time outside computing (both merged).
std::int64_t outside(const std::vector<Span>& spans, const std::vector<Span>& computing) {
  std::int64_t out = 0;
  for (const Span& s : spans) {
    out += s.second - s.first;
    auto k = std::upper_bound(computing.begin(), computing.end(), s.first,
                              [](std::int64_t t, const Span& c) { return t < c.second; });
    for (; k != computing.end() && k->first < s.second; ++k) {
      out -= std::min(s.second, k->second) - std::max(s.first, k->first);
    }
  }
  return out;
}

struct GroupSpans {
  std::vector<Span> collectives, waits;
  std::int64_t count = 0;
};

}  // namespace

TimeSplit split_time(const SplitInputs& in) {
  TimeSplit t;
  const bool communication = std::any_of(in.ops.begin(), in.ops.end(),
                                         [](const DiffOp& op) { return is(op.task_type, TaskType::kCommunication); });
  std::vector<Span> computing_spans;  // kept only when there is communication to hold against it
  Union computing(communication ? &computing_spans : nullptr), busy, all;
  std::map<std::int32_t, GroupSpans> groups;  // by communicator index; -1: no COMMUNICATION row
  // E2E: the ops' span (msprof's step trace: copies outside the kernels and collectives are not in it).
  std::int64_t first = in.ops.empty() ? 0 : in.ops.front().start_ns, last = first;
  for (const DiffOp& op : in.ops) last = std::max(last, op.start_ns + op.dur_ns);
  if (in.step) {  // the step's span, and the device work it launched that ran past it
    first = in.step->first;
    last = std::max(in.step->second, last);
  }
  std::size_t c = 0;
  const auto copies_until = [&](std::int64_t until) {  // the copies' part in E2E
    for (; c < in.copies.size() && in.copies[c].first <= until; ++c) {
      const std::int64_t s = std::max(first, in.copies[c].first), e = std::min(last, in.copies[c].second);
      if (e <= s) continue;
      all.add(s, e);
      ++t.sdma_count;
    }
  };
  for (const DiffOp& op : in.ops) {
    copies_until(op.start_ns);
    const std::int64_t s = op.start_ns, e = op.start_ns + op.dur_ns;
    all.add(s, e);
    busy.add(s, e);
    if (is(op.task_type, TaskType::kCommunication)) {
      ++t.communication_count;
      const auto it = in.collectives.find(op.task_id);
      GroupSpans& g = groups[it != in.collectives.end() ? it->second.group : -1];
      ++g.count;
      g.collectives.emplace_back(s, e);
      if (it != in.collectives.end()) {
        g.waits.emplace_back(std::max(s, it->second.arrival_ns), std::min(e, it->second.start_ns));
      }
      continue;
    }
    ClassTime& k = t.classes[static_cast<std::size_t>(op.compute_class)];
    k.ns += computing.add(s, e);
    ++k.count;
    ++t.computing_count;
  }
  copies_until(kNoEnd);
  computing.finish();
  t.e2e_ns = last > first ? last - first : 0;
  t.computing_ns = computing.total();
  t.uncovered_communication_ns = busy.total() - t.computing_ns;
  t.free_ns = std::max<std::int64_t>(0, t.e2e_ns - busy.total());
  t.sdma_ns = std::min(t.free_ns, all.total() - busy.total());
  std::int64_t groups_ns = 0;
  for (auto& [index, g] : groups) {
    const bool named = index >= 0 && static_cast<std::size_t>(index) < in.group_names.size();
    GroupTime& out = t.groups.emplace_back();
    out.name = named ? in.group_names[static_cast<std::size_t>(index)] : "";
    out.count = g.count;
    out.uncovered_ns = outside(merged(std::move(g.collectives)), computing_spans);
    out.wait_ns = outside(merged(std::move(g.waits)), computing_spans);
    groups_ns += out.uncovered_ns;
  }
  std::sort(t.groups.begin(), t.groups.end(), [](const GroupTime& a, const GroupTime& b) { return a.name < b.name; });
  t.group_overlap_ns = std::max<std::int64_t>(0, groups_ns - t.uncovered_communication_ns);
  return t;
}

}  // namespace npuscope::analyzer
