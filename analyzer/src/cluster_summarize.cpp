// The map step of the cluster analysis (Note [Cluster analysis as map and merge] in cluster.h):
// one rank trace streamed into a RankSummary.
#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {
namespace {

using collector::TaskRow;
using collector::TraceReader;

std::vector<int> parse_ranks(const std::string& list) {  // "0,2,4"
  std::vector<int> out;
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    int v = 0;
    const auto [end, ec] = std::from_chars(list.data() + at, list.data() + comma, v);
    if (ec == std::errc() && end == list.data() + comma) out.push_back(v);
    at = comma + 1;
  }
  return out;
}

// Disjoint intervals in start order, built from intervals met in start order.
struct IntervalUnion {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  void add(std::int64_t start, std::int64_t end) {
    if (end <= start) return;
    if (!spans.empty() && start <= spans.back().second) {
      spans.back().second = std::max(spans.back().second, end);
    } else {
      spans.emplace_back(start, end);
    }
  }
  std::int64_t total() const {
    std::int64_t t = 0;
    for (const auto& [s, e] : spans) t += e - s;
    return t;
  }
};

std::int64_t intersection(const IntervalUnion& a, const IntervalUnion& b) {
  std::int64_t t = 0;
  std::size_t i = 0, j = 0;
  while (i < a.spans.size() && j < b.spans.size()) {
    const auto lo = std::max(a.spans[i].first, b.spans[j].first);
    const auto hi = std::min(a.spans[i].second, b.spans[j].second);
    if (hi > lo) t += hi - lo;
    (a.spans[i].second < b.spans[j].second ? i : j) += 1;
  }
  return t;
}

struct StepAccumulator {
  StepTimes times;
  IntervalUnion computing, communication;
  bool has_tasks = false;
};

bool is_compute(std::int32_t task_type) {
  return task_type == static_cast<int>(TaskType::kAiCore) || task_type == static_cast<int>(TaskType::kAiVectorCore) ||
         task_type == static_cast<int>(TaskType::kAiCpu);
}

// A step holds the tasks launched (queued) during its marker; its span grows to cover them, as the
// device may still run them after the host closed the step. Without step markers the whole trace is
// one step (-1).
std::vector<StepTimes> step_times(const TraceReader& reader) {
  std::vector<StepAccumulator> steps;
  reader.for_each([&](const collector::MarkerRow& m) {
    if (m.kind != static_cast<int>(MarkerKind::kStep)) return;
    StepAccumulator a;
    a.times.step = m.step;
    a.times.start_ns = m.start_ns;
    a.times.end_ns = m.end_ns;
    a.has_tasks = true;  // the marker's range is the step's span even without tasks
    steps.push_back(std::move(a));
  });
  std::sort(steps.begin(), steps.end(),
            [](const StepAccumulator& a, const StepAccumulator& b) { return a.times.start_ns < b.times.start_ns; });
  const bool whole_trace = steps.empty();
  if (whole_trace) steps.emplace_back();

  reader.for_each([&](const TaskRow& t) {
    const bool compute = is_compute(t.task_type);
    const bool communication = t.task_type == static_cast<int>(TaskType::kCommunication);
    StepAccumulator* a = &steps.front();
    if (!whole_trace) {
      const std::int64_t launched = t.queued_ns != 0 ? t.queued_ns : t.start_ns;
      auto it = std::upper_bound(steps.begin(), steps.end(), launched,
                                 [](std::int64_t v, const StepAccumulator& s) { return v < s.times.start_ns; });
      if (it == steps.begin() || launched > std::prev(it)->times.end_ns) return;  // between steps
      a = &*std::prev(it);
    }
    if (!a->has_tasks) {
      a->times.start_ns = t.start_ns;
      a->times.end_ns = t.end_ns;
      a->has_tasks = true;
    }
    a->times.start_ns = std::min(a->times.start_ns, t.start_ns);
    a->times.end_ns = std::max(a->times.end_ns, t.end_ns);
    if (compute) a->computing.add(t.start_ns, t.end_ns);
    if (communication) a->communication.add(t.start_ns, t.end_ns);
  });

  std::vector<StepTimes> out;
  out.reserve(steps.size());
  for (StepAccumulator& a : steps) {
    if (!a.has_tasks) continue;  // a trace without tasks nor steps
    StepTimes& s = a.times;
    s.computing_ns = a.computing.total();
    s.communication_ns = a.communication.total();
    s.overlapped_ns = intersection(a.computing, a.communication);
    const std::int64_t busy = s.computing_ns + s.communication_ns - s.overlapped_ns;
    s.free_ns = std::max<std::int64_t>(0, s.end_ns - s.start_ns - busy);
    out.push_back(s);
  }
  return out;
}

void read_communication(const TraceReader& reader, RankSummary& s) {
  std::unordered_map<std::int64_t, std::int32_t> index;  // COMMUNICATOR id -> s.communicators
  reader.for_each([&](const collector::CommunicatorRow& c) {
    index[c.communicator_id] = static_cast<std::int32_t>(s.communicators.size());
    s.communicators.push_back({reader.string(c.name_id), parse_ranks(reader.string(c.members_id))});
  });
  reader.for_each([&](const collector::CommunicationRow& c) {
    auto it = index.find(c.communicator_id);
    if (it == index.end()) {  // a row without its communicator: keep it under a name of its own
      it = index.emplace(c.communicator_id, static_cast<std::int32_t>(s.communicators.size())).first;
      s.communicators.push_back({"communicator" + std::to_string(c.communicator_id), {}});
    }
    s.collectives.push_back({.communicator = it->second,
                             .sequence = c.sequence,
                             .kind = c.kind,
                             .peer = c.root_or_peer,
                             .bytes = c.bytes,
                             .arrival_ns = c.arrival_ns,
                             .start_ns = c.start_ns,
                             .end_ns = c.end_ns});
  });
  std::map<std::pair<std::int32_t, std::int32_t>, LinkTotal> links;  // (dst, transport)
  reader.for_each([&](const collector::CommunicationLinkRow& l) {
    LinkTotal& t = links[{l.peer_rank, l.transport}];
    t.src = s.rank;
    t.dst = l.peer_rank;
    t.transport = l.transport;
    t.bytes += l.bytes;
    t.time_ns += l.time_ns;
    ++t.transfers;
  });
  for (const auto& [key, total] : links) s.links.push_back(total);
}

}  // namespace

RankSummary summarize_rank(const std::filesystem::path& trace) {
  // Only the columns the step times need: reading 100k-task traces by the hundred.
  const auto reader = TraceReader::open(
      trace.string(), {.verify = false,
                       .skip_columns = {"TASK.connection_id", "TASK.call_index", "TASK.emulation_ns", "TASK.thread_id",
                                        "TASK.pytorch_api_id", "TASK.overflow", "TASK.device_id", "TASK.stream_id"}});
  RankSummary s{read_rank_file(trace.string(), *reader)};
  if (s.rank < 0) return s;
  s.steps = step_times(*reader);
  read_communication(*reader, s);
  return s;
}

}  // namespace npuscope::analyzer
