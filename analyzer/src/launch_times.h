// When each task was launched, for the analyses that place a task by its launch (a step's kernels,
// idle gaps charged to the host, diff's steps).
//
// Note [Launch time]
// A task's launch is TASK.queued_ns: the emulator records when the host queued it. A trace an
// importer wrote from a real profile may not know it (queued_ns 0): its launch is then the start of
// the host call that launched it, joined by connection_id (CANN_API, cuda_runtime: the earliest of
// the calls sharing the id, the node-level call around the runtime's), else the start of the
// framework op that launched it (pytorch_api_id), else the task's own start (a task nothing joins:
// it was launched no later than it started). An emulated trace (no META source) is taken as it is.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

class LaunchTimes {
 public:
  // Reads API's and PYTORCH_API's ids and starts when the trace was imported.
  explicit LaunchTimes(const collector::TraceReader& trace);

  // Whether tasks need it: the trace was imported (its TASK.connection_id must then be read).
  bool needed() const { return needed_; }
  std::int64_t of(std::int64_t queued_ns, std::int64_t connection_id, std::int64_t pytorch_api_id,
                  std::int64_t start_ns) const;
  std::int64_t of(const collector::TaskRow& t) const {
    return of(t.queued_ns, t.connection_id, t.pytorch_api_id, t.start_ns);
  }

 private:
  using IdStart = std::pair<std::int64_t, std::int64_t>;  // id, start_ns; sorted by id, one per id
  static const IdStart* find(const std::vector<IdStart>& v, std::int64_t id);

  bool needed_ = false;
  std::vector<IdStart> api_by_connection_, framework_op_by_id_;
};

}  // namespace npuscope::analyzer
