// A directory of rank traces as a multi-rank job writes them (one per rank: META rank / world_size /
// node, TASK, COMMUNICATOR, COMMUNICATION, COMMUNICATION_LINK), from a real run of the emulator's
// collectives: the ranks are threads of this process (local_transport_group), each on its own
// device, and what they record (collective_recorder.h) is written through the collector's writer,
// one trace per rank. The hooks have one listener per process, so one profiling session per rank is
// not possible here; the rows are those a rank's session writes. Task and communicator ids are
// renumbered per rank (as separate processes number them), so matching a collective across ranks
// cannot lean on them. The cluster analysis and the multi-rank viewer tests read them.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "emulator/collective_recorder.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"

namespace npuscope::testing {

struct EmulatedJob {
  int ranks = 4;
  int ranks_per_node = 2;
  int steps = 2;  // each: matmuls, an all_reduce, then (with all_gather) an add and an all_gather
  bool all_gather = true;
  int matmuls = 1;  // per rank and step, each on the last one's result
  // The slow rank runs `slow_matmuls` and a virtual `slow_host_ns` of host work before each
  // all_reduce, so the others wait for it: a second is far more than the jitter of the ranks' host
  // clocks, which follow the threads' real time.
  int slow_rank = 2;
  int slow_matmuls = 7;
  std::uint64_t slow_host_ns = 1'000'000'000;
  std::string spec = "ascend910b";  // the devices' preset or spec file
};

// Writes DIR/rank_<r>.db for every rank of `job`.
inline void write_emulated_rank_traces(const std::string& dir, const EmulatedJob& job) {
  using namespace npuscope::emulator;
  Runtime::configure({.spec = job.spec, .num_devices = job.ranks});
  CollectiveRecorder rec(/*with_tasks=*/true);
  rec.recording = false;
  {
    auto transports = local_transport_group(job.ranks);
    std::vector<int> world(static_cast<std::size_t>(job.ranks));
    std::iota(world.begin(), world.end(), 0);
    // The first use of a device and its kernels (one-time host work) comes before the recording.
    std::barrier warmed_up(job.ranks, [&]() noexcept { rec.recording = true; });
    std::vector<std::jthread> threads;
    for (int r = 0; r < job.ranks; ++r) {
      threads.emplace_back([&, r] {
        std::vector<float> v(64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i)
          v[i] = 0.001f * static_cast<float>((i + static_cast<std::size_t>(r)) % 97);
        const Tensor x = Tensor::from_floats(v, {64, 64}, DType::kF32, DeviceRef::npu(r));
        ops::matmul(x, x).to_floats();
        warmed_up.arrive_and_wait();
        Communicator comm(transports[static_cast<std::size_t>(r)],
                          {"hccl_world_group", world, CommTopology::uniform(job.ranks, job.ranks_per_node)});
        const Stream s = Runtime::get().device(r).default_stream();
        for (int step = 0; step < job.steps; ++step) {
          Tensor y = x;
          for (int k = 0; k < (r == job.slow_rank ? job.slow_matmuls : job.matmuls); ++k) y = ops::matmul(y, x);
          if (r == job.slow_rank) vclock::advance_by(job.slow_host_ns);  // host work before the collective
          y = comm.all_reduce(y, ReduceOp::kSum, s);
          if (job.all_gather) y = comm.all_gather(ops::add(y, y), s);
          y.to_floats();  // waits for the stream
        }
      });
    }
  }
  hooks::subscribe(nullptr);
  Runtime::configure({});

  for (int r = 0; r < job.ranks; ++r) {
    auto w = collector::TraceWriter::create(dir + "/rank_" + std::to_string(r) + ".db", {.overwrite = true});
    w->set_meta(collector::kMetaRank, std::to_string(r));
    w->set_meta(collector::kMetaWorldSize, std::to_string(job.ranks));
    w->set_meta(collector::kMetaNode, std::to_string(r / job.ranks_per_node));
    std::map<std::uint64_t, std::int64_t> task_id;  // this process's ids -> the rank's own, from 1
    std::vector<collector::TaskRow> tasks;
    for (const hooks::TaskRecord& t : rec.tasks) {
      if (t.device_id != r) continue;
      const std::int64_t id = static_cast<std::int64_t>(task_id.size()) + 1;
      task_id[t.task_id] = id;
      tasks.push_back({.task_id = id,
                       .start_ns = static_cast<std::int64_t>(t.start_ns),
                       .end_ns = static_cast<std::int64_t>(t.end_ns),
                       .queued_ns = static_cast<std::int64_t>(t.queued_ns),
                       .device_id = t.device_id,
                       .stream_id = static_cast<std::int32_t>(t.stream_id),
                       .name_id = w->intern(t.name),
                       .op_type_id = w->intern(t.op_type),
                       .task_type = static_cast<std::int32_t>(t.task_type)});
    }
    std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    w->add(tasks);
    std::map<std::uint64_t, std::int64_t> communicator_id;  // this rank's communicators, renumbered
    std::vector<collector::CommunicatorRow> communicators;
    for (const CollectiveRecorder::Communicator& c : rec.communicators) {
      if (c.rank != r) continue;  // the world group: communicator rank = world rank
      const std::int64_t id = 100 * (r + 1) + static_cast<std::int64_t>(communicator_id.size());
      communicator_id[c.id] = id;
      communicators.push_back({.communicator_id = id,
                               .name_id = w->intern(c.name),
                               .rank = c.rank,
                               .size = c.size,
                               .members_id = w->intern(c.members),
                               .nodes_id = w->intern(c.nodes)});
    }
    w->add(communicators);
    std::vector<collector::CommunicationRow> communications;
    std::vector<collector::CommunicationLinkRow> links;
    for (const auto& [c, its_links] : rec.collectives) {
      const auto comm = communicator_id.find(c.communicator_id);
      if (comm == communicator_id.end()) continue;
      communications.push_back({.task_id = task_id.at(c.task_id),
                                .communicator_id = comm->second,
                                .sequence = static_cast<std::int32_t>(c.sequence),
                                .kind = static_cast<std::int32_t>(c.kind),
                                .algorithm = static_cast<std::int32_t>(c.algorithm),
                                .reduce_op = static_cast<std::int32_t>(c.reduce_op),
                                .dtype = static_cast<std::int32_t>(c.dtype),
                                .bytes = static_cast<std::int64_t>(c.bytes),
                                .root_or_peer = c.root_or_peer,
                                .last_rank = c.last_rank,
                                .arrival_ns = static_cast<std::int64_t>(c.arrival_ns),
                                .start_ns = static_cast<std::int64_t>(c.start_ns),
                                .end_ns = static_cast<std::int64_t>(c.end_ns)});
      for (const hooks::LinkRecord& l : its_links) {
        links.push_back({.task_id = task_id.at(c.task_id),
                         .peer_rank = l.peer_rank,
                         .transport = static_cast<std::int32_t>(l.transport),
                         .bytes = static_cast<std::int64_t>(l.bytes),
                         .time_ns = static_cast<std::int64_t>(l.time_ns)});
      }
    }
    std::sort(communications.begin(), communications.end(),
              [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    w->add(communications);
    w->add(links);
    w->finalize();
  }
}

// Copies the traces of the default job into `dir` (created if needed). The job runs once per test
// program, on first use, into a directory of the process removed at its exit: the tests of one
// program share one run, each on its own copy.
inline void copy_emulated_job(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  struct Job {
    const fs::path dir = fs::temp_directory_path() / ("npuscope_emulated_job_" + std::to_string(getpid()));
    Job() {
      fs::create_directories(dir);
      write_emulated_rank_traces(dir.string(), {});
    }
    ~Job() { fs::remove_all(dir); }
  };
  static const Job job;
  fs::create_directories(dir);
  for (const fs::directory_entry& f : fs::directory_iterator(job.dir))
    fs::copy_file(f.path(), dir / f.path().filename(), fs::copy_options::overwrite_existing);
}

}  // namespace npuscope::testing
