#include "offscreen.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>
#include <stb_image_write.h>

#include <cstring>

#include "npuscope/viewer/viewer_app.h"

namespace npuscope::viewer {
namespace {

// The framebuffer-object entry points are not in libGL's OpenGL 1.x ABI: looked up once per context.
struct FboApi {
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers;
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer;
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers;
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers;
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer;
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers;
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status;
};

const FboApi& fbo_api() {
  static const FboApi api = [] {
    FboApi a{};
    const auto get = [](const char* name) {
      const auto p = glfwGetProcAddress(name);
      if (p == nullptr) throw ViewerError(std::string("OpenGL: no ") + name + " (an OpenGL 3 driver is needed)");
      return p;
    };
    a.gen_framebuffers = reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(get("glGenFramebuffers"));
    a.bind_framebuffer = reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(get("glBindFramebuffer"));
    a.delete_framebuffers = reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(get("glDeleteFramebuffers"));
    a.gen_renderbuffers = reinterpret_cast<PFNGLGENRENDERBUFFERSPROC>(get("glGenRenderbuffers"));
    a.bind_renderbuffer = reinterpret_cast<PFNGLBINDRENDERBUFFERPROC>(get("glBindRenderbuffer"));
    a.delete_renderbuffers = reinterpret_cast<PFNGLDELETERENDERBUFFERSPROC>(get("glDeleteRenderbuffers"));
    a.renderbuffer_storage = reinterpret_cast<PFNGLRENDERBUFFERSTORAGEPROC>(get("glRenderbufferStorage"));
    a.framebuffer_renderbuffer = reinterpret_cast<PFNGLFRAMEBUFFERRENDERBUFFERPROC>(get("glFramebufferRenderbuffer"));
    a.check_framebuffer_status = reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(get("glCheckFramebufferStatus"));
    return a;
  }();
  return api;
}

}  // namespace

OffscreenTarget::OffscreenTarget(int width, int height) : width_(width), height_(height) {
  const FboApi& gl = fbo_api();
  gl.gen_framebuffers(1, &fbo_);
  gl.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  gl.gen_renderbuffers(1, &colour_);
  gl.bind_renderbuffer(GL_RENDERBUFFER, colour_);
  gl.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  gl.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour_);
  gl.gen_renderbuffers(1, &depth_);
  gl.bind_renderbuffer(GL_RENDERBUFFER, depth_);
  gl.renderbuffer_storage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, width, height);
  gl.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, depth_);
  const GLenum status = gl.check_framebuffer_status(GL_FRAMEBUFFER);
  gl.bind_framebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    throw ViewerError("OpenGL: the offscreen framebuffer of " + std::to_string(width) + "x" + std::to_string(height) +
                      " is incomplete (status " + std::to_string(status) + ")");
  }
}

OffscreenTarget::~OffscreenTarget() {
  const FboApi& gl = fbo_api();
  gl.delete_framebuffers(1, &fbo_);
  gl.delete_renderbuffers(1, &colour_);
  gl.delete_renderbuffers(1, &depth_);
}

void OffscreenTarget::bind() const {
  fbo_api().bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  glViewport(0, 0, width_, height_);
}

void OffscreenTarget::unbind() const { fbo_api().bind_framebuffer(GL_FRAMEBUFFER, 0); }

std::vector<std::uint8_t> OffscreenTarget::read_rgba() const {
  const std::size_t stride = static_cast<std::size_t>(width_) * 4;
  std::vector<std::uint8_t> bottom_up(stride * static_cast<std::size_t>(height_));
  bind();
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
  unbind();
  std::vector<std::uint8_t> rows(bottom_up.size());
  for (int y = 0; y < height_; ++y) {
    std::memcpy(&rows[static_cast<std::size_t>(y) * stride],
                &bottom_up[static_cast<std::size_t>(height_ - 1 - y) * stride], stride);
  }
  for (std::size_t i = 3; i < rows.size(); i += 4) rows[i] = 255;  // opaque, whatever the clear alpha
  return rows;
}

void OffscreenTarget::write_png(const std::string& path) const {
  const auto rgba = read_rgba();
  if (stbi_write_png(path.c_str(), width_, height_, 4, rgba.data(), width_ * 4) == 0) {
    throw ViewerError("cannot write the screenshot " + path);
  }
}

}  // namespace npuscope::viewer
