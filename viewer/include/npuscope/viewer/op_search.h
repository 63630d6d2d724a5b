// Search by op name: every task whose name contains the text (case-sensitive), in start order, for
// the search panel's next / previous.
#pragma once

#include <string>
#include <vector>

#include "npuscope/viewer/timeline_model.h"

namespace npuscope::viewer {

// Tasks of the stream lanes whose op name contains `text` (all tasks for ""), by start time; at most
// `limit` of them (the earliest).
std::vector<TimelineModel::Location> search_ops(const TimelineModel& model, const std::string& text,
                                                std::size_t limit = 1'000'000);

// The first task whose op name is exactly `name` (--select), by start time; false if none.
bool find_op(const TimelineModel& model, const std::string& name, TimelineModel::Location& where);

}  // namespace npuscope::viewer
