// The selected task: its row, its tensors (shapes, dtypes, statistics), its compare metrics and its
// roofline bound, read from the trace once per selection; for a custom kernel also its blocks, the
// block picker of its pipe lanes and its sanitizer findings (kernel_details.cpp); with --diff, its
// BASE counterpart's duration (diff_job.h).
#include <imgui.h>

#include <cmath>

#include "diff_job.h"
#include "kernel_details.h"
#include "npuscope/analyzer/roofline.h"
#include "npuscope/collector/export_npy.h"
#include "npuscope/viewer/time_format.h"
#include "panel.h"

namespace npuscope::viewer {
namespace {

class DetailsPanel final : public Panel {
 public:
  explicit DetailsPanel(ViewerState& state) : state_(state) {}
  const char* title() const override { return "Details"; }
  const char* id() const override { return "details"; }

  void draw() override {
    const auto& sel = state_.selection();
    if (!sel) {
      ImGui::TextUnformatted("Click a task on the timeline (or a row of a table) to see its details.");
      return;
    }
    if (loaded_serial_ != state_.selection_serial()) load(sel->task_id);
    ImGui::BeginChild("details");  // scrolls: a kernel's blocks and findings, or many tensors, run long
    draw_task(*sel);
    ImGui::EndChild();
  }

 private:
  void draw_task(const Selection& sel) {
    const collector::TaskRow& t = sel.row;
    const auto& m = state_.model();
    ImGui::Text("%s", m.str(t.name_id).c_str());
    ImGui::Separator();
    if (ImGui::BeginTable("task", 4, ImGuiTableFlags_SizingStretchProp)) {
      row("type", m.str(t.op_type_id) + " (" + collector::task_type_name(t.task_type) + ")", "stream",
          t.device_id >= 0 ? "npu:" + std::to_string(t.device_id) + " stream " + std::to_string(t.stream_id)
                           : "cpu thread " + std::to_string(t.thread_id));
      row("start", format_duration(t.start_ns - state_.axis_first_ns()), "duration",
          format_duration(t.end_ns - t.start_ns));
      row("FLOPs", std::to_string(t.flops), "bytes", std::to_string(t.bytes));
      row("bound", bound_, "block dim", std::to_string(t.block_dim));
      row("task id", std::to_string(t.task_id), "launched by",
          sel.launch ? m.str(state_.item(*sel.launch).label_id) + " (flow line)" : "(no API call recorded)");
      row("overflow", t.overflow ? "YES" : "no", "fallback", t.fallback ? "AI CPU fallback" : "no");
      if (t.underflow > 0 || t.subnormal > 0)
        row("underflow", std::to_string(t.underflow) + " elements flushed to 0", "subnormal",
            std::to_string(t.subnormal) + " elements");
      if (t.input_shapes_id != 0)
        row("input shapes", m.str(t.input_shapes_id), "input dtypes", m.str(t.input_dtypes_id));
      if (!aten_op_.empty() || !module_.empty()) {
        row("aten op", aten_op_.empty() ? "-" : aten_op_, "pass", pass_.empty() ? "-" : pass_);
        row("module", module_.empty() ? "-" : module_, "", "");
      }
      if (state_.diff != nullptr) draw_diff(t);
      ImGui::EndTable();
    }
    draw_kernel_details(state_);
    draw_tensors();
    draw_compare();
  }

  // --diff: the op against its BASE counterpart (Note [Op pairing] in npuscope/analyzer/op_pairing.h).
  void draw_diff(const collector::TaskRow& t) {
    const analyzer::DiffResult* diff = state_.diff->result(state_.single_frame);
    if (diff == nullptr) {
      const std::string& error = state_.diff->error();
      row("BASE (--diff)", error.empty() ? "diffing ..." : "diff failed: " + error, "", "");
      return;
    }
    const std::string line = describe_pair(*diff, t);
    if (line.empty()) return;  // not an op: the diff pairs ops only
    const analyzer::DiffPair* pair = diff->pair_of_new(t.task_id);
    row("BASE (--diff)", line, "base task id", pair ? std::to_string(pair->base_task_id) : "-");
    if (FrameStats* stats = state_.frame_stats) {
      stats->diff.details = line;
      stats->diff.base_task = pair ? pair->base_task_id : 0;
      stats->diff.base_ns = pair ? pair->base_ns : 0;
    }
  }

  static void row(const char* k1, const std::string& v1, const char* k2, const std::string& v2) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", k1);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(v1.c_str());
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", k2);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(v2.c_str());
  }

  void load(std::int64_t task_id) {
    loaded_serial_ = state_.selection_serial();
    tensors_.clear();
    compare_.clear();
    state_.reader().for_each([&](collector::TensorRow& r) { tensors_.push_back(std::move(r)); }, {.task_id = task_id});
    if (state_.model().has_compare_results()) {
      state_.reader().for_each([&](const collector::CompareResultRow& r) {
        if (r.task_id == task_id) compare_.push_back(r);
      });
    }
    bound_ = estimate_bound(state_.selection()->row);
    load_pytorch_op(state_.selection()->row.pytorch_api_id);
  }

  // The PyTorch op that launched the task: its innermost aten op, module and pass (PYTORCH_API).
  void load_pytorch_op(std::int64_t id) {
    aten_op_.clear();
    module_.clear();
    pass_.clear();
    std::optional<collector::PytorchApiRow> op =
        id != 0 ? state_.reader().first<collector::PytorchApiRow>({.id = id}) : std::nullopt;
    if (!op) return;
    module_ = state_.model().str(op->module_id);
    pass_ = collector::stored_name<ModelPass>(op->pass, "pass");
    for (int depth = 0; op && depth < 64; ++depth) {
      if (is(op->kind, HostOpKind::kAtenOp)) {
        aten_op_ = state_.model().str(op->name_id);
        return;
      }
      op = op->parent_id != 0 ? state_.reader().first<collector::PytorchApiRow>({.id = op->parent_id}) : std::nullopt;
    }
  }

  // The analyzer's roofline (npuscope/analyzer/roofline.h): the bound `npuscope analyze` gives it.
  std::string estimate_bound(const collector::TaskRow& t) const {
    if (t.flops <= 0 && t.bytes <= 0) return "n/a (no FLOPs or bytes)";
    for (const auto& d : state_.reader().rows<collector::DeviceInfoRow>()) {
      if (d.device_id != t.device_id) continue;
      const analyzer::Roofline r =
          analyzer::roofline(t.task_type, t.compute_dtype, t.flops, t.bytes, t.end_ns - t.start_ns, &d);
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s (%.1f%% of the FLOP/s ceiling, %.1f%% of effective bandwidth)",
                    analyzer::bound_name(r.bound), r.compute_pct, r.memory_pct);
      return buf;
    }
    return "n/a (device unknown)";
  }

  void draw_tensors() {
    if (tensors_.empty()) {
      ImGui::TextDisabled("no tensors recorded (run with --dump stats)");
      return;
    }
    if (!ImGui::BeginTable("tensors", 9, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* h : {"tensor", "dtype", "shape", "min", "max", "mean", "l2 norm", "nan", "inf"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& r : tensors_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%s%d", is(r.role, TensorRole::kInput) ? "in" : "out", r.idx);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(collector::tensor_dtype_name(r.dtype).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("[%s]", r.shape.c_str());
      for (const double v : {r.min, r.max, r.mean, r.l2norm}) {
        ImGui::TableNextColumn();
        ImGui::Text("%.5g", v);
      }
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(r.nan_count));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(r.inf_count));
    }
    ImGui::EndTable();
  }

  void draw_compare() {
    if (compare_.empty()) return;
    ImGui::TextUnformatted("compare (NPU vs CPU golden):");
    if (!ImGui::BeginTable("metrics", 8, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* h : {"tensor", "verdict", "origin", "cosine", "max abs", "max rel", "rmse", "1e-3 ratio"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& r : compare_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%s%d", is(r.role, TensorRole::kInput) ? "in" : "out", r.idx);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(collector::stored_name<Verdict>(r.verdict, "verdict").c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(collector::stored_name<ErrorOrigin>(r.origin, "origin").c_str());
      for (const double v : {r.cosine, r.max_abs_err, r.max_rel_err, r.rmse, r.one_thousandth_ratio}) {
        ImGui::TableNextColumn();
        ImGui::Text("%.6g", v);
      }
    }
    ImGui::EndTable();
  }

  ViewerState& state_;
  int loaded_serial_ = -1;
  std::vector<collector::TensorRow> tensors_;
  std::vector<collector::CompareResultRow> compare_;
  std::string bound_;
  std::string aten_op_, module_, pass_;
};

}  // namespace

std::unique_ptr<Panel> make_details_panel(ViewerState& state) { return std::make_unique<DetailsPanel>(state); }

}  // namespace npuscope::viewer
