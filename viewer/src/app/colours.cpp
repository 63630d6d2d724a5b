#include "colours.h"

#include <cmath>

namespace npuscope::viewer {

ImU32 colour_for_key(std::int32_t key) {
  const double hue = std::fmod(0.12 + static_cast<double>(static_cast<std::uint32_t>(key)) * 0.618033988749895, 1.0);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(static_cast<float>(hue), 0.45f, 0.92f, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1));
}

ImU32 darker(ImU32 c, float factor) {
  ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(v.x * factor, v.y * factor, v.z * factor, v.w));
}

}  // namespace npuscope::viewer
