// The end records of the tasks that run while an EndRecords lives (a hook subscriber), for tests
// that check a task's type, cost or flags. Read `ends` after the tensors are synchronised: the
// device thread records a task's end.
#pragma once

#include <mutex>
#include <vector>

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator::testing {

struct EndRecords {
  std::mutex mutex;
  std::vector<hooks::TaskRecord> ends;
  hooks::SubscriberTable table;
  EndRecords() {
    table.user = this;
    table.on_task = [](void* u, const hooks::TaskRecord& r) {
      if (r.phase != hooks::TaskPhase::kEnd) return;
      auto* self = static_cast<EndRecords*>(u);
      std::lock_guard lock(self->mutex);
      self->ends.push_back(r);
    };
    hooks::subscribe(&table);
  }
  ~EndRecords() { hooks::subscribe(nullptr); }
  EndRecords(const EndRecords&) = delete;
  EndRecords& operator=(const EndRecords&) = delete;
};

}  // namespace npuscope::emulator::testing
