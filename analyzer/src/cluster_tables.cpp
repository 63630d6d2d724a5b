// The cluster report as declared finding tables (Note [Finding tables] in finding_table.h), so that
// the analyzer's renderers write it as text, JSON and CSV. Column names are msprof-analyze's where it
// has one (cluster_step_trace_time.csv, cluster_communication.json, cluster_communication_matrix.json,
// hccl_sum's HcclTopOpStats); its (ms), (MB) and (GB/s) columns are in those units, the others in ns
// and bytes.
#include "cluster_merge.h"
#include "npuscope/analyzer/cluster.h"

namespace npuscope::analyzer {
namespace {

using cluster_detail::kind_name;
using cluster_detail::transport_name;

constexpr Column kSummaryColumns[] = {
    {"World Size", Unit::kCount, "META world_size of the ranks (the largest, if they disagree)."},
    {"Ranks Analysed", Unit::kCount, "Rank traces read."},
    {"Missing Ranks", Unit::kList, "Ranks of the world without a trace."},
    {"Slow Ranks", Unit::kList, "The ranks the slow-rank rule names, with the parts that name them."},
    {"Slow Links", Unit::kList, "Per transport, the slowest link when the links' bandwidth spreads > 5 %."},
    {"High Wait Ranks", Unit::kList, "Ranks whose Wait Time Ratio is above 0.2."},
    {"Mismatched Collectives", Unit::kCount, "Collectives the members of their communicator disagree on."},
};
constexpr TableSpec kSummaryTable{"cluster_summary", "Cluster",       "The job as a whole.",
                                  kSummaryColumns,   Layout::kRecord, Section::kSummary};

constexpr Column kProblemColumns[] = {
    {"Kind", Unit::kText,
     "missing rank, duplicate rank, not a trace, no rank, world size, communicator, mismatched collective."},
    {"Rank", Unit::kId, "The rank concerned."},
    {"File", Unit::kText, "The file concerned."},
    {"Detail", Unit::kText, "What is wrong and what was done about it."},
};
constexpr TableSpec kProblemTable{
    "cluster_problems",
    "Missing and mismatched ranks",
    "Inputs that could not be used as they are; the rest of the job is analysed without them.",
    kProblemColumns,
    Layout::kRows,
    Section::kAlert};

constexpr Column kStepColumns[] = {
    {"Step", Unit::kId, "MARKER.step; empty: the trace has no step markers and is one step."},
    {"Type", Unit::kText, "rank (msprof-analyze also has stage rows)."},
    {"Index", Unit::kId, "The rank."},
    {"Computing", Unit::kNs, "Union of the compute tasks' time (AI_CORE, AI_VECTOR_CORE, AI_CPU), ns."},
    {"Communication(Not Overlapped)", Unit::kNs, "Communication - Overlapped, ns."},
    {"Overlapped", Unit::kNs, "Time computing and communicating at once, ns."},
    {"Communication", Unit::kNs, "Union of the HCCL tasks' time, wait included, ns."},
    {"Free", Unit::kNs, "The step's span less computing and communication, ns."},
    {"Overlap(%)", Unit::kPercent, "Overlapped / Communication."},
};
constexpr TableSpec kStepTable{"cluster_step_trace_time",
                               "Step trace time",
                               "Per rank and step, msprof-analyze's step trace columns.",
                               kStepColumns,
                               Layout::kRows,
                               Section::kDetail,
                               {},
                               {},
                               24};

constexpr Column kRankTimeColumns[] = {
    {"Index", Unit::kId, "The rank."},
    {"Steps", Unit::kCount, "Its steps."},
    {"Computing", Unit::kNs, "Mean per step, ns."},
    {"Communication(Not Overlapped)", Unit::kNs, "Mean per step, ns."},
    {"Overlapped", Unit::kNs, "Mean per step, ns."},
    {"Communication", Unit::kNs, "Mean per step, ns."},
    {"Free", Unit::kNs, "Mean per step, ns."},
    {"Overlap(%)", Unit::kPercent, "Overlapped / Communication over all its steps."},
};
constexpr TableSpec kRankTimeTable{"cluster_rank_step_time",
                                   "Step time per rank",
                                   "Per rank, the step trace columns' mean over its steps.",
                                   kRankTimeColumns,
                                   Layout::kRows,
                                   Section::kDetail,
                                   {},
                                   {},
                                   64};

constexpr Column kSlowColumns[] = {
    {"Part", Unit::kText, "Computing, Communication Wait, Communication Transit or Free, summed over the steps."},
    {"Min", Unit::kNs, "The least of a rank, ns."},
    {"Min Rank", Unit::kId, "Its rank."},
    {"Max", Unit::kNs, "The most of a rank, ns."},
    {"Max Rank", Unit::kId, "Its rank."},
    {"Mean", Unit::kNs, "Over the ranks, ns."},
    {"Spread(%)", Unit::kPercent, "(Max - Min) / Mean; slow above 5 %."},
    {"Slow Rank", Unit::kId, "The rank causing the spread: the most, but the least for Communication Wait."},
};
constexpr TableSpec kSlowTable{
    "cluster_slow_rank",
    "Slow rank",
    "Each part of the ranks' step time, its spread and the rank that causes it.",
    kSlowColumns,
    Layout::kRows,
    Section::kDetail,
    "ranks meet at each collective, so the ranks waiting longest are not the slow ones: they wait for the rank that "
    "arrives last, which waits least. Look at what the Slow Rank does more of (Computing, Free) on that rank."};

// The link columns of both matrices (msprof's keys and figures; exact bytes and ns in the details).
constexpr Column kSrcDst{"Src-Dst", Unit::kText, "Sender and receiver world ranks, as msprof-analyze's matrix keys."};
constexpr Column kLinkFigures[] = {
    {"Src Rank", Unit::kId, "The sender.", {}, true},
    {"Dst Rank", Unit::kId, "The receiver.", {}, true},
    {"Transport Type", Unit::kText, "LOCAL, HCCS, PCIE or RDMA."},
    {"Transit Size(MB)", Unit::kNumber, "Bytes sent / 10^6 (msprof's MB)."},
    {"Transit Time(ms)", Unit::kNumber, "Time sending."},
    {"Bandwidth(GB/s)", Unit::kNumber, "Transit Size / Transit Time, in 10^9 bytes per second."},
};
constexpr Column kBytes{"Transit Bytes", Unit::kBytes, "Bytes sent, exactly.", {}, true};
constexpr Column kTimeNs{"Transit Time(ns)", Unit::kNs, "Time sending, exactly.", {}, true};

constexpr Column kMatrixLead[] = {
    kSrcDst,
    {"Communicator", Unit::kText, "The communicator of the collectives (hccl_world_group, a process group)."},
};
constexpr Column kMatrixTail[] = {
    kBytes,
    kTimeNs,
    {"Transfers", Unit::kCount, "Sends over the link (COMMUNICATION_LINK rows).", {}, true},
};
constexpr auto kMatrixColumns = join_columns(kMatrixLead, kLinkFigures, kMatrixTail);
constexpr TableSpec kMatrixTable{"cluster_communication_matrix",
                                 "Communication matrix",
                                 "What each rank sent to each peer, per communicator and transport.",
                                 kMatrixColumns,
                                 Layout::kRows,
                                 Section::kDetail,
                                 {},
                                 {},
                                 64};

constexpr Column kOpMatrixLead[] = {
    {"Step", Unit::kId, "The step (MARKER.step) whose device window holds the collective; empty: none."},
    {"Type", Unit::kText, "collective, or p2p (send, receive)."},
    {"HCCL Op Name", Unit::kText,
     "The entry, msprof's key before its @: the op (hcom_allReduce__586_0_1), its type's top1, middle, bottom1, "
     "bottom2, bottom3 or total (allreduce-top1, ...), or the group's Total Op Info."},
    {"Group", Unit::kText, "The communicator, msprof's key after its @."},
    kSrcDst,
};
constexpr Column kOpMatrixTail[] = {
    {"Op Name", Unit::kText,
     "The op whose figures these are: the op itself, or the one a top1 ... bottom3 entry picked; empty for sums."},
    kBytes,
    kTimeNs,
};
constexpr auto kOpMatrixColumns = join_columns(kOpMatrixLead, kLinkFigures, kOpMatrixTail);
constexpr TableSpec kOpMatrixTable{
    "cluster_communication_matrix_ops",
    "Communication matrix per op",
    "msprof's communication_matrix.json and msprof-analyze's cluster_communication_matrix.json, a row per entry "
    "and link: per step and group, each op's transfers, per op type and link the fastest (top1), median (middle) "
    "and three slowest (bottom1-3) op by bandwidth and their total, and the group's Total Op Info (Note "
    "[Communication matrix per op] in cluster.h).",
    kOpMatrixColumns,
    Layout::kRows,
    Section::kDetail,
    {},
    {},
    64};

constexpr Column kLinkColumns[] = {
    {"Transport Type", Unit::kText, "LOCAL, HCCS, PCIE or RDMA."},
    {"Links", Unit::kCount, "Sender-receiver pairs judged (a rank to itself left out)."},
    {"Small Links", Unit::kCount,
     "Pairs whose mean transfer is a small packet (RDMA < 1 MB, SDMA < 16 MB): latency-bound, not judged."},
    {"Min Bandwidth(GB/s)", Unit::kNumber, "The slowest link's bandwidth.", "Min GB/s"},
    {"Min Link", Unit::kText, "The slowest link, Src-Dst."},
    {"Max Bandwidth(GB/s)", Unit::kNumber, "The fastest link's bandwidth.", "Max GB/s"},
    {"Max Link", Unit::kText, "The fastest link, Src-Dst."},
    {"Mean Bandwidth(GB/s)", Unit::kNumber, "Over the links.", "Mean GB/s"},
    {"Spread(%)", Unit::kPercent, "(Max - Min) / Mean."},
    {"Slow", Unit::kFlag, "Spread above 5 %: the Min Link is slow."},
};
constexpr TableSpec kLinkTable{"cluster_slow_link", "Slow links", "Per transport, the spread of link bandwidth.",
                               kLinkColumns};

constexpr Column kTopColumns[] = {
    {"OpName", Unit::kText, "Communicator #sequence (send/recv: and the pair)."},
    {"Kind", Unit::kText, "allreduce, allgather, ..., send/recv (a send and its recv)."},
    {"Size", Unit::kBytes, "Bytes of the collective (as the first rank recorded it)."},
    {"Count", Unit::kCount, "Ranks that recorded it."},
    {"TotalDuration", Unit::kNs, "Elapse (arrival to end) summed over the ranks, ns.", "Total"},
    {"MaxDuration", Unit::kNs, "The longest elapse of a rank, ns.", "Max"},
    {"MaxRank", Unit::kId, "Its rank.", "Max Rank"},
    {"MinDuration", Unit::kNs, "The shortest elapse of a rank (the last to arrive), ns.", "Min"},
    {"MinRank", Unit::kId, "Its rank.", "Min Rank"},
    {"MaxWait", Unit::kNs, "The longest wait of a rank, ns.", {}, true},
    {"MaxWaitRank", Unit::kId, "Its rank (one waiting for the others, not a slow one).", {}, true},
};
constexpr TableSpec kTopTable{"cluster_top_collectives", "Top collectives",
                              "The collectives with the most elapse over the ranks (hccl_sum's HcclTopOpStats).",
                              kTopColumns};

constexpr Column kCommColumns[] = {
    {"Rank", Unit::kId, "The rank."},
    {"Count", Unit::kCount, "Its collectives and send/recv."},
    {"Elapse Time(ms)", Unit::kNumber, "Arrival to end, summed."},
    {"Transit Time(ms)", Unit::kNumber, "Start (the last member's arrival) to end, summed."},
    {"Wait Time(ms)", Unit::kNumber, "Arrival to start, summed."},
    {"Wait Time Ratio", Unit::kRatio, "Wait / (Wait + Transit)."},
    {"High Wait", Unit::kFlag, "Wait Time Ratio above 0.2 (MindStudio Insight's guidance)."},
};
constexpr TableSpec kCommTable{
    "cluster_communication",
    "Communication time per rank",
    "Each rank's time in collectives, wait and transit.",
    kCommColumns,
    Layout::kRows,
    Section::kDetail,
    "a high Wait Time Ratio means the rank waits for others at collectives: look at the slow rank, not at this one."};

Value rank_or_null(int rank) { return rank >= 0 ? Value(std::int64_t{rank}) : Value(); }
double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
double mb(std::int64_t bytes) { return static_cast<double>(bytes) / 1e6; }
std::string link(int src, int dst) { return std::to_string(src) + "-" + std::to_string(dst); }

Row summary_row(const ClusterReport& r, const ClusterOptions& o) {
  std::vector<std::string> missing, slow, links, waits;
  for (const RankSetProblem& p : r.problems) {
    if (p.kind == "missing rank") missing.push_back(std::to_string(p.rank));
  }
  for (const SlowRank& s : r.slow_ranks) {
    std::string parts;
    for (const std::string& p : s.parts) parts += (parts.empty() ? "" : ", ") + p;
    slow.push_back(std::to_string(s.rank) + " (" + parts + ")");
  }
  for (const LinkSpread& l : r.link_spreads) {
    if (l.slow) links.push_back(transport_name(l.transport) + " " + link(l.min_src, l.min_dst));
  }
  for (const RankCommunication& c : r.communication) {
    if (c.wait_ratio() > o.wait_ratio_threshold) waits.push_back(std::to_string(c.rank));
  }
  return {std::int64_t{r.world_size}, static_cast<std::int64_t>(r.ranks.size()), missing, slow, links, waits,
          r.mismatched_collectives};
}

}  // namespace

Report cluster_tables(const ClusterReport& r, const ClusterOptions& o) {
  Report report;
  report.rules = {"cluster"};
  report.tables.reserve(11);  // each table is filled through a reference before the next is added
  const auto table = [&](const TableSpec& spec) -> Table& { return report.tables.emplace_back(Table{&spec, {}}); };
  table(kSummaryTable).add(summary_row(r, o));
  Table& problems = table(kProblemTable);
  for (const RankSetProblem& p : r.problems) problems.add({p.kind, rank_or_null(p.rank), p.file, p.detail});
  if (r.mismatched_collectives > o.max_mismatch_rows) {
    report.notes.push_back(std::to_string(r.mismatched_collectives) + " mismatched collectives, the first " +
                           std::to_string(o.max_mismatch_rows) + " listed");
  }
  Table& per_rank = table(kRankTimeTable);
  for (std::size_t i = 0; i < r.step_trace.size();) {
    const int rank = r.step_trace[i].rank;
    StepTimes sum;
    std::int64_t n = 0;
    for (; i < r.step_trace.size() && r.step_trace[i].rank == rank; ++i, ++n) {
      const StepTimes& t = r.step_trace[i].times;
      sum.computing_ns += t.computing_ns;
      sum.communication_ns += t.communication_ns;
      sum.overlapped_ns += t.overlapped_ns;
      sum.free_ns += t.free_ns;
    }
    per_rank.add({std::int64_t{rank}, n, sum.computing_ns / n, sum.not_overlapped_ns() / n, sum.overlapped_ns / n,
                  sum.communication_ns / n, sum.free_ns / n, sum.overlap_pct()});
  }
  Table& steps = table(kStepTable);
  for (const RankStep& s : r.step_trace) {
    const StepTimes& t = s.times;
    steps.add({t.step >= 0 ? Value(t.step) : Value(), std::string("rank"), std::int64_t{s.rank}, t.computing_ns,
               t.not_overlapped_ns(), t.overlapped_ns, t.communication_ns, t.free_ns, t.overlap_pct()});
  }
  Table& slow = table(kSlowTable);
  for (const PartSpread& p : r.parts) {
    slow.add({p.part, p.min_ns, rank_or_null(p.min_rank), p.max_ns, rank_or_null(p.max_rank),
              static_cast<std::int64_t>(p.mean_ns + 0.5), p.spread_pct, rank_or_null(p.slow_rank)});
  }
  Table& matrix = table(kMatrixTable);
  for (const MatrixEntry& e : r.matrix) {
    matrix.add({link(e.src, e.dst), e.communicator, std::int64_t{e.src}, std::int64_t{e.dst},
                transport_name(e.transport), mb(e.bytes), ms(e.time_ns), e.bandwidth_gbps(), e.bytes, e.time_ns,
                e.transfers});
  }
  Table& ops = table(kOpMatrixTable);
  for (const OpMatrixEntry& e : r.op_matrix) {
    ops.add({e.step >= 0 ? Value(e.step) : Value(), std::string(e.p2p ? "p2p" : "collective"), e.hccl_op, e.group,
             link(e.src, e.dst), std::int64_t{e.src}, std::int64_t{e.dst}, transport_name(e.transport), mb(e.bytes),
             ms(e.time_ns), e.bandwidth_gbps(), e.op, e.bytes, e.time_ns});
  }
  Table& links = table(kLinkTable);
  for (const LinkSpread& l : r.link_spreads) {
    if (l.links == 0) {
      links.add({transport_name(l.transport), std::int64_t{0}, std::int64_t{l.small_links}, Value(), std::string(),
                 Value(), std::string(), Value(), Value(), false});
      continue;
    }
    links.add({transport_name(l.transport), std::int64_t{l.links}, std::int64_t{l.small_links}, l.min_gbps,
               link(l.min_src, l.min_dst), l.max_gbps, link(l.max_src, l.max_dst), l.mean_gbps, l.spread_pct, l.slow});
  }
  Table& top = table(kTopTable);
  for (const TopCollective& c : r.top_collectives) {
    std::string name = c.communicator + " #" + std::to_string(c.sequence);
    if (c.src >= 0 || c.dst >= 0) name += " (" + link(c.src, c.dst) + ")";
    const bool pair = c.src >= 0 || c.dst >= 0;  // a send and its recv, one row
    top.add({name, pair ? std::string("send/recv") : kind_name(c.kind), c.bytes, std::int64_t{c.ranks},
             c.total_elapse_ns, c.max_elapse_ns, rank_or_null(c.max_rank), c.min_elapse_ns, rank_or_null(c.min_rank),
             std::max<std::int64_t>(0, c.max_wait_ns), rank_or_null(c.max_wait_rank)});
  }
  Table& comm = table(kCommTable);
  for (const RankCommunication& c : r.communication) {
    comm.add({std::int64_t{c.rank}, c.collectives, ms(c.elapse_ns), ms(c.transit_ns), ms(c.wait_ns), c.wait_ratio(),
              c.wait_ratio() > o.wait_ratio_threshold});
  }
  return report;
}

}  // namespace npuscope::analyzer
