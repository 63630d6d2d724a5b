// The format_conversion rule: TransData tasks (ND/NCHW <-> NC1HWC0, FRACTAL_Z, FRACTAL_NZ), which
// move bytes between layouts and compute nothing.
//
// Note [Format conversions]
// CANN's cube ops take private formats: a convolution NC1HWC0 (5HD) activations and a FRACTAL_Z
// weight, a max pool with mask 5HD. torch_npu keeps tensors in their base format (NCHW, ND) unless
// torch_npu.npu.config.allow_internal_format = True (ALLOW_INTERNAL_FORMAT defaults to disable,
// torch_npu npu_sys_ctrl.cpp; FormatHelper keeps the base format then), so every such op converts
// its inputs in and its outputs back: the shared 910B AlexNet step has 57 TransData kernels, 1423 us
// of 8874 us (rank 0). The rule groups the conversions by their formats (TASK's input and output
// formats) and by the op they serve: the next compute kernel on the stream for a conversion into a
// private format, the previous one for a conversion back ("before Conv2D", "after Conv2D"). Of that
// time it counts as removable:
//   - weights: FRACTAL_Z in or out (a conv weight converted every step, and its gradient back):
//     with allow_internal_format = True, or the weight cast once with torch_npu.npu_format_cast,
//     it stays FRACTAL_Z between steps;
//   - repeats: a conversion identical to one of the previous kRepeatWindow kernels on the stream
//     (input shape, source and target format) while no kernel in between wrote a tensor of that
//     shape and format: the same tensor converted again (a conv backward converts dy to 5HD for
//     Conv2DBackpropInput and again for Conv2DBackpropFilter). Shapes stand in for tensors, so a
//     repeat whose source a kernel of that shape may have rewritten is not counted (conservative).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyses.h"
#include "npuscope/analyzer/text_table.h"
#include "rules.h"

namespace npuscope::analyzer {

using analyzer::format_ns;
namespace {

constexpr int kMinConversions = 5;  // TransData calls worth a line
constexpr int kRepeatWindow = 6;    // kernels back a repeated conversion may be

// A kernel as the rule reads it: its strings are the trace's ids.
struct Kernel {
  std::int64_t start_ns = 0, ns = 0;
  std::int32_t stream = 0, op_type = 0, in_shapes = 0, in_formats = 0, out_shapes = 0, out_formats = 0;
  bool conversion = false;
};

std::string_view first_field(std::string_view s) { return s.substr(0, s.find(';')); }

// The base formats torch_npu keeps tensors in; any other is private (5HD, FRACTAL_Z, FRACTAL_NZ, ...).
bool base_format(std::string_view f) {
  return f.empty() || f == "ND" || f == "FORMAT_ND" || f == "NCHW" || f == "NHWC" || f == "NCDHW" || f == "NCL";
}

struct Group {
  std::string src, dst, op, side;  // side: "before" (into a private format) or "after"
  std::int64_t count = 0, ns = 0, weight_ns = 0, repeat_ns = 0, repeats = 0;
  std::int64_t removable() const { return weight_ns + repeat_ns; }
};

class Conversions {
 public:
  explicit Conversions(const TraceData& data) : data_(data) {}

  void read() {
    data_.reader.for_each([&](const collector::TaskRow& t) {
      if (!is_device_kernel(t.task_type)) return;
      const auto id = [](collector::StringId s) { return collector::compact_string_id(s); };
      kernels_.push_back({t.start_ns, std::max<std::int64_t>(0, t.end_ns - t.start_ns), t.stream_id, id(t.op_type_id),
                          id(t.input_shapes_id), id(t.input_formats_id), id(t.output_shapes_id),
                          id(t.output_formats_id), data_.reader.string(t.op_type_id).starts_with("TransData")});
      kernel_ns_ = add_ns(kernel_ns_, kernels_.back().ns);
    });
    std::stable_sort(kernels_.begin(), kernels_.end(), [](const Kernel& a, const Kernel& b) {
      return a.stream != b.stream ? a.stream < b.stream : a.start_ns < b.start_ns;
    });
  }

  void group() {
    for (std::size_t i = 0; i < kernels_.size(); ++i) {
      const Kernel& k = kernels_[i];
      if (!k.conversion) continue;
      const std::string src(first_field(str(k.in_formats))), dst(first_field(str(k.out_formats)));
      const bool into = !base_format(dst) || base_format(src);
      const std::int32_t op = neighbour(i, into ? 1 : -1);
      const auto [it, added] = index_.try_emplace(std::make_tuple(src, dst, op, into), groups_.size());
      if (added) groups_.push_back({src, dst, op != 0 ? str(op) : std::string("-"), into ? "before" : "after"});
      Group& g = groups_[it->second];
      ++g.count;
      g.ns = add_ns(g.ns, k.ns);
      ++conversions_;
      ns_ = add_ns(ns_, k.ns);
      if (src.starts_with("FRACTAL_Z") != dst.starts_with("FRACTAL_Z")) {
        g.weight_ns = add_ns(g.weight_ns, k.ns);
      } else if (repeated(i)) {
        ++g.repeats;
        g.repeat_ns = add_ns(g.repeat_ns, k.ns);
      }
    }
    std::stable_sort(groups_.begin(), groups_.end(), [](const Group& a, const Group& b) { return a.ns > b.ns; });
  }

  std::int64_t conversions() const { return conversions_; }
  std::int64_t ns() const { return ns_; }
  std::int64_t kernel_ns() const { return kernel_ns_; }
  const std::vector<Group>& groups() const { return groups_; }

 private:
  const std::string& str(std::int32_t id) const { return data_.str(id); }

  // The op type of the nearest compute kernel on the stream in direction `step`; 0: none.
  std::int32_t neighbour(std::size_t i, int step) const {
    for (std::size_t j = i + step; j < kernels_.size() && kernels_[j].stream == kernels_[i].stream; j += step) {
      const Kernel& k = kernels_[j];
      if (!k.conversion && !str(k.op_type).starts_with("MemSet")) return k.op_type;
    }
    return 0;
  }

  // Note [Format conversions]: the same input shape and formats converted within the window, its
  // source (shape and format) written by no kernel since.
  bool repeated(std::size_t i) const {
    const Kernel& k = kernels_[i];
    const std::string_view shape = first_field(str(k.in_shapes)), format = first_field(str(k.in_formats));
    for (std::size_t back = 1; back <= kRepeatWindow && back <= i; ++back) {
      const Kernel& e = kernels_[i - back];
      if (e.stream != k.stream) return false;
      if (e.conversion && e.in_shapes == k.in_shapes && e.in_formats == k.in_formats && e.out_formats == k.out_formats)
        return true;
      if (first_field(str(e.out_shapes)) == shape && first_field(str(e.out_formats)) == format) return false;
    }
    return false;
  }

  const TraceData& data_;
  std::vector<Kernel> kernels_;
  std::vector<Group> groups_;
  std::map<std::tuple<std::string, std::string, std::int32_t, bool>, std::size_t> index_;
  std::int64_t conversions_ = 0, ns_ = 0, kernel_ns_ = 0;
};

double share_pct(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

constexpr Column kConversionColumns[] = {
    {"src_format", Unit::kText, "the format converted from (TASK.input_formats)", "from"},
    {"dst_format", Unit::kText, "the format converted to (TASK.output_formats)", "to"},
    {"position", Unit::kText, "before: into a private format for the op; after: back from its output"},
    {"op_type", Unit::kText, "the op served: the next compute kernel on the stream (before), the previous (after)",
     "op"},
    {"count", Unit::kCount, "TransData tasks"},
    {"total_ns", Unit::kNs, "their time", "time"},
    {"share_pct", Unit::kPercent, "of all kernel time", "share"},
    {"removable_ns", Unit::kNs,
     "of it, weights converted every step (FRACTAL_Z in or out) and repeated conversions of one tensor (Note "
     "[Format conversions])",
     "removable"},
    {"repeats", Unit::kCount, "conversions repeating one of the few kernels before (the same tensor again)"},
};

}  // namespace

constexpr TableSpec kFormatConversionTable{
    "format_conversions", "Format conversions (TransData) by formats and op",
    "Per source and target format and the op they serve: the TransData tasks' time, its share of kernel time and "
    "the part a layout change removes (Note [Format conversions]); most time first.",
    kConversionColumns};

namespace {

void run_format_conversion(RuleContext& c) {
  std::int64_t count = 0;
  for (const Task& t : c.data.kernels) count += c.data.str(t.op_type_id).starts_with("TransData") ? 1 : 0;
  if (count < kMinConversions) return;
  Conversions conv(c.data);
  conv.read();
  conv.group();
  std::int64_t removable = 0, weights = 0, repeats = 0;
  Advice a;
  for (const Group& g : conv.groups()) {
    c.add(kFormatConversionTable,
          {g.src, g.dst, g.side, g.op, g.count, g.ns, share_pct(g.ns, conv.kernel_ns()), g.removable(), g.repeats});
    removable = add_ns(removable, g.removable());
    weights = add_ns(weights, g.weight_ns);
    repeats = add_ns(repeats, g.repeat_ns);
    if (static_cast<int>(a.ops.size()) < c.top) a.ops.push_back(g.src + "->" + g.dst + " " + g.side + " " + g.op);
  }
  const auto pct = [&](std::int64_t ns) {
    return std::to_string(static_cast<int>(share_pct(ns, conv.kernel_ns()) + 0.5)) + " %";
  };
  a.rule = "format_conversion";
  a.title = std::to_string(conv.conversions()) + " format conversions (TransData)";
  a.detail = format_ns(static_cast<double>(conv.ns())) + ", " + pct(conv.ns()) +
             " of kernel time, converting between layouts without computing; removable " +
             format_ns(static_cast<double>(removable)) + " (" + pct(removable) + "): weights converted every step " +
             format_ns(static_cast<double>(weights)) + ", the same tensor converted again " +
             format_ns(static_cast<double>(repeats));
  a.action =
      "let tensors keep the private formats their ops use: torch_npu.npu.config.allow_internal_format = True "
      "(torch_npu's default is False: every conv and pool converts its inputs in and its outputs back), and "
      "convert the weights once (torch_npu.npu_format_cast(w, 4) for FRACTAL_Z) instead of every step";
  a.impact_ns = std::max(removable, std::int64_t{0});
  add_advice(c, {a});
}

constexpr const TableSpec* kFormatConversionTables[] = {&kFormatConversionTable, &kAdviceTable};

}  // namespace

extern const Rule kFormatConversionRule{"format_conversion", "format conversions (TransData) by formats and op",
                                        run_format_conversion, kFormatConversionTables};

}  // namespace npuscope::analyzer
