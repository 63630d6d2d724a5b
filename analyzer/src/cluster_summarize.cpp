// The map step of the cluster analysis (Note [Cluster analysis as map and merge] in cluster.h):
// one rank trace streamed into a RankSummary.
#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>
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

// The collectives of the link rows: their names and starts (their TASK rows), in start order. A
// name that recurs (an emulated trace names each all-reduce after its communicator) is told apart
// by "#" and its occurrence, so that each collective is an entry of its own, as an Ascend profile
// names them (hcom_allReduce__586_0_1, ..._1_1, ...).
// Note [Collective names]: TASK has no index by task id, so the names come from one scan of the
// tasks, by a reader of its own that reads no other TASK column than task_id and start_ns (the
// kernel's name is in memory): +20 ms on a rank of 100k tasks and 1000 collectives, where a query
// per collective took 8 s.
void read_link_ops(const TraceReader& reader, const std::unordered_map<std::int64_t, std::int32_t>& communicator_of,
                   const std::map<std::int64_t, std::map<std::pair<std::int32_t, std::int32_t>, OpLink>>& by_op,
                   RankSummary& s) {
  if (by_op.empty()) return;
  std::vector<std::pair<LinkOp, std::int64_t>> ops;     // and its task id
  std::unordered_map<std::int64_t, std::size_t> index;  // task id -> ops
  for (const auto& [task, links] : by_op) {
    const auto c = communicator_of.find(task);
    index[task] = ops.size();
    ops.emplace_back(LinkOp{.communicator = c == communicator_of.end() ? -1 : c->second}, task);
  }
  const auto tasks = TraceReader::open(
      reader.path(), {.verify = false,
                      .skip_columns = {"TASK.end_ns", "TASK.queued_ns", "TASK.device_id", "TASK.stream_id",
                                       "TASK.connection_id", "TASK.overflow", "TASK.call_index", "TASK.emulation_ns",
                                       "TASK.thread_id", "TASK.pytorch_api_id", "TASK.underflow", "TASK.subnormal"}});
  tasks->for_each([&](const TaskRow& t) {
    const auto it = index.find(t.task_id);
    if (it == index.end()) return;
    LinkOp& op = ops[it->second].first;
    op.name = tasks->string(t.name_id);
    op.start_ns = t.start_ns;
  });
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.first.start_ns < b.first.start_ns; });
  std::unordered_map<std::string, std::int64_t> uses, seen;
  for (const auto& [op, task] : ops) ++uses[op.name];
  for (auto& [op, task] : ops) {
    if (uses[op.name] > 1) {
      const std::string n = std::to_string(seen[op.name]++);
      op.name.push_back('#');
      op.name.append(n);
    }
    for (const auto& [key, link] : by_op.at(task)) {  // not std::views::values: clang's fuzz build rejects it
      OpLink l = link;
      l.op = static_cast<std::int32_t>(s.link_ops.size());
      s.op_links.push_back(l);
    }
    s.link_ops.push_back(std::move(op));
  }
}

void read_communication(const TraceReader& reader, RankSummary& s) {
  std::unordered_map<std::int64_t, std::int32_t> index;  // COMMUNICATOR id -> s.communicators
  reader.for_each([&](const collector::CommunicatorRow& c) {
    index[c.communicator_id] = static_cast<std::int32_t>(s.communicators.size());
    s.communicators.push_back({reader.string(c.name_id), parse_ranks(reader.string(c.members_id))});
  });
  std::unordered_map<std::int64_t, std::int32_t> communicator_of;  // a collective's task id -> s.communicators
  reader.for_each([&](const collector::CommunicationRow& c) {
    auto it = index.find(c.communicator_id);
    if (it == index.end()) {  // a row without its communicator: keep it under a name of its own
      it = index.emplace(c.communicator_id, static_cast<std::int32_t>(s.communicators.size())).first;
      s.communicators.push_back({"communicator" + std::to_string(c.communicator_id), {}});
    }
    communicator_of[c.task_id] = it->second;
    s.collectives.push_back({.communicator = it->second,
                             .sequence = c.sequence,
                             .kind = c.kind,
                             .peer = c.root_or_peer,
                             .bytes = c.bytes,
                             .arrival_ns = c.arrival_ns,
                             .start_ns = c.start_ns,
                             .end_ns = c.end_ns});
  });
  // The communication matrix per communicator: a link row's task is its collective's
  // (COMMUNICATION_LINK.task_id), an importer's link-level tasks (HCCL_TASK) summed under it; and
  // per collective (Note [Communication matrix per op]).
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t>, LinkTotal> links;  // (communicator, dst, transport)
  std::map<std::int64_t, std::map<std::pair<std::int32_t, std::int32_t>, OpLink>> by_op;  // task -> (dst, transport)
  reader.for_each([&](const collector::CommunicationLinkRow& l) {
    const auto c = communicator_of.find(l.task_id);
    const std::int32_t communicator = c == communicator_of.end() ? -1 : c->second;
    LinkTotal& t = links[{communicator, l.peer_rank, l.transport}];
    t.communicator = communicator;
    t.src = s.rank;
    t.dst = l.peer_rank;
    t.transport = l.transport;
    t.bytes += l.bytes;
    t.time_ns += l.time_ns;
    ++t.transfers;
    OpLink& o = by_op[l.task_id][{l.peer_rank, l.transport}];
    o.dst = l.peer_rank;
    o.transport = l.transport;
    o.bytes += l.bytes;
    o.time_ns += l.time_ns;
  });
  for (const auto& [key, total] : links) s.links.push_back(total);
  read_link_ops(reader, communicator_of, by_op, s);
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
