// The multi-rank view (Note [Cluster model] in npuscope/viewer/cluster_model.h): one ruler over a
// collapsible lane group per rank, each rank a ViewerState and Timeline of its own on the shared
// axis, kept on one view range. A task selected on one rank deselects the others; if it is a
// collective, every rank's part of it is outlined and the Collective panel lists them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/viewer/cluster_model.h"
#include "npuscope/viewer/frame_stats.h"
#include "panel.h"
#include "timeline.h"
#include "viewer_state.h"

namespace npuscope::viewer {

class ClusterView {
 public:
  // `single_frame`: one frame to be written (--screenshot), as ViewerState::single_frame.
  ClusterView(const ClusterModel& ranks, bool single_frame);

  const ClusterModel& ranks() const { return ranks_; }
  // The rank that holds the selection (its panels show), else the first.
  std::size_t active_rank() const { return active_; }
  ViewerState& active() { return *states_[active_]; }
  // The collective of the selection, or null.
  const Collective* collective() const { return collective_; }

  // The ruler and every rank's group, filling `height`; `stats` gets every drawn lane with its group.
  void draw_timeline(float height, FrameStats& stats);
  // The Collective tab, then the active rank's panels.
  void draw_panels();
  // --view: the range on every rank.
  void set_view(std::int64_t start_ns, std::int64_t end_ns);
  // --select OP [--rank R]: the first task named OP on rank R, or on the first rank that has one.
  // False if there is none.
  bool select_op(const std::string& op, std::optional<std::int32_t> rank);
  // Selects a member's task on its rank (a row of the Collective panel), bringing it into view.
  void select_member(const CollectiveMember& m);

 private:
  // The view range one rank changed (input, a panel) becomes every rank's.
  void sync_views();
  // The same for one rank, after its lanes were drawn (O(1): the others get it before theirs).
  void adopt_view(std::size_t rank);
  // A new selection on some rank: the others lose theirs, and the collective is outlined everywhere.
  void follow_selection();
  std::vector<std::unique_ptr<Panel>>& panels_of(std::size_t rank);

  const ClusterModel& ranks_;
  std::vector<std::unique_ptr<ViewerState>> states_;
  std::vector<std::unique_ptr<Timeline>> timelines_;
  std::vector<std::vector<std::unique_ptr<Panel>>> panels_;  // by rank, made when it first becomes active
  std::unique_ptr<Panel> collective_panel_;
  std::vector<int> serials_;  // each rank's selection serial, as last seen
  ViewRange view_;            // the shared range
  std::size_t active_ = 0;
  const Collective* collective_ = nullptr;
};

std::unique_ptr<Panel> make_collective_panel(ClusterView& view);

}  // namespace npuscope::viewer
