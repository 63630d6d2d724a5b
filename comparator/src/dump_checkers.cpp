// msprobe's checkers (indicator_analysis/algorithm.py) and tensor-mode cells (npy_compare.py).
#include "dump_checkers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "dump_values.h"

namespace npuscope::comparator {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// format_value: float('{:.12f}'.format(v)).
double twelve_decimals(double v) {
  if (!std::isfinite(v)) return v;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.12f", v);
  return std::strtod(buf, nullptr);
}

bool shapes_differ(const DumpRow& r) {
  return r.npu != nullptr && r.bench != nullptr && r.npu->is_tensor && r.bench->is_tensor &&
         r.npu->shape != r.bench->shape;
}

using RowFacts = EntryChecker::RowFacts;

bool inf_or_nan(const StatCell& c) {
  return c.kind == StatKind::kNan || c.kind == StatKind::kInf || c.kind == StatKind::kNegInf;
}

void flag(DumpRow& row, DumpResult level, const char* message) {
  if (level > row.result) row.result = level;
  row.messages.emplace_back(message);
}

enum class Ignore { kNone, kInputs, kAll };

// get_api_ignore_info: the API name of the entry's first input row.
Ignore ignore_of(std::string_view entry_name, const std::vector<RowFacts*>& inputs) {
  if (inputs.empty()) return Ignore::kNone;
  const std::size_t dot = entry_name.find('.');
  if (dot == std::string_view::npos) return Ignore::kNone;
  std::string_view api = entry_name.substr(dot + 1);
  api = api.substr(0, api.find('.'));
  for (const char* name : {"empty", "empty_like", "numpy", "to", "__setitem__", "empty_with_format",
                           "new_empty_strided", "new_empty", "empty_strided"}) {
    if (api == name) return Ignore::kAll;
  }
  for (const char* name : {"_reduce_scatter_base", "_all_gather_base", "all_to_all_single", "batch_isend_irecv"}) {
    if (api == name) return Ignore::kInputs;
  }
  return Ignore::kNone;
}

// get_min_or_max_value over rows: NaN values (cells that are not numbers) are skipped.
template <class Get>
double extreme(const std::vector<RowFacts*>& rows, bool is_min, Get get) {
  double v = is_min ? 1.0 : 0.0;
  for (const RowFacts* f : rows) {
    const double x = get(*f);
    if (std::isnan(x)) continue;
    v = is_min ? std::min(v, x) : std::max(v, x);
  }
  return v;
}

struct Groups {
  const std::vector<RowFacts*>& inputs;
  const std::vector<RowFacts*>& outputs;
  const std::vector<RowFacts*>& checked;  // get_data_list_by_ignore_info
  Ignore ignore = Ignore::kNone;
};

// Whether two values' shapes differ as msprobe's shape columns (a scalar's without writing it).
bool shapes_differ_as_text(const collector::DumpValue& n, const collector::DumpValue& b) {
  if (n.is_tensor && b.is_tensor) return n.shape != b.shape;
  // Of one type (both None, or neither) and neither a torch.Size nor a slice: both "[]" or both "None".
  if (!n.is_tensor && !b.is_tensor && n.type == b.type && n.type != "torch.Size" && n.type != "slice") return false;
  return msprobe_shape(n) != msprobe_shape(b);
}

void inf_nan(const Groups& g) {
  for (RowFacts* f : g.checked) {
    if (inf_or_nan(f->bench[0]) || inf_or_nan(f->bench[1])) continue;
    if (inf_or_nan(f->npu[0]) || inf_or_nan(f->npu[1]))
      flag(*f->row, DumpResult::kError, "error: There is nan/inf/-inf in the maximum or minimum value of NPU.");
  }
}

void relative_err(const Groups& g) {
  if (g.ignore != Ignore::kNone) return;
  const double in = std::abs(extreme(g.inputs, false, [](const RowFacts& f) { return f.norm.share_or_nan(); }));
  if (!(in < 0.1)) return;
  for (RowFacts* f : g.outputs) {
    if (std::abs(f->norm.share_for_threshold()) > 0.5)
      flag(*f->row, DumpResult::kError, "error: The NormRelativeErr of output is greater than 0.5.");
  }
}

void relative_warn(const Groups& g) {
  if (g.ignore != Ignore::kNone || g.outputs.empty()) return;
  const auto share = [](const RowFacts& f) { return f.norm.share_or_nan(); };
  const double in = std::abs(extreme(g.inputs, false, share)), out = std::abs(extreme(g.outputs, false, share));
  if ((in == 0 && out > 0.1) || (in != 0 && out / in > 10))
    flag(*g.outputs.front()->row, DumpResult::kWarning,
         "warning: The norm relative error of output is 10 times that of input.");
}

void one_thousandth(const Groups& g) {
  if (g.ignore != Ignore::kNone || g.outputs.empty()) return;
  const auto ratio = [](const RowFacts& f) { return f.metrics.one_thousandth; };
  if (extreme(g.inputs, true, ratio) > 0.9 && extreme(g.outputs, true, ratio) < 0.1)
    flag(*g.outputs.front()->row, DumpResult::kError,
         "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.");
}

void cosine_warn(const Groups& g) {
  if (g.ignore != Ignore::kNone || g.outputs.empty()) return;
  const auto cosine = [](const RowFacts& f) { return f.metrics.cosine; };
  const double in = extreme(g.inputs, true, cosine), out = extreme(g.outputs, true, cosine);
  if (in > 0.9 && in - out > 0.1)
    flag(*g.outputs.front()->row, DumpResult::kWarning,
         "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1");
}

void requires_grad(const Groups& g) {
  for (RowFacts* f : g.checked) {
    const DumpRow& r = *f->row;
    if (r.bench == nullptr || r.npu->requires_grad < 0 || r.bench->requires_grad < 0) continue;
    if (r.npu->requires_grad != r.bench->requires_grad)
      flag(*f->row, DumpResult::kError, "error: The Required_Grad of NPU and Bench are inconsistent");
  }
}

void parameters(const Groups& g) {
  if (g.ignore != Ignore::kNone) return;
  for (RowFacts* f : g.inputs) {
    const DumpRow& r = *f->row;
    if (r.bench == nullptr || r.npu->is_tensor || r.bench->is_tensor) continue;
    const std::string_view n = msprobe_dtype(*r.npu), b = msprobe_dtype(*r.bench);
    if (n.find("class") == std::string::npos || b.find("class") == std::string::npos) continue;
    if (is_null_value(*r.npu) || r.npu->type == "torch.Size" || r.npu->type == "slice") continue;  // shape not []
    const StatCell &nm = f->npu[0], &bm = f->bench[0];
    const bool same =
        nm.kind == StatKind::kNum && bm.kind == StatKind::kNum ? nm.num == bm.num : nm.text() == bm.text();
    if (!same) flag(*f->row, DumpResult::kError, "error: The scalar parameters of NPU and Bench are inconsistent.");
  }
}

void dtype(const Groups& g, std::string_view bench_entry) {
  if (bench_entry.find("qkv") != std::string_view::npos || bench_entry.find("gate_up") != std::string_view::npos)
    return;
  for (RowFacts* f : g.checked) {
    const DumpRow& r = *f->row;
    if (r.bench == nullptr) continue;
    const bool differ = r.npu->is_tensor && r.bench->is_tensor ? r.npu->dtype != r.bench->dtype
                                                               : msprobe_dtype(*r.npu) != msprobe_dtype(*r.bench);
    if (differ) flag(*f->row, DumpResult::kError, "error: The dtype of NPU and Bench are inconsistent.");
  }
}

void shape(const Groups& g) {
  for (RowFacts* f : g.checked) {
    const DumpRow& r = *f->row;
    if (r.bench == nullptr) continue;
    if (shapes_differ_as_text(*r.npu, *r.bench))
      flag(*f->row, DumpResult::kError, "error: The shape of NPU and Bench are inconsistent.");
  }
}

void crc32(const Groups& g) {
  for (RowFacts* f : g.checked) {
    const DumpRow& r = *f->row;
    const std::string n = msprobe_md5(*r.npu), b = r.bench != nullptr ? msprobe_md5(*r.bench) : "N/A";
    if (n == b) continue;
    const bool unmatched = r.bench == nullptr || n.empty() || b.empty() || n == "Nan" || b == "Nan";
    if (unmatched) {
      flag(*f->row, DumpResult::kWarning, "warning: The parameter of NPU does not match the bench.");
    } else {
      flag(*f->row, DumpResult::kError, "error: The CRC-32 value of NPU differs from that of the bench.");
    }
  }
}

}  // namespace

MetricCells metric_cells(const DumpRow& row) {
  MetricCells c{{}, "", kNaN, kNaN};
  const auto fill = [&](const char* text) { c.text.fill(text); };
  if (!row.compared) {
    fill(shapes_differ(row) ? "shape unmatched" : "unsupported");
    return c;
  }
  const TensorMetrics& m = row.metrics;
  if (!m.comparable) {
    fill(m.nan_inf_mismatches > 0 ? "N/A" : "unsupported");
    return c;
  }
  const bool zero_d = row.npu->shape.empty();
  const auto number = [](double v) { return python_float(v); };
  c.text[2] = number(twelve_decimals(m.max_abs_err));
  c.text[3] = number(twelve_decimals(m.max_rel_err));
  if (zero_d) {
    c.text[0] = c.text[1] = c.text[4] = c.text[5] = "unsupported";
    c.message +=
        "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
        "'Five Thousandths Err Ratio'. ";
    return c;
  }
  std::int64_t numel = 1;
  for (const std::int64_t d : row.npu->shape) numel *= d;
  if (numel == 1) {
    c.text[0] = "unsupported";
    c.message += "This is a 1-d tensor of length 1.";
  } else if (std::isnan(m.cosine)) {
    c.text[0] = "Nan";
    const bool npu_zero = row.npu->has_stat(collector::DumpValue::kHasNorm) && row.npu->norm == 0;
    c.message += std::string("Cannot compare by Cosine Similarity, All the data is Zero in ") +
                 (npu_zero ? "npu" : "Bench") + " dump data.";
  } else {
    double cos = twelve_decimals(m.cosine);
    if (cos > 0.9999) cos = std::round(cos * 1e6) / 1e6;
    c.text[0] = number(cos);
    c.cosine = cos;
  }
  c.text[1] = number(m.euclidean);
  c.one_thousandth = twelve_decimals(m.one_thousandth_ratio);
  c.text[4] = number(c.one_thousandth);
  c.text[5] = number(twelve_decimals(m.five_thousandth_ratio));
  return c;
}

std::string accuracy_reached(const MetricCells& cells) {
  const std::string &cos = cells.text[0], &err = cells.text[2];
  if (cos == "shape unmatched") return "Unmatched";
  if (cos == "N/A" || err == "N/A") return "No";
  char* end = nullptr;
  const double c = cos == "Nan" ? kNaN : std::strtod(cos.c_str(), &end);
  if (cos != "Nan" && (end == cos.c_str() || *end != '\0')) return "None";
  const double e = std::strtod(err.c_str(), &end);
  if (end == err.c_str() || *end != '\0') return "None";
  if (c < 0.99 && e > 0.001) return "No";
  if (c < 0.9 || e > 1) return "No";
  return "Yes";
}

void EntryChecker::check(DumpMode mode, std::string_view entry_name, std::string_view bench_entry,
                         std::span<DumpRow> rows) {
  if (facts_.size() < rows.size()) facts_.resize(rows.size());
  inputs_.clear(), outputs_.clear(), checked_.clear();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    RowFacts& f = facts_[i];
    DumpRow& r = rows[i];
    f.row = &r;
    f.npu = stat_cells(*r.npu);
    f.bench =
        r.bench != nullptr ? stat_cells(*r.bench) : std::array<StatCell, 4>{na_cell(), na_cell(), na_cell(), na_cell()};
    f.norm = stat_diff(f.npu[3], f.bench[3]);
    if (mode == DumpMode::kTensor) f.metrics = metric_cells(r);
    (r.output ? outputs_ : inputs_).push_back(&f);
  }
  Groups g{inputs_, outputs_, checked_};
  g.ignore = ignore_of(entry_name, inputs_);
  if (g.ignore != Ignore::kAll) {
    if (g.ignore == Ignore::kNone) checked_ = inputs_;
    checked_.insert(checked_.end(), outputs_.begin(), outputs_.end());
  }
  switch (mode) {
    case DumpMode::kStatistics:
      inf_nan(g), relative_err(g), requires_grad(g), parameters(g), dtype(g, bench_entry), shape(g), relative_warn(g);
      break;
    case DumpMode::kTensor:
      inf_nan(g), one_thousandth(g), requires_grad(g), parameters(g), dtype(g, bench_entry), shape(g), cosine_warn(g);
      break;
    case DumpMode::kMd5: crc32(g); break;
  }
}

}  // namespace npuscope::comparator
