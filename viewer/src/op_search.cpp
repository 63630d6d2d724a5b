#include "npuscope/viewer/op_search.h"

#include <algorithm>
#include <unordered_map>

namespace npuscope::viewer {
namespace {

// Items of every stream lane whose label passes `match` (decided once per distinct label id).
template <typename Match>
std::vector<TimelineModel::Location> collect(const TimelineModel& model, Match match) {
  std::unordered_map<std::int32_t, bool> decided;
  std::vector<TimelineModel::Location> out;
  for (std::size_t l = 0; l < model.lanes().size(); ++l) {
    const Lane& lane = model.lanes()[l];
    if (lane.kind != LaneKind::kStream) continue;
    const auto& row = lane.rows[0];
    for (std::size_t i = 0; i < row.size(); ++i) {
      const auto [it, added] = decided.try_emplace(row[i].label_id, false);
      if (added) it->second = match(model.str(row[i].label_id));
      if (it->second) out.push_back({l, 0, i});
    }
  }
  const auto start = [&](const TimelineModel::Location& a) { return model.lanes()[a.lane].rows[0][a.index].start_ns; };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return start(a) < start(b); });
  return out;
}

}  // namespace

std::vector<TimelineModel::Location> search_ops(const TimelineModel& model, const std::string& text,
                                                std::size_t limit) {
  auto out = collect(model, [&](const std::string& name) { return name.find(text) != std::string::npos; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

bool find_op(const TimelineModel& model, const std::string& name, TimelineModel::Location& where) {
  const auto found = collect(model, [&](const std::string& s) { return s == name; });
  if (found.empty()) return false;
  where = found.front();
  return true;
}

void SearchCursor::search(const TimelineModel& model, const std::string& text) {
  matches_ = text.empty() ? std::vector<TimelineModel::Location>{} : search_ops(model, text);
  current_ = -1;
}

const TimelineModel::Location* SearchCursor::step(int dir) {
  if (matches_.empty()) return nullptr;
  const int n = static_cast<int>(matches_.size());
  current_ = current_ < 0 ? (dir > 0 ? 0 : n - 1) : (current_ + (dir > 0 ? 1 : -1) + n) % n;
  return &matches_[static_cast<std::size_t>(current_)];
}

}  // namespace npuscope::viewer
