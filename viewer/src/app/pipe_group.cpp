#include "pipe_group.h"

namespace npuscope::viewer {

void PipeGroup::update(ViewerState& state) {
  under_ = kNoModelLane;
  const auto& sel = state.selection();
  std::shared_ptr<const TaskPipes> pipes;
  if (sel && state.show_pipes && !state.selected_blocks().empty()) {
    under_ = sel->where.lane;
    pipes = state.pipe_cache.get(sel->task_id, sel->row.device_id, state.single_frame);
  }
  const BlockPipes* block = pipes ? pipes->block(state.pipe_block()) : nullptr;
  if (pipes != pipes_ || block != block_) {
    views_.clear();
    pipes_ = std::move(pipes);
    block_ = block;
    if (block_ != nullptr) {
      for (const Lane& lane : block_->lanes) views_.push_back(make_pipe_lane(lane, *block_));
    }
  }
  header_ = under_ == kNoModelLane ? std::string() : header_text(state);
}

float PipeGroup::height() const {
  if (under_ == kNoModelLane) return 0;
  float h = kLaneHeaderHeight;
  for (const auto& v : views_) h += v->height();
  return h;
}

std::string PipeGroup::header_text(const ViewerState& state) const {
  const std::string which = "block " + std::to_string(state.pipe_block());
  if (!pipes_) return "pipes of " + which + ": reading its instructions ...";
  if (!pipes_->error.empty()) return "pipes: cannot read the instructions: " + pipes_->error;
  if (block_ == nullptr) return "pipes: the kernel has no " + which;
  const collector::KernelBlockRow& b = block_->block;
  std::string text = which + " of " + std::to_string(pipes_->blocks.size()) + " (core " + std::to_string(b.core) +
                     "): " + std::to_string(b.cycles) + " cycles, ";
  if (block_->details.empty())
    return text + "no instructions recorded (the run left them out: npuscope run --no-pipe-trace)";
  return text + std::to_string(block_->details.size()) + " instructions; pick the block in Details";
}

}  // namespace npuscope::viewer
