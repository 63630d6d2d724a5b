// A directory of rank traces as a multi-rank job writes them (one per rank, META rank / world_size /
// node, COMMUNICATOR, COMMUNICATION), from a real run of the emulator's collectives: the ranks are
// threads of this process (local_transport_group), each on its own device, and what they record
// (hooks: tasks, communicators, collectives) is written through the collector's writer, one trace
// per rank. The hooks have one listener per process, so one profiling session per rank is not
// possible here; the rows are those a rank's session writes. Task and communicator ids are
// renumbered per rank (as separate processes number them), so matching a collective across ranks
// cannot lean on them.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/collector/trace_writer.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::viewer::testing {

struct RankJob {
  int ranks = 4;
  int ranks_per_node = 2;
  // Runs extra matmuls and a virtual second of host work before each all_reduce, so the others wait
  // for it: far more than the jitter of the ranks' host clocks, which follow the threads' real time.
  int late_rank = 2;
  std::uint64_t late_ns = 1'000'000'000;
  int steps = 2;  // each: matmuls, an all_reduce, an add, an all_gather
};

// Writes DIR/rank_<r>.db for every rank of `job`.
inline void write_rank_traces(const std::string& dir, const RankJob& job) {
  using namespace npuscope::emulator;
  struct Recorder {
    std::mutex mutex;
    std::vector<hooks::TaskRecord> tasks;  // kEnd only
    std::vector<hooks::CollectiveRecord> collectives;
    std::vector<hooks::CommunicatorRecord> communicators;
    hooks::SubscriberTable table;
  } rec;
  rec.table.user = &rec;
  rec.table.wants_api_enter = false;
  rec.table.wants_task_queued = false;
  rec.table.wants_task_begin = false;
  rec.table.on_task = [](void* u, const hooks::TaskRecord& r) {
    auto* self = static_cast<Recorder*>(u);
    std::lock_guard lock(self->mutex);
    if (r.phase == hooks::TaskPhase::kEnd) self->tasks.push_back(r);
  };
  rec.table.on_collective = [](void* u, const hooks::CollectiveRecord& r) {
    auto* self = static_cast<Recorder*>(u);
    std::lock_guard lock(self->mutex);
    self->collectives.push_back(r);
    self->collectives.back().links = nullptr;  // valid during the call only
    self->collectives.back().num_links = 0;
  };
  rec.table.on_communicator = [](void* u, const hooks::CommunicatorRecord& r) {
    auto* self = static_cast<Recorder*>(u);
    std::lock_guard lock(self->mutex);
    self->communicators.push_back(r);  // its strings are interned: they outlive the call
  };

  Runtime::configure({.num_devices = job.ranks});
  hooks::subscribe(&rec.table);
  {
    auto transports = local_transport_group(job.ranks);
    std::vector<int> world(static_cast<std::size_t>(job.ranks));
    std::iota(world.begin(), world.end(), 0);
    std::vector<std::jthread> threads;
    for (int r = 0; r < job.ranks; ++r) {
      threads.emplace_back([&, r] {
        Communicator comm(transports[static_cast<std::size_t>(r)],
                          {"hccl_world_group", world, CommTopology::uniform(job.ranks, job.ranks_per_node)});
        const Stream s = Runtime::get().device(r).default_stream();
        std::vector<float> v(64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i)
          v[i] = 0.001f * static_cast<float>((i + static_cast<std::size_t>(r)) % 97);
        const Tensor x = Tensor::from_floats(v, {64, 64}, DType::kF32, DeviceRef::npu(r));
        for (int step = 0; step < job.steps; ++step) {
          Tensor y = ops::matmul(x, x);
          for (int extra = 0; r == job.late_rank && extra < 6; ++extra) y = ops::matmul(y, x);
          if (r == job.late_rank) vclock::advance_by(job.late_ns);  // host work before the collective
          y = comm.all_reduce(y, ReduceOp::kSum, s);
          y = ops::add(y, y);
          comm.all_gather(y, s).to_floats();  // waits for the stream
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
    for (const hooks::CommunicatorRecord& c : rec.communicators) {
      if (c.rank != r) continue;  // the world group: communicator rank = world rank
      const std::int64_t id = 100 * (r + 1) + static_cast<std::int64_t>(communicator_id.size());
      communicator_id[c.communicator_id] = id;
      communicators.push_back({.communicator_id = id,
                               .name_id = w->intern(c.name),
                               .rank = c.rank,
                               .size = c.size,
                               .members_id = w->intern(c.members),
                               .nodes_id = w->intern(c.nodes)});
    }
    w->add(communicators);
    std::vector<collector::CommunicationRow> communications;
    for (const hooks::CollectiveRecord& c : rec.collectives) {
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
    }
    std::sort(communications.begin(), communications.end(),
              [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    w->add(communications);
    w->finalize();
  }
}

}  // namespace npuscope::viewer::testing
