// The map step of the cluster analysis (Note [Cluster analysis as map and merge] in cluster.h):
// one rank trace streamed into a RankSummary.
#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "npuscope/analyzer/cluster.h"
#include "npuscope/analyzer/step_time.h"
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

// The rank's step trace time (Note [Step time] in step_time.h): all its devices as one.
std::vector<StepTimes> rank_step_times(const TraceReader& reader) {
  std::vector<StepTimes> out;
  for (const StepTime& t : step_times(reader, {.by_device = false})) {
    out.push_back({.step = t.step.value_or(-1),
                   .start_ns = t.start_ns,
                   .end_ns = t.end_ns,
                   .computing_ns = t.computing_ns,
                   .communication_ns = t.communication_ns,
                   .overlapped_ns = t.overlapped_ns,
                   .free_ns = t.free_ns});
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
      trace.string(),
      {.verify = false,
       .skip_columns = {"TASK.call_index", "TASK.emulation_ns", "TASK.thread_id", "TASK.overflow", "TASK.stream_id"}});
  RankSummary s{read_rank_file(trace.string(), *reader)};
  if (s.rank < 0) return s;
  s.steps = rank_step_times(*reader);
  read_communication(*reader, s);
  return s;
}

}  // namespace npuscope::analyzer
