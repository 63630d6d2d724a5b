// One class per panel (STYLE 8): a title for its tab, an id for --panel, and draw().
#pragma once

#include <memory>
#include <vector>

#include "viewer_state.h"

namespace npuscope::viewer {

class Panel {
 public:
  virtual ~Panel() = default;
  virtual const char* title() const = 0;
  virtual const char* id() const = 0;  // --panel NAME
  virtual void draw() = 0;
};

std::unique_ptr<Panel> make_details_panel(ViewerState& state);
std::unique_ptr<Panel> make_op_stats_panel(ViewerState& state);
std::unique_ptr<Panel> make_findings_panel(ViewerState& state);
std::unique_ptr<Panel> make_compare_panel(ViewerState& state);
std::unique_ptr<Panel> make_search_panel(ViewerState& state);
std::unique_ptr<Panel> make_diff_panel(ViewerState& state);  // needs state.diff (--diff)

}  // namespace npuscope::viewer
