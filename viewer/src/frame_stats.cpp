#include "npuscope/viewer/frame_stats.h"

#include <nlohmann/json.hpp>

namespace npuscope::viewer {

const char* lane_kind_name(LaneKind kind) {
  switch (kind) {
    case LaneKind::kHostThread: return "host_thread";
    case LaneKind::kStream: return "stream";
    case LaneKind::kMemcpy: return "memcpy";
    case LaneKind::kMemory: return "memory";
    case LaneKind::kMarkers: return "markers";
    case LaneKind::kPytorch: return "pytorch";
    case LaneKind::kPipe: return "pipe";
  }
  return "?";
}

void FrameStats::add_row(LaneFrameStats& lane, const std::vector<DrawItem>& drawn) {
  lane.drawn += drawn.size();
  for (const DrawItem& d : drawn) {
    lane.items += d.count;
    if (d.count > 1) {
      ++lane.folded;
      lane.folded_items += d.count;
    }
  }
}

std::size_t FrameStats::drawn() const {
  std::size_t n = 0;
  for (const auto& l : lanes) n += l.drawn;
  return n;
}

std::size_t FrameStats::folded() const {
  std::size_t n = 0;
  for (const auto& l : lanes) n += l.folded;
  return n;
}

std::size_t FrameStats::items() const {
  std::size_t n = 0;
  for (const auto& l : lanes) n += l.items;
  return n;
}

std::string FrameStats::to_json() const {
  nlohmann::json doc;
  doc["view"] = {{"start_ns", view_start_ns}, {"end_ns", view_end_ns}, {"width_px", width_px}};
  doc["lanes_drawn"] = lanes.size();
  doc["items_drawn"] = drawn();
  doc["folded_items"] = folded();  // drawn items that are folded runs
  std::size_t in_folds = 0;
  for (const auto& l : lanes) in_folds += l.folded_items;
  doc["items_in_folds"] = in_folds;
  doc["items_in_view"] = items();
  doc["selected_task"] = selected_task;
  doc["flow_line"] = flow_line;
  doc["pipe_block"] = pipe_block;
  std::size_t highlighted = 0;
  for (const auto& l : lanes) highlighted += l.highlighted;
  doc["collective_highlights"] = highlighted;
  if (!groups.empty()) doc["groups"] = groups;
  if (diff.shown()) {
    doc["diff"] = {
        {"op_rows", diff.op_rows}, {"base_task", diff.base_task}, {"base_ns", diff.base_ns}, {"details", diff.details}};
  }
  if (dumps.shown) {
    doc["dumps"] = {{"status", dumps.status},
                    {"error", dumps.error},
                    {"notes", dumps.notes},
                    {"comparisons", dumps.comparisons},
                    {"place", dumps.place},
                    {"mode", dumps.mode},
                    {"entries", dumps.entries},
                    {"entries_shown", dumps.entries_shown},
                    {"rows_drawn", dumps.rows_drawn},
                    {"failed", dumps.failed},
                    {"unmatched_npu", dumps.unmatched_npu},
                    {"unmatched_bench", dumps.unmatched_bench},
                    {"first_failing", dumps.first_failing},
                    {"first_introducing", dumps.first_introducing},
                    {"first_failing_backward", dumps.first_failing_backward},
                    {"first_introducing_backward", dumps.first_introducing_backward},
                    {"selected", dumps.selected},
                    {"value_rows", dumps.value_rows},
                    {"stack", dumps.stack},
                    {"modules", dumps.modules}};
  }
  auto& out = doc["lanes"] = nlohmann::json::array();
  for (const auto& l : lanes) {
    out.push_back({{"title", l.title},
                   {"kind", lane_kind_name(l.kind)},
                   {"rows", l.rows},
                   {"drawn", l.drawn},
                   {"folded_items", l.folded},
                   {"items_in_folds", l.folded_items},
                   {"items", l.items},
                   {"samples", l.samples},
                   {"collective_highlights", l.highlighted}});
    if (!l.group.empty()) out.back()["group"] = l.group;
  }
  return doc.dump(2) + "\n";
}

}  // namespace npuscope::viewer
