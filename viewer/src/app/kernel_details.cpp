// The details panel's part for a custom (opkit) kernel: the block picker of its pipe lanes (Note
// [Pipe lanes] in npuscope/viewer/pipe_lanes.h), the sanitizer's findings and its blocks (core, time,
// cycles, how busy each pipe was). A click on a block, or on a finding of a block, shows that
// block's pipes.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_details.h"
#include "npuscope/viewer/pipe_lanes.h"
#include "npuscope/viewer/time_format.h"

namespace npuscope::viewer {
namespace {

using collector::KernelBlockRow;
using collector::KernelFindingRow;

constexpr int kVisibleRows = 6;  // the tables scroll beyond this many rows

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

void cell(const std::string& text) {
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(text.c_str());
}

float table_height(std::size_t rows) {
  return ImGui::GetTextLineHeightWithSpacing() * (static_cast<float>(std::min<std::size_t>(rows, kVisibleRows)) + 1.6f);
}

void draw_picker(ViewerState& state, std::span<const KernelBlockRow> blocks) {
  std::vector<std::int32_t> cores;
  for (const KernelBlockRow& b : blocks) cores.push_back(b.core);
  std::sort(cores.begin(), cores.end());
  cores.erase(std::unique(cores.begin(), cores.end()), cores.end());
  ImGui::Text("custom kernel: %zu blocks on %zu cores", blocks.size(), cores.size());
  ImGui::SameLine();
  ImGui::Checkbox("pipe lanes", &state.show_pipes);
  ImGui::SameLine();
  int block = state.pipe_block();
  ImGui::SetNextItemWidth(110);
  if (ImGui::InputInt("block", &block))
    state.select_block(std::clamp(block, blocks.front().block, blocks.back().block), true);
  ImGui::SameLine();
  if (ImGui::SmallButton("zoom to block")) state.zoom_to_block();
}

void draw_blocks(ViewerState& state, std::span<const KernelBlockRow> blocks) {
  std::vector<Pipe> used;  // the pipes any block used, in the lanes' order
  for (const Pipe p : kPipeLaneOrder) {
    if (std::any_of(blocks.begin(), blocks.end(), [&](const KernelBlockRow& b) { return b.busy(p) > 0; }))
      used.push_back(p);
  }
  const int columns = 9 + static_cast<int>(used.size());
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("blocks", columns, kFlags, ImVec2(0, table_height(blocks.size())))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"block", "core", "offset", "duration", "cycles", "instructions"}) ImGui::TableSetupColumn(h);
  for (const Pipe p : used) ImGui::TableSetupColumn((std::string(enum_name(p)) + " %").c_str());
  for (const char* h : {"MTE2+VECTOR %", "UB used", "GM copies (unaligned)"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  const std::int64_t task_start = state.selection()->row.start_ns;
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(blocks.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const KernelBlockRow& b = blocks[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      if (ImGui::Selectable(std::to_string(b.block).c_str(), b.block == state.pipe_block(),
                            ImGuiSelectableFlags_SpanAllColumns))
        state.select_block(b.block, true);
      ImGui::PopID();
      cell(std::to_string(b.core));
      cell(format_duration(b.start_ns - task_start));  // from the task's start
      cell(format_duration(b.end_ns - b.start_ns));
      cell(std::to_string(b.cycles));
      cell(std::to_string(b.instructions));
      for (const Pipe p : used) cell(percent(b.busy(p), b.cycles));
      cell(percent(b.mte2_vector_overlap_cycles, b.cycles));
      cell(std::to_string(b.ub_bytes) + " of " + std::to_string(b.ub_capacity));
      cell(std::to_string(b.gm_copies) + " (" + std::to_string(b.unaligned_gm_copies) + ")");
    }
  }
  ImGui::EndTable();
}

void draw_findings(ViewerState& state, std::span<const KernelFindingRow> findings) {
  ImGui::TextColored(ImVec4(1, 0.6f, 0.2f, 1), "%zu sanitizer finding%s", findings.size(),
                     findings.size() == 1 ? "" : "s");
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("kernel findings", 5, kFlags, ImVec2(0, table_height(findings.size()) * 1.5f))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("check", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("block", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("instruction", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("source", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("message", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  const TimelineModel& m = state.model();
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const KernelFindingRow& f = findings[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    // A finding of one block shows that block's pipes when clicked.
    if (ImGui::Selectable(collector::stored_name<KernelCheck>(f.check_kind, "check").c_str(), false,
                          ImGuiSelectableFlags_SpanAllColumns) &&
        f.block >= 0)
      state.select_block(f.block, true);
    ImGui::PopID();
    cell(f.block >= 0 ? std::to_string(f.block) : "launch");
    cell(m.str(f.instruction_id));
    cell(f.file_id != 0 ? m.str(f.file_id) + ":" + std::to_string(f.line) : "-");
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", m.str(f.message_id).c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_kernel_details(ViewerState& state) {
  const auto& sel = state.selection();
  if (!sel) return;
  const std::span<const KernelBlockRow> blocks = state.selected_blocks();
  const std::span<const KernelFindingRow> findings = state.model().kernels().findings_of(sel->task_id);
  if (blocks.empty() && findings.empty()) return;
  ImGui::Separator();
  if (!blocks.empty()) draw_picker(state, blocks);
  if (!findings.empty()) draw_findings(state, findings);
  if (!blocks.empty()) draw_blocks(state, blocks);
}

}  // namespace npuscope::viewer
