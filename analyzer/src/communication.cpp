// Communication of one trace: its collectives per communicator and kind (msprof-analyze's
// communication_time per op type), and what its link-level transfers moved per transport (its
// "Communication Bandwidth Info"). `npuscope cluster` matches them across ranks.
#include <map>
#include <tuple>

#include "npuscope/runtime_hooks/vocabulary.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

constexpr Column kCommunicationColumns[] = {
    {"communicator", Unit::kText, "the communicator's name (hccl_world_group, a process group, ...)"},
    {"kind", Unit::kText, "the collective (COMMUNICATION.kind)"},
    {"count", Unit::kCount, "its calls on this trace"},
    {"total_ns", Unit::kNs, "their time, start to end"},
    {"avg_ns", Unit::kNs, "total / count", "", true},
    {"max_ns", Unit::kNs, "the longest"},
    {"bytes", Unit::kBytes, "their payload"},
    {"bandwidth", Unit::kBytesPerS, "bytes / total time (algorithm bandwidth)", "B/s"},
};
constexpr Column kLinkColumns[] = {
    {"transport", Unit::kText, "LOCAL, HCCS, PCIE or RDMA (COMMUNICATION_LINK.transport)"},
    {"transfers", Unit::kCount, "link-level transfers"},
    {"bytes", Unit::kBytes, "what they moved"},
    {"time_ns", Unit::kNs, "their transit time"},
    {"bandwidth", Unit::kBytesPerS, "bytes / transit time", "B/s"},
};

}  // namespace

constexpr TableSpec kCommunicationTable{
    "communication", "Communication",
    "Per communicator and collective kind: calls, time, payload and bandwidth, most time first.",
    kCommunicationColumns};
constexpr TableSpec kCommunicationLinksTable{
    "communication_links", "Communication by transport",
    "What the link-level transfers (COMMUNICATION_LINK) moved per transport, and at what bandwidth.", kLinkColumns};

namespace {

struct Totals {
  std::int64_t count = 0, total_ns = 0, max_ns = 0, bytes = 0;
};

double per_second(std::int64_t bytes, std::int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(ns) : 0;
}

void run_communication(RuleContext& c) {
  const collector::TraceReader& r = c.data.reader;
  std::map<std::int64_t, std::string> communicator_names;
  r.for_each([&](const collector::CommunicatorRow& m) { communicator_names[m.communicator_id] = r.string(m.name_id); });
  std::map<std::pair<std::string, std::int32_t>, Totals> ops;
  r.for_each([&](const collector::CommunicationRow& m) {
    const auto name = communicator_names.find(m.communicator_id);
    Totals& t = ops[{name == communicator_names.end() ? std::string() : name->second, m.kind}];
    const std::int64_t ns = std::max<std::int64_t>(m.end_ns - m.start_ns, 0);
    ++t.count;
    t.total_ns = add_ns(t.total_ns, ns);
    t.max_ns = std::max(t.max_ns, ns);
    t.bytes = add_ns(t.bytes, m.bytes);
  });
  std::vector<std::tuple<std::int64_t, std::string, std::int32_t, Totals>> order;
  for (const auto& [key, t] : ops) order.emplace_back(-t.total_ns, key.first, key.second, t);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [neg, communicator, kind, t] : order) {
    const auto k = enum_from_value<CollectiveKind>(kind);
    c.add(kCommunicationTable,
          {communicator, std::string(k ? enum_name(*k) : "?"), t.count, t.total_ns,
           t.count > 0 ? t.total_ns / t.count : 0, t.max_ns, t.bytes, per_second(t.bytes, t.total_ns)});
  }
  std::map<std::int32_t, Totals> links;
  r.for_each([&](const collector::CommunicationLinkRow& l) {
    Totals& t = links[l.transport];
    ++t.count;
    t.bytes = add_ns(t.bytes, l.bytes);
    t.total_ns = add_ns(t.total_ns, l.time_ns);
  });
  for (const auto& [transport, t] : links) {
    const auto k = enum_from_value<LinkTransport>(transport);
    c.add(kCommunicationLinksTable,
          {std::string(k ? enum_name(*k) : "?"), t.count, t.bytes, t.total_ns, per_second(t.bytes, t.total_ns)});
  }
}

constexpr const TableSpec* kCommunicationTables[] = {&kCommunicationTable, &kCommunicationLinksTable};

}  // namespace

extern const Rule kCommunicationRule{"communication", "collectives per communicator and kind, links per transport",
                                     run_communication, kCommunicationTables};

}  // namespace npuscope::analyzer
