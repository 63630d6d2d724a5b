// A device's memory counter: allocated (filled) and reserved (line) bytes as a step plot scaled to
// the peak. Per pixel column it draws the largest value of the samples there, found by binary
// search, so millions of samples cost the lane's width, not their number.
#include <algorithm>

#include "lane_view.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

constexpr float kCounterHeight = 40;

std::string format_bytes(std::int64_t b) {
  char buf[32];
  const double v = static_cast<double>(b);
  if (b >= (1ll << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1ll << 30));
  else if (b >= (1ll << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / (1ll << 20));
  else if (b >= (1ll << 10))
    std::snprintf(buf, sizeof buf, "%.1f KiB", v / (1ll << 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

class MemoryLaneView final : public LaneView {
 public:
  using LaneView::LaneView;
  float height() const override { return kLaneHeaderHeight + kCounterHeight; }

  void draw(LaneDrawContext& ctx) override {
    const auto& s = lane_.samples;
    const ViewRange& v = ctx.state->view;
    const float top = ctx.y + kLaneHeaderHeight, bottom = top + kCounterHeight - 2;
    const double scale = lane_.peak_reserved > 0 ? (kCounterHeight - 4) / static_cast<double>(lane_.peak_reserved) : 0;
    const auto ts_less = [](const CounterSample& a, std::int64_t t) { return a.ts_ns < t; };
    // The sample in force at the view's start (the last one before it), then column by column.
    auto it = std::lower_bound(s.begin(), s.end(), v.start_ns, ts_less);
    if (it != s.begin()) --it;
    const int columns = static_cast<int>(ctx.x1 - ctx.x0);
    float prev_reserved_y = bottom;
    for (int c = 0; c < columns && it != s.end(); ++c) {
      const auto col_end = v.start_ns + static_cast<std::int64_t>((c + 1) * v.ns_per_px());
      if (it->ts_ns >= col_end) {
        if (it == s.begin()) continue;  // before the first sample: nothing allocated yet
      }
      std::int64_t alloc = it->allocated, reserved = it->reserved;
      auto next = std::lower_bound(it, s.end(), col_end, ts_less);
      for (auto k = it; k != next; ++k) {  // at most a few per column when zoomed in
        alloc = std::max(alloc, k->allocated);
        reserved = std::max(reserved, k->reserved);
        if (next - it > 64) break;  // many samples in one pixel: the first 64 decide its height
      }
      ctx.stats->samples += static_cast<std::size_t>(next - it);
      if (next != it) it = next - 1;
      const float x = ctx.x0 + static_cast<float>(c);
      const float ya = bottom - static_cast<float>(static_cast<double>(alloc) * scale);
      const float yr = bottom - static_cast<float>(static_cast<double>(reserved) * scale);
      ctx.draw_list->AddRectFilled(ImVec2(x, ya), ImVec2(x + 1, bottom), IM_COL32(90, 150, 220, 200));
      ctx.draw_list->AddLine(ImVec2(x, prev_reserved_y), ImVec2(x + 1, yr), IM_COL32(230, 140, 60, 255));
      prev_reserved_y = yr;
      if (ctx.hovering(x, top, x + 1, bottom + 2)) {
        ImGui::BeginTooltip();
        ImGui::Text("allocated %s", format_bytes(alloc).c_str());
        ImGui::Text("reserved  %s", format_bytes(reserved).c_str());
        ImGui::Text("peak reserved %s", format_bytes(lane_.peak_reserved).c_str());
        ImGui::EndTooltip();
      }
    }
    ctx.stats->rows = 1;
    ctx.draw_list->AddText(ImVec2(ctx.x1 - 150, top), IM_COL32(200, 200, 200, 255),
                           ("peak " + format_bytes(lane_.peak_reserved)).c_str());
  }
};

}  // namespace

std::unique_ptr<LaneView> make_memory_lane(const Lane& lane, std::size_t index) {
  return std::make_unique<MemoryLaneView>(lane, index);
}

}  // namespace npuscope::viewer
