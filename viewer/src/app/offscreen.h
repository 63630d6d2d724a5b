// An offscreen render target (an OpenGL framebuffer object of a fixed size) and writing its pixels
// as PNG: what --screenshot and the frame bench draw into, so no window needs to be shown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npuscope::viewer {

class OffscreenTarget {
 public:
  // Needs a current OpenGL 3 context. Throws ViewerError when the framebuffer is incomplete.
  OffscreenTarget(int width, int height);
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  void bind() const;    // draw into it (and set the viewport)
  void unbind() const;  // back to the window's framebuffer
  // RGBA rows, top row first.
  std::vector<std::uint8_t> read_rgba() const;
  void write_png(const std::string& path) const;  // ViewerError if it cannot be written

 private:
  int width_, height_;
  unsigned fbo_ = 0, colour_ = 0, depth_ = 0;
};

}  // namespace npuscope::viewer
