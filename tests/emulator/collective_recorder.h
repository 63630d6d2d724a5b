// The records a profiling session gets from a run of collectives whose ranks are threads of this
// process (local_transport_group), each on its own device: collectives with their links,
// communicators and, when asked for, tasks. The hooks have one listener per process, so the records
// of every rank come here, from every rank's device worker, under one lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::testing {

struct CollectiveRecorder {
  struct Collective {
    hooks::CollectiveRecord record;
    std::vector<hooks::LinkRecord> links;  // the record's own point to them during the call only
  };
  struct Communicator {
    std::uint64_t id;
    std::string name, members, nodes;  // interned by the emulator: they outlive the call
    int rank, size;
  };

  std::mutex mutex;
  std::vector<Collective> collectives;
  std::vector<Communicator> communicators;
  std::vector<hooks::TaskRecord> tasks;  // at their end, while `recording`; only `with_tasks`
  std::atomic<bool> recording{true};
  hooks::SubscriberTable table;

  // Without tasks, the hooks of tasks stay off (the host pays nothing for them).
  explicit CollectiveRecorder(bool with_tasks = false) {
    table.user = this;
    table.wants_api_enter = false;
    table.wants_task_queued = false;
    table.wants_task_begin = false;
    table.on_collective = [](void* u, const hooks::CollectiveRecord& r) {
      auto* self = static_cast<CollectiveRecorder*>(u);
      std::lock_guard lock(self->mutex);
      self->collectives.push_back({r, {r.links, r.links + r.num_links}});
    };
    table.on_communicator = [](void* u, const hooks::CommunicatorRecord& r) {
      auto* self = static_cast<CollectiveRecorder*>(u);
      std::lock_guard lock(self->mutex);
      self->communicators.push_back({r.communicator_id, r.name, r.members, r.nodes, r.rank, r.size});
    };
    if (with_tasks) {
      table.on_task = [](void* u, const hooks::TaskRecord& t) {
        auto* self = static_cast<CollectiveRecorder*>(u);
        if (t.phase != hooks::TaskPhase::kEnd || !self->recording) return;
        std::lock_guard lock(self->mutex);
        self->tasks.push_back(t);
      };
    }
    hooks::subscribe(&table);
  }
  ~CollectiveRecorder() { hooks::subscribe(nullptr); }
  CollectiveRecorder(const CollectiveRecorder&) = delete;
  CollectiveRecorder& operator=(const CollectiveRecorder&) = delete;

  // The record of communicator rank `rank`'s collective number `sequence` (each thread's
  // communicator has its own id, and its CommunicatorRecord says its rank).
  const hooks::CollectiveRecord& of(int rank, std::uint32_t sequence) const {
    for (const Collective& c : collectives) {
      for (const Communicator& comm : communicators) {
        if (comm.id == c.record.communicator_id && comm.rank == rank && c.record.sequence == sequence) return c.record;
      }
    }
    throw std::runtime_error("no record of rank " + std::to_string(rank));
  }
};

}  // namespace npuscope::testing
