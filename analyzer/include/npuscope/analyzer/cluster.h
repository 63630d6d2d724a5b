// `npuscope cluster`: the analysis of a multi-rank job from its rank traces (one per rank), as
// msprof-analyze's cluster analysis: step trace time per rank and step, the slow rank, the
// communication matrix and slow links, the top collectives and each rank's wait time ratio.
//
// Note [Cluster analysis as map and merge]
// The work is split so that it scales out: summarize_rank() (the map) streams one trace and keeps
// only what the merge needs, a RankSummary whose size grows with the steps, collectives and links
// of the rank, never with its tasks; serialize() / deserialize() carry a summary between processes
// (an MPI scale-out gathers them on one process); merge() (the reduce) compares the ranks.
// analyze_cluster() is the one-machine driver: it lists the rank traces of a directory, maps them
// on a pool of threads and merges. Which traces make the job is the rank set's (Note [Rank set] in
// rank_set.h), chosen at the merge; its problems (a trace that cannot be read, a missing or
// duplicated rank) and a collective that the members of its communicator do not all agree on (Note
// [Collective identity]) are reported in the ClusterReport's problems, never fatal: the ranks that
// could be read are analysed.
//
// Note [Which rank is slow]
// Ranks meet at every collective: it starts when the last member has arrived. When one rank
// computes more (a slower device, more data), it arrives last and waits least, and every OTHER
// rank waits for it inside the collective: their Communication (which includes the wait, as in
// msprof) grows by about what the slow rank's Computing grew. A rule that names the rank with the
// most communication would blame every healthy rank. So the slow-rank rule tests each part on its
// own and names the rank that causes the spread, not the ones that suffer it:
// - Computing: the rank with the most (it computes slower);
// - Communication wait: the rank with the LEAST wait (the others wait for it: it arrives last);
// - Communication transit (time moving data, after the last arrival): the rank with the most (a
//   slow link or a slow peer);
// - Free (device idle in the step): the rank with the most (its host launches late).
// A part is slow when (max - min) / mean over ranks > 5 % (msprof-analyze's advisor threshold)
// and max - min is at least 1 % of the mean step time (so that a part of a few microseconds, where
// any jitter is a large ratio, names nobody). And a rank that waits at the collectives longer (by
// that 1 %) than the rank waiting least is not named for its Computing, Transit or Free: what it
// spends more there it would have waited anyway, it does not hold the job back (seen on real
// traces: a healthy rank whose host launched late, while the slow rank was still computing). A rank
// slowed in compute is thus named by Computing and by wait (the same rank, arriving last), and no
// other rank is named.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/rank_set.h"
#include "npuscope/analyzer/report.h"

namespace npuscope::analyzer {

// A summary that cannot be read back (not one, a version this build does not know, cut short).
class SummaryFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One step of one rank: msprof-analyze's step trace time columns (ns), its devices as one, as
// Note [Step time] in step_time.h defines them: Computing the union of its kernels, Communication
// the union of its communication ops (arrival to end: wait included), Overlapped their
// intersection, Free the gaps between its busy spans; start and end its window on the device.
struct StepTimes {
  std::int64_t step = -1;  // MARKER.step; -1: the trace has no step markers, the whole trace is one
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t computing_ns = 0, communication_ns = 0, overlapped_ns = 0, free_ns = 0;

  std::int64_t not_overlapped_ns() const { return communication_ns - overlapped_ns; }
  double overlap_pct() const { return communication_ns > 0 ? 100.0 * overlapped_ns / communication_ns : 0; }
  bool operator==(const StepTimes&) const = default;
};

// A communicator the rank is a member of.
struct CommunicatorInfo {
  std::string name;          // the same on every member
  std::vector<int> members;  // world ranks, in communicator order
  bool operator==(const CommunicatorInfo&) const = default;
};

// One collective (or send / recv) of one rank.
struct CollectiveRecord {
  std::int32_t communicator = 0;  // index into RankSummary::communicators
  std::int32_t sequence = 0;      // its index on the communicator (send/recv: per pair of ranks)
  std::int32_t kind = 0;          // CollectiveKind
  std::int32_t peer = -1;         // root (broadcast) or peer (send, recv): a world rank; -1 none
  std::int64_t bytes = 0;
  std::int64_t arrival_ns = 0, start_ns = 0, end_ns = 0;

  std::int64_t wait_ns() const { return start_ns - arrival_ns; }
  std::int64_t transit_ns() const { return end_ns - start_ns; }
  std::int64_t elapse_ns() const { return end_ns - arrival_ns; }
  bool operator==(const CollectiveRecord&) const = default;
};

// What this rank sent to one peer over one transport in one communicator's collectives, summed.
struct LinkTotal {
  std::int32_t communicator = -1;  // index into RankSummary::communicators; -1: its collective is not recorded
  std::int32_t src = 0, dst = 0;   // world ranks
  std::int32_t transport = 0;      // LinkTransport
  std::int64_t bytes = 0, time_ns = 0;
  std::int64_t transfers = 0;  // COMMUNICATION_LINK rows
  bool operator==(const LinkTotal&) const = default;
};

// A collective whose transfers the trace records (COMMUNICATION_LINK rows under its task), for the
// communication matrix per op (Note [Communication matrix per op]).
struct LinkOp {
  std::string name;                // its TASK name: "hcom_allReduce__586_0_1"
  std::int32_t communicator = -1;  // index into RankSummary::communicators; -1: its collective is not recorded
  std::int64_t start_ns = 0;       // its task's start: the step it belongs to
  bool operator==(const LinkOp&) const = default;
};

// What this rank sent to one peer over one transport in one collective, summed.
struct OpLink {
  std::int32_t op = 0;  // index into RankSummary::link_ops
  std::int32_t dst = 0, transport = 0;
  std::int64_t bytes = 0, time_ns = 0;
  bool operator==(const OpLink&) const = default;
};

// The map step's result: what merge() needs of one rank trace (Note [Cluster analysis as map and
// merge]): its META (only that when it is not a rank's, or not a trace), then its parts.
struct RankSummary : RankFile {
  std::vector<StepTimes> steps;                 // in step order
  std::vector<CommunicatorInfo> communicators;  // by first use
  std::vector<CollectiveRecord> collectives;    // in start order
  std::vector<LinkTotal> links;                 // by (communicator, dst, transport)
  std::vector<LinkOp> link_ops;                 // in start order
  std::vector<OpLink> op_links;                 // by (op, dst, transport)
  bool operator==(const RankSummary&) const = default;
};

// Streams one trace (never holds its tasks). Throws collector::TraceError when it is not a
// readable trace. A trace without a usable META rank gives a summary with rank -1 and nothing else.
RankSummary summarize_rank(const std::filesystem::path& trace);

// summarize_rank() of each file on a pool of `threads` threads (0: min(hardware_concurrency,
// files)), in the order of `files`; a file that cannot be read gives a summary with its `error`
// (merge() reports it as "not a trace"). What one process of a scale-out runs on its share.
std::vector<RankSummary> summarize_ranks(const std::vector<std::filesystem::path>& files, int threads = 0);

// A compact binary form (a magic, a version byte, little-endian fields); deserialize(serialize(s))
// == s. deserialize throws SummaryFormatError for anything else.
std::string serialize(const RankSummary& summary);
RankSummary deserialize(std::string_view bytes);

struct RankStep {
  int rank = 0;
  StepTimes times;
};

// One part of the step time tested across ranks (Note [Which rank is slow]).
struct PartSpread {
  std::string part;  // "Computing", "Communication Wait", "Communication Transit", "Free"
  std::int64_t min_ns = 0, max_ns = 0;
  int min_rank = -1, max_rank = -1;
  double mean_ns = 0;
  double spread_pct = 0;  // (max - min) / mean
  int slow_rank = -1;     // the rank that causes the spread; -1 when the part is not slow
};

struct SlowRank {
  int rank = 0;
  std::vector<std::string> parts;  // the parts that name it
};

struct RankCommunication {
  int rank = 0;
  std::int64_t collectives = 0;
  std::int64_t elapse_ns = 0, transit_ns = 0, wait_ns = 0;
  double wait_ratio() const {
    return wait_ns + transit_ns > 0 ? static_cast<double>(wait_ns) / static_cast<double>(wait_ns + transit_ns) : 0;
  }
};

struct MatrixEntry {
  std::string communicator;  // its name; empty: the collective was not recorded
  int src = 0, dst = 0;
  std::int32_t transport = 0;  // LinkTransport
  std::int64_t bytes = 0, time_ns = 0, transfers = 0;
  double bandwidth_gbps() const { return time_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(time_ns) : 0; }
};

// Note [Communication matrix per op]
// msprof's communication_matrix.json (torch_npu's per-rank export, and msprof-analyze's
// cluster_communication_matrix.json that gathers the ranks'), per step and per op, key "{src}-{dst}"
// -> Transport Type, Transit Size(MB) (10^6 bytes), Transit Time(ms), Bandwidth(GB/s); its entries:
// - "{op}@{group}": one collective's transfers (msprof's own per-op file: hcom_allReduce__586_0_1);
// - per op type and group ("allreduce-top1@{group}", ...): the type by the op's name (send and
//   receive: p2p, the rest collective; allreduce, reduce, allgather, broadcast, ..., the first of
//   msprof's alternatives found earliest in the name, so that msprof's "reduce" stands for a
//   reduce-scatter too), per link its ops sorted by bandwidth (rounded to 4 decimals), fastest
//   first: top1 the fastest, middle the (n/2)-th, bottom1 the slowest, bottom2 and bottom3 the
//   second and third slowest (the slowest there is, with fewer ops), each with the op's own figures
//   and name ("Op Name"); total their sums, its transport the fastest op's;
// - "Total Op Info@{group}" (msprof-analyze's cluster file): every op of the group, summed.
// A collective belongs to the step whose device window holds its start (Note [Step time]); a rank
// sends from its own rank, to world ranks.
struct OpMatrixEntry {
  std::int64_t step = -1;  // -1: the trace has no step markers
  bool p2p = false;        // send / receive, else a collective
  std::string hccl_op;     // "hcom_allReduce__586_0_1", "allreduce-top1", "Total Op Info"
  std::string group;       // the communicator's name; empty: the collective was not recorded
  std::string op;          // the collective whose figures these are (msprof's "Op Name"); empty for sums
  int src = 0, dst = 0;
  std::int32_t transport = 0;  // LinkTransport
  std::int64_t bytes = 0, time_ns = 0;
  double bandwidth_gbps() const { return time_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(time_ns) : 0; }
};

// The spread of link bandwidth over the links of one transport; the slowest link named when > 5 %.
// Links whose mean transfer is a small packet (msprof-analyze's advisor: RDMA < 1 MB, SDMA < 16 MB)
// are latency-bound: their bandwidth says nothing of the link, so they are counted, not judged.
struct LinkSpread {
  std::int32_t transport = 0;
  int links = 0;        // judged
  int small_links = 0;  // not judged
  double min_gbps = 0, max_gbps = 0, mean_gbps = 0, spread_pct = 0;
  int min_src = -1, min_dst = -1, max_src = -1, max_dst = -1;
  bool slow = false;
};

struct TopCollective {
  std::string communicator;
  int sequence = 0;
  std::int32_t kind = 0;
  int src = -1, dst = -1;  // send/recv: the pair; -1 otherwise
  std::int64_t bytes = 0;
  int ranks = 0;
  std::int64_t total_elapse_ns = 0;
  std::int64_t min_elapse_ns = 0, max_elapse_ns = 0, max_wait_ns = 0;
  int min_rank = -1, max_rank = -1, max_wait_rank = -1;
};

struct ClusterOptions {
  int top = 15;                       // top collectives (hccl_sum's HcclTopOpStats: 15)
  double slow_threshold = 0.05;       // (max - min) / mean
  double min_spread_of_step = 0.01;   // max - min >= this share of the mean step time
  double wait_ratio_threshold = 0.2;  // MindStudio Insight's guidance
  std::int64_t small_rdma_bytes = 1 << 20, small_sdma_bytes = 16 << 20;  // small packets (LinkSpread)
  int max_mismatch_rows = 50;  // mismatched collectives listed (all are counted)
  int threads = 0;             // 0: min(hardware_concurrency, traces)
};

struct ClusterReport {
  int world_size = 0;                            // the largest META world_size seen
  std::vector<int> ranks;                        // analysed, ascending
  std::vector<RankStep> step_trace;              // by rank, step
  std::vector<PartSpread> parts;                 // Computing, Communication Wait, Communication Transit, Free
  std::vector<SlowRank> slow_ranks;              // by rank
  std::vector<MatrixEntry> matrix;               // by src, dst, transport
  std::vector<OpMatrixEntry> op_matrix;          // by step, group, entry (Note [Communication matrix per op]), src, dst
  std::vector<LinkSpread> link_spreads;          // by transport
  std::vector<TopCollective> top_collectives;    // by total elapse, most first
  std::vector<RankCommunication> communication;  // by rank
  std::vector<RankSetProblem> problems;          // the rank set's (Note [Rank set]), then the collectives'
  std::int64_t mismatched_collectives = 0;       // all of them (problems lists at most max_mismatch_rows)
};

// The reduce step, over the summaries of every file (in any order): the rank set chosen from them
// (select_ranks: unreadable files, traces without a rank, duplicated and missing ranks reported).
// Without any rank summary the report has no ranks (analyze_cluster throws then; a scale-out
// driver should too).
ClusterReport merge(std::vector<RankSummary> summaries, const ClusterOptions& options = {});

// merge() of the summaries of `files` .db files of `dir` (by this process, or gathered from a
// scale-out's processes); RankSetError naming `dir` and how to make rank traces when none of them
// is a rank's.
ClusterReport merge_directory(const std::filesystem::path& dir, std::size_t files, std::vector<RankSummary> summaries,
                              const ClusterOptions& options = {});

// list_rank_traces, summarize_ranks (options.threads), merge_directory. Throws RankSetError when
// `dir` is not a directory or holds no rank trace at all.
ClusterReport analyze_cluster(const std::filesystem::path& dir, const ClusterOptions& options = {});

// The report as finding tables (finding_table.h), for write_text / to_json / write_csv: tables
// cluster_step_trace_time, cluster_slow_rank, cluster_communication_matrix,
// cluster_communication_matrix_ops, cluster_slow_link,
// cluster_top_collectives, cluster_communication, cluster_problems.
Report cluster_tables(const ClusterReport& report, const ClusterOptions& options = {});

}  // namespace npuscope::analyzer
