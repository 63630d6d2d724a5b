// The details panel's part for a custom (opkit) kernel (kernel_details.cpp).
#pragma once

#include "viewer_state.h"

namespace npuscope::viewer {

// Its blocks, the block picker of its pipe lanes and its sanitizer findings; nothing for a task that
// is not a custom kernel.
void draw_kernel_details(ViewerState& state);

}  // namespace npuscope::viewer
