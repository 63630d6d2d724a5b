// One side's overall time split (msprof-analyze's OverallMetrics), from its ops and copies.
//
// Note [Overall time split]
// Over the compared range's ops (in start order) and copies:
// - Computing Time = |U kernels|: an NPU's AI Core, vector, mix and AI CPU tasks, a GPU's kernels, a
//   golden run's host CPU tasks (copies and memsets are not computing, as in msprof's step trace).
//   Each class of Note [Kernel classes] (diff_classes.h) gets the part of that union its kernels
//   cover first, in start order: the classes sum to Computing exactly and, on one stream, each is
//   the sum of its kernels' durations. msprof-analyze sums each class's durations and takes Other as
//   what is left of Computing (at least 0): on overlapping streams its classes add up to more than
//   Computing.
// - Uncovered Communication Time = |computing U communication| - |computing|. Per communicator:
//   its collectives' time outside computing, of which Wait is the part of each collective's wait
//   for its peers (COMMUNICATION arrival to start) outside computing, and Transmit the rest
//   (msprof-analyze takes the Notify_Wait tasks of the plane that waited least). The communicators'
//   uncovered times may overlap one another: Uncovered Communication Overlapped = their sum - the
//   whole.
// - Free Time = E2E - |computing U communication|: SDMA, the part copies and memsets cover, and
//   Free, the device idle (msprof-analyze's SDMA sums the durations of the copies on the compute
//   streams).
// - E2E from the first op's or copy's start to the last one's end (a step: from the step's start).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diff_side.h"

namespace npuscope::analyzer {

using Span = std::pair<std::int64_t, std::int64_t>;  // [start, end) in ns

// A collective's COMMUNICATION row: its communicator (an index into the names) and its wait.
struct CollectiveTimes {
  std::int32_t group = 0;
  std::int64_t arrival_ns = 0, start_ns = 0;
};

struct SplitInputs {
  const std::vector<DiffOp>& ops;                                        // in start order
  const std::vector<Span>& copies;                                       // copies and memsets, in start order
  const std::unordered_map<std::int64_t, CollectiveTimes>& collectives;  // by task id
  const std::vector<std::string>& group_names;                           // by CollectiveTimes::group
  std::optional<Span> step;                                              // the step's span; none: the whole trace
};

TimeSplit split_time(const SplitInputs& in);

}  // namespace npuscope::analyzer
