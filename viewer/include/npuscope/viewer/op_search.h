// Search by op name: every task whose name contains the text (case-sensitive), in start order, for
// the search panel's next / previous (N / P).
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

// The current search and where next / previous stand in it: the search panel sets it, and N / P
// step through it from anywhere in the viewer, wrapping around at both ends.
class SearchCursor {
 public:
  void search(const TimelineModel& model, const std::string& text);
  const std::vector<TimelineModel::Location>& matches() const { return matches_; }
  int current() const { return current_; }  // -1: no match stepped to yet
  // Steps forward (dir > 0) or back; the first step goes to the first or the last match. Null when
  // there is no match.
  const TimelineModel::Location* step(int dir);

 private:
  std::vector<TimelineModel::Location> matches_;
  int current_ = -1;
};

}  // namespace npuscope::viewer
