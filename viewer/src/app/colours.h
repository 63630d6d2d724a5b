// The viewer's palette: a stable colour per op type (or API name, copy kind), and the verdict colours.
#pragma once

#include <imgui.h>

#include <cstdint>

namespace npuscope::viewer {

inline constexpr ImU32 kPassColour = IM_COL32(70, 160, 90, 255);
inline constexpr ImU32 kFailColour = IM_COL32(215, 80, 60, 255);
inline constexpr ImU32 kIntroducedColour = IM_COL32(170, 20, 120, 255);
inline constexpr ImU32 kUncomparedColour = IM_COL32(120, 120, 130, 255);
inline constexpr ImU32 kOverflowColour = IM_COL32(255, 40, 40, 255);
inline constexpr ImU32 kUnderflowColour = IM_COL32(60, 120, 255, 255);  // results flushed to zero by f16/bf16
inline constexpr ImU32 kFindingColour = IM_COL32(255, 150, 40, 255);    // a custom kernel's sanitizer findings
inline constexpr ImU32 kSelectionColour = IM_COL32(255, 230, 80, 255);
inline constexpr ImU32 kCollectiveColour = IM_COL32(80, 220, 255, 255);  // the selected collective on every rank
inline constexpr ImU32 kTextColour = IM_COL32(15, 15, 20, 255);

// A hue from the key (golden-ratio steps), fixed saturation and value: neighbours differ.
ImU32 colour_for_key(std::int32_t key);
// The same colour, darker (folded runs).
ImU32 darker(ImU32 c, float factor = 0.6f);

}  // namespace npuscope::viewer
