// See profile_report.h.
#include "npuscope/calibration/profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "npuscope/runtime_hooks/cann_op_types.h"

namespace npuscope::calibration {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

void add_word(std::string& words, const std::string& w) {
  if (w.empty() || (" " + words + " ").find(" " + w + " ") != std::string::npos) return;
  if (!words.empty()) words += ' ';
  words += w;
}

// Totals of a set of kernels: count the kernel, and its row when it was modelled.
struct Tally {
  ProfileTypeRow row;
  std::vector<double> errors;
  void add(const ProfileKernel& k, const Row* r) {
    ++row.kernels;
    row.measured_us += static_cast<double>(k.dur_ns) / 1e3;
    if (r == nullptr) return;
    ++row.modelled;
    row.within += r->within ? 1 : 0;
    row.modelled_measured_us += r->point->measured_us;
    row.modelled_us += r->modelled_us;
    errors.push_back(std::fabs(r->error_pct));
    add_word(row.emulator_op, r->point->op);
  }
  ProfileTypeRow done() {
    row.ratio = row.modelled_measured_us > 0 ? row.modelled_us / row.modelled_measured_us : 0;
    row.median_abs_error_pct = median(errors);
    return row;
  }
};

std::string us(double v) { return v >= 100 ? format("%.0f", v) : format("%.3g", v); }

std::string type_line(const ProfileTypeRow& t) {
  char line[512];
  const std::string modelled = t.modelled ? us(t.modelled_us) : "-";
  const std::string ratio = t.modelled ? format("%.2f", t.ratio) : "-";
  const std::string median = t.modelled ? format("%.0f%%", t.median_abs_error_pct) : "-";
  std::snprintf(line, sizeof line, "%-26s %-22s %7d %8d %12s %12s %7s %8s %7d\n",
                t.cann_type.empty() ? "all" : t.cann_type.c_str(), t.emulator_op.empty() ? "-" : t.emulator_op.c_str(),
                t.kernels, t.modelled, us(t.measured_us).c_str(), modelled.c_str(), ratio.c_str(), median.c_str(),
                t.within);
  return line;
}

nlohmann::json type_json(const ProfileTypeRow& t) {
  return {{"cann_type", t.cann_type},
          {"emulator_op", t.emulator_op},
          {"kernels", t.kernels},
          {"modelled", t.modelled},
          {"within_target", t.within},
          {"measured_us", t.measured_us},
          {"modelled_kernels_measured_us", t.modelled_measured_us},
          {"modelled_us", t.modelled_us},
          {"ratio", t.ratio},
          {"median_abs_error_pct", t.median_abs_error_pct}};
}

std::vector<std::string> type_cells(const ProfileTypeRow& t) {
  return {t.cann_type.empty() ? "all" : t.cann_type,
          t.emulator_op,
          std::to_string(t.kernels),
          std::to_string(t.modelled),
          std::to_string(t.within),
          format("%.3f", t.measured_us),
          format("%.3f", t.modelled_measured_us),
          format("%.3f", t.modelled_us),
          format("%.4f", t.ratio),
          format("%.2f", t.median_abs_error_pct)};
}

}  // namespace

ProfileSummary summarize_profile(const std::vector<ProfileKernel>& kernels, const ProfileMapping& mapping,
                                 const std::vector<Row>& rows, std::vector<OtherDeviceWork> other) {
  ProfileSummary s;
  s.other = std::move(other);
  s.kernels.resize(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) s.kernels[i].kernel = &kernels[i];
  for (std::size_t p = 0; p < rows.size() && p < mapping.kernels.size(); ++p)
    s.kernels[mapping.kernels[p]].row = &rows[p];
  for (const Unmodelled& u : mapping.unmodelled) s.kernels[u.kernel].reason = u.reason;

  std::map<std::string, Tally> by_type;
  Tally all;
  std::map<std::string, ProfileReason> by_reason;
  for (const ProfileKernelRow& k : s.kernels) {
    by_type[k.kernel->op_type].add(*k.kernel, k.row);
    all.add(*k.kernel, k.row);
    if (k.row != nullptr) continue;
    ProfileReason& r = by_reason[k.reason];
    r.reason = k.reason;
    ++r.kernels;
    r.measured_us += static_cast<double>(k.kernel->dur_ns) / 1e3;
    add_word(r.types, k.kernel->op_type);
  }
  for (auto& [type, tally] : by_type) {
    tally.row.cann_type = type;
    s.types.push_back(tally.done());
  }
  std::stable_sort(s.types.begin(), s.types.end(),
                   [](const ProfileTypeRow& a, const ProfileTypeRow& b) { return a.measured_us > b.measured_us; });
  for (auto& [reason, r] : by_reason) s.reasons.push_back(std::move(r));
  std::stable_sort(s.reasons.begin(), s.reasons.end(),
                   [](const ProfileReason& a, const ProfileReason& b) { return a.measured_us > b.measured_us; });
  s.overall = all.done();
  s.overall.emulator_op.clear();
  s.covered_pct = s.overall.measured_us > 0 ? 100 * s.overall.modelled_measured_us / s.overall.measured_us : 0;
  s.coverage_met = s.covered_pct >= kProfileCoverageTargetPct;
  s.median_met = s.overall.modelled > 0 && s.overall.median_abs_error_pct <= kProfileMedianTargetPct;
  s.total_met = s.overall.modelled > 0 && std::fabs(100 * (s.overall.ratio - 1)) <= kProfileTotalTargetPct;
  return s;
}

std::string profile_text(const ProfileSummary& s) {
  std::string out = "Kernels of " + s.source + " modelled on " + s.spec + " (per CANN op type, by measured time):\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-26s %-22s %7s %8s %12s %12s %7s %8s %7s\n", "CANN type", "emulator op", "kernels",
                "modelled", "measured us", "modelled us", "ratio", "med|err|", "within");
  out += line;
  for (const ProfileTypeRow& t : s.types) out += type_line(t);
  out += type_line(s.overall);
  std::snprintf(line, sizeof line,
                "\ncovered device time: %.1f%% (%.1f of %.1f us of compute kernels; target >= %.0f%%: %s)\n",
                s.covered_pct, s.overall.modelled_measured_us, s.overall.measured_us, kProfileCoverageTargetPct,
                s.coverage_met ? "met" : "MISSED");
  out += line;
  std::snprintf(line, sizeof line,
                "modelled kernels: %d of %d, %d within ±20%%; median |error| %.1f%% (target <= %.0f%%: %s); "
                "modelled / measured %.2f (target within ±%.0f%%: %s)\n",
                s.overall.modelled, s.overall.kernels, s.overall.within, s.overall.median_abs_error_pct,
                kProfileMedianTargetPct, s.median_met ? "met" : "MISSED", s.overall.ratio, kProfileTotalTargetPct,
                s.total_met ? "met" : "MISSED");
  out += line;
  if (!s.reasons.empty()) out += "\nkernels not modelled, by reason:\n";
  for (const ProfileReason& r : s.reasons) {
    std::snprintf(line, sizeof line, "  %4d kernels %10s us  %s (%s)\n", r.kernels, us(r.measured_us).c_str(),
                  r.reason.c_str(), r.types.c_str());
    out += line;
  }
  if (!s.other.empty()) out += "\nother device work (not compute kernels, not modelled here):\n";
  for (const OtherDeviceWork& w : s.other) {
    std::snprintf(line, sizeof line, "  %4lld %-18s %10s us\n", static_cast<long long>(w.count), w.what.c_str(),
                  us(static_cast<double>(w.dur_ns) / 1e3).c_str());
    out += line;
  }
  return out;
}

std::string profile_json(const ProfileSummary& s) {
  nlohmann::json j;
  j["source"] = s.source;
  j["spec"] = s.spec;
  j["overall"] = type_json(s.overall);
  j["covered_device_time_pct"] = s.covered_pct;
  j["targets"] = {{"coverage_pct", kProfileCoverageTargetPct},
                  {"median_abs_error_pct", kProfileMedianTargetPct},
                  {"total_error_pct", kProfileTotalTargetPct},
                  {"coverage_met", s.coverage_met},
                  {"median_met", s.median_met},
                  {"total_met", s.total_met}};
  j["op_types"] = nlohmann::json::array();
  for (const ProfileTypeRow& t : s.types) j["op_types"].push_back(type_json(t));
  j["unmodelled_reasons"] = nlohmann::json::array();
  for (const ProfileReason& r : s.reasons) {
    j["unmodelled_reasons"].push_back(
        {{"reason", r.reason}, {"kernels", r.kernels}, {"measured_us", r.measured_us}, {"cann_types", r.types}});
  }
  j["other_device_work"] = nlohmann::json::array();
  for (const OtherDeviceWork& w : s.other) {
    j["other_device_work"].push_back(
        {{"task_type", w.what}, {"count", w.count}, {"measured_us", static_cast<double>(w.dur_ns) / 1e3}});
  }
  j["kernels"] = nlohmann::json::array();
  for (const ProfileKernelRow& k : s.kernels) {
    nlohmann::json e = {{"cann_type", k.kernel->op_type},
                        {"name", k.kernel->name},
                        {"block_dim", k.kernel->block_dim},
                        {"start_ns", k.kernel->start_ns},
                        {"measured_us", static_cast<double>(k.kernel->dur_ns) / 1e3}};
    if (k.row != nullptr) {
      e["emulator_op"] = k.row->point->op;
      e["modelled_us"] = k.row->modelled_us;
      e["error_pct"] = k.row->error_pct;
      e["within_target"] = k.row->within;
    } else {
      e["reason"] = k.reason;
    }
    j["kernels"].push_back(std::move(e));
  }
  return j.dump(1);
}

std::vector<ProfileTable> profile_tables(const ProfileSummary& s) {
  std::vector<ProfileTable> t(3);
  t[0] = {"op_types",
          {"cann_type", "emulator_op", "kernels", "modelled", "within_target", "measured_us",
           "modelled_kernels_measured_us", "modelled_us", "ratio", "median_abs_error_pct"},
          {}};
  for (const ProfileTypeRow& r : s.types) t[0].rows.push_back(type_cells(r));
  t[0].rows.push_back(type_cells(s.overall));
  t[1] = {"kernels",
          {"cann_type", "name", "emulator_op", "block_dim", "start_ns", "measured_us", "modelled_us", "error_pct",
           "within_target"},
          {}};
  t[2] = {"unmodelled", {"cann_type", "name", "block_dim", "start_ns", "measured_us", "reason"}, {}};
  for (const ProfileKernelRow& k : s.kernels) {
    const ProfileKernel& p = *k.kernel;
    const std::string measured = format("%.3f", static_cast<double>(p.dur_ns) / 1e3);
    if (k.row != nullptr) {
      t[1].rows.push_back({p.op_type, p.name, k.row->point->op, std::to_string(p.block_dim), std::to_string(p.start_ns),
                           measured, format("%.3f", k.row->modelled_us), format("%.2f", k.row->error_pct),
                           k.row->within ? "1" : "0"});
    } else {
      t[2].rows.push_back(
          {p.op_type, p.name, std::to_string(p.block_dim), std::to_string(p.start_ns), measured, k.reason});
    }
  }
  return t;
}

std::string cann_op_types_markdown() {
  std::string out = "| CANN op type | emulator op | how its kernels are read |\n|---|---|---|\n";
  for (const CannOpType& row : kCannOpTypes) {
    out += "| " + std::string(row.cann) + " | " + std::string(row.emulator) + " | " + std::string(row.note) + " |\n";
  }
  return out;
}

}  // namespace npuscope::calibration
