// Writes the synthetic traces of a data-parallel job, one per rank, through the real TraceWriter,
// for the `npuscope cluster` bench (bench/cluster_bench.py):
//
//   write_rank_traces DIR RANKS TASKS_PER_RANK [SLOW_RANK]
//
// Each rank runs STEPS = TASKS / 1000 steps; a step is 990 compute tasks (a MatMul and vector ops on
// two streams) and 10 AllReduces of 4 MiB on the world communicator (8 ranks per server: ring over
// HCCS inside, RDMA across), with step markers. The ranks' clocks agree as the emulator's do: every
// AllReduce starts when the last rank arrives and ends at the same time on all. SLOW_RANK (default
// 7; -1 none) computes 1.2x slower, so the report has a straggler to name.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/collector/trace_rows.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "synthetic_trace.h"

namespace {

using namespace npuscope;
using collector::StringId;

constexpr int kRanksPerNode = 8;
constexpr int kTasksPerStep = 1000;
constexpr int kCollectivesPerStep = 10;
constexpr std::int64_t kCollectiveBytes = 4 << 20;

// The compute time of task `i` of a step (the same for every rank but the slow one).
std::int64_t compute_ns(int i, double factor) {
  return static_cast<std::int64_t>((i % 10 == 0 ? 7'000 : 1'500 + (i % 37) * 40) * factor);
}

struct Timeline {
  // Per step: the arrival of each rank at each collective, decided for all ranks together.
  std::vector<std::int64_t> step_start;            // [step]
  std::vector<std::vector<std::int64_t>> arrival;  // [rank][step * kCollectivesPerStep + c]
  std::vector<std::int64_t> start, end;            // [step * kCollectivesPerStep + c]
  std::vector<int> last_rank;                      // idem
};

// Every rank computes a segment, arrives at the collective; it starts at the last arrival and takes
// a ring AllReduce's time; the next segment starts at its end on every rank.
Timeline plan(int ranks, int steps, int slow_rank) {
  Timeline t;
  t.arrival.assign(static_cast<std::size_t>(ranks), {});
  const int segment = (kTasksPerStep - kCollectivesPerStep) / kCollectivesPerStep;
  const std::int64_t transfer_ns = 2 * (ranks - 1) * 2'000 + 2 * kCollectiveBytes * (ranks - 1) / ranks / 25;
  std::int64_t now = 1'000'000'000;
  for (int s = 0; s < steps; ++s) {
    t.step_start.push_back(now);
    for (int c = 0; c < kCollectivesPerStep; ++c) {
      std::int64_t latest = 0;
      int last = 0;
      for (int r = 0; r < ranks; ++r) {
        std::int64_t busy = 0;
        for (int i = 0; i < segment; ++i) busy += compute_ns(c * segment + i, r == slow_rank ? 1.2 : 1.0) + 300;
        const std::int64_t arrival = now + busy;
        t.arrival[static_cast<std::size_t>(r)].push_back(arrival);
        if (arrival > latest) {
          latest = arrival;
          last = r;
        }
      }
      t.start.push_back(latest);
      t.end.push_back(latest + transfer_ns);
      t.last_rank.push_back(last);
      now = latest + transfer_ns;
    }
  }
  t.step_start.push_back(now);
  return t;
}

void write_rank(const std::string& path, int rank, int ranks, int steps, int slow_rank, const Timeline& t) {
  auto w = collector::TraceWriter::create(path, {.overwrite = true, .durable = false});
  w->set_meta(collector::kMetaRank, std::to_string(rank));
  w->set_meta(collector::kMetaWorldSize, std::to_string(ranks));
  w->set_meta(collector::kMetaNode, std::to_string(rank / kRanksPerNode));
  w->set_meta(collector::kMetaLocalRank, std::to_string(rank % kRanksPerNode));
  w->set_meta(collector::kMetaHostname, "bench");
  w->set_meta(collector::kMetaLauncher, "mpirun");
  bench::add_device(*w);

  std::vector<StringId> ops;
  for (int o = 0; o < 40; ++o) ops.push_back(w->intern(o == 0 ? "MatMul" : "Op" + std::to_string(o)));
  const StringId allreduce = w->intern("hcom_allReduce__hccl_world_group"), allreduce_type = w->intern("HcomAllReduce"),
                 step_name = w->intern("step");
  std::string members, nodes;
  for (int r = 0; r < ranks; ++r) {
    members += (r ? "," : "") + std::to_string(r);
    nodes += (r ? "," : "") + std::to_string(r / kRanksPerNode);
  }
  const collector::CommunicatorRow comm{
      1, w->intern("hccl_world_group"), rank, ranks, w->intern(members), w->intern(nodes)};
  w->add(std::span(&comm, 1));

  const int segment = (kTasksPerStep - kCollectivesPerStep) / kCollectivesPerStep;
  const int next = (rank + 1) % ranks;
  const auto transport = static_cast<std::int32_t>(next / kRanksPerNode == rank / kRanksPerNode ? LinkTransport::kHccs
                                                                                                : LinkTransport::kRdma);
  std::vector<collector::TaskRow> tasks;
  std::vector<collector::CommunicationRow> comms;
  std::vector<collector::CommunicationLinkRow> links;
  std::vector<collector::MarkerRow> markers;
  std::int64_t task_id = 0;
  const auto& arrival = t.arrival[static_cast<std::size_t>(rank)];
  for (int s = 0; s < steps; ++s) {
    tasks.clear();
    comms.clear();
    links.clear();
    std::int64_t now = t.step_start[static_cast<std::size_t>(s)];
    for (int c = 0; c < kCollectivesPerStep; ++c) {
      const auto k = static_cast<std::size_t>(s * kCollectivesPerStep + c);
      for (int i = 0; i < segment; ++i) {
        const int op = (c * segment + i) % 40;
        collector::TaskRow task;
        task.task_id = ++task_id;
        task.queued_ns = now - 5'000;
        task.start_ns = now;
        task.end_ns = now + compute_ns(c * segment + i, rank == slow_rank ? 1.2 : 1.0);
        now = task.end_ns + 300;
        task.stream_id = i % 2;
        task.name_id = task.op_type_id = ops[static_cast<std::size_t>(op)];
        task.task_type = static_cast<std::int32_t>(op == 0 ? TaskType::kAiCore : TaskType::kAiVectorCore);
        task.connection_id = task.task_id;
        task.block_dim = 8;
        task.call_index = s;
        tasks.push_back(task);
      }
      collector::TaskRow hccl;
      hccl.task_id = ++task_id;
      hccl.queued_ns = arrival[k] - 5'000;
      hccl.start_ns = arrival[k];
      hccl.end_ns = t.end[k];
      hccl.name_id = allreduce;
      hccl.op_type_id = allreduce_type;
      hccl.task_type = static_cast<std::int32_t>(TaskType::kCommunication);
      hccl.connection_id = hccl.task_id;
      hccl.bytes = kCollectiveBytes;
      hccl.call_index = static_cast<std::int32_t>(k);
      tasks.push_back(hccl);
      comms.push_back({hccl.task_id, 1, static_cast<std::int32_t>(k),
                       static_cast<std::int32_t>(CollectiveKind::kAllReduce),
                       static_cast<std::int32_t>(CollectiveAlgorithm::kRing), static_cast<std::int32_t>(ReduceOp::kSum),
                       1, kCollectiveBytes, -1, t.last_rank[k], arrival[k], t.start[k], t.end[k]});
      if (ranks > 1) {
        links.push_back(
            {hccl.task_id, next, transport, 2 * kCollectiveBytes * (ranks - 1) / ranks, t.end[k] - t.start[k]});
      }
      now = t.end[k];
    }
    markers.push_back({t.step_start[static_cast<std::size_t>(s)], t.step_start[static_cast<std::size_t>(s) + 1],
                       step_name, 0, static_cast<std::int32_t>(MarkerKind::kStep), s});
    w->add(tasks);
    w->add(comms);
    w->add(links);
  }
  w->add(markers);
  w->finalize();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: write_rank_traces DIR RANKS TASKS_PER_RANK [SLOW_RANK]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int ranks = std::atoi(argv[2]);
  const long tasks = std::atol(argv[3]);
  const int slow_rank = argc > 4 ? std::atoi(argv[4]) : 7;
  const int steps = static_cast<int>(std::max(1L, tasks / kTasksPerStep));
  if (ranks < 1) {
    std::fprintf(stderr, "write_rank_traces: RANKS must be positive\n");
    return 2;
  }
  std::filesystem::create_directories(dir);
  const Timeline t = plan(ranks, steps, slow_rank);
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned wkr = 0; wkr < workers; ++wkr) {
    pool.emplace_back([&, wkr] {
      for (int r = static_cast<int>(wkr); r < ranks; r += static_cast<int>(workers))
        write_rank((dir / ("rank_" + std::to_string(r) + ".db")).string(), r, ranks, steps, slow_rank, t);
    });
  }
  for (auto& th : pool) th.join();
  std::printf("wrote %d rank traces of %d steps (%d tasks each) to %s\n", ranks, steps, steps * kTasksPerStep,
              dir.c_str());
  return 0;
}
