// The pipe lanes under the selected custom kernel's stream (Note [Pipe lanes] in
// npuscope/viewer/pipe_lanes.h): a header naming the block, then a lane per pipe the block used.
// The timeline draws them right after that stream's lane.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lane_view.h"
#include "viewer_state.h"

namespace npuscope::viewer {

class PipeGroup {
 public:
  // Follows the selection, its block and the cache: asks the cache for the task's lanes (which
  // starts their read) and rebuilds the lane views when what they show changed.
  void update(ViewerState& state);
  // The model lane they show under (the selection's stream); kNoModelLane when there are none.
  std::size_t under() const { return under_; }
  float height() const;  // the header and the lanes
  const std::string& header() const { return header_; }
  const std::vector<std::unique_ptr<LaneView>>& lanes() const { return views_; }
  std::int32_t block() const { return block_ != nullptr ? block_->block.block : -1; }  // -1: none drawn

 private:
  std::string header_text(const ViewerState& state) const;

  std::size_t under_ = kNoModelLane;
  std::shared_ptr<const TaskPipes> pipes_;  // held while shown, even if the cache lets it go
  const BlockPipes* block_ = nullptr;
  std::vector<std::unique_ptr<LaneView>> views_;
  std::string header_;
};

}  // namespace npuscope::viewer
