// The report of `npuscope calibrate --from-profile`: a real profile's kernels modelled against
// measured, per CANN op type and overall, with the device time the modelled kernels cover and every
// kernel left out counted under its reason (Note [Kernels as data points] in profile_points.h).
//
// Note [Profile targets]
// ~~~~~~~~~~~~~~~~~~~~~~
// `--check` judges a profile by three figures, each over the compute kernels (HCCL, copies and other
// device work are not ops the cost model times): the modelled kernels cover at least 95% of the
// compute device time, their median |error| is at most 25%, and their summed modelled time is within
// ±20% of their summed measured time. Per kernel the published points' device target (±20%) counts
// the kernels within it. A profile is one workload on one chip, measured once, with kernels that
// are hard to time alone (launch-bound ones of 1-2 us); hence a looser median than the published
// points' 10%, and the coverage target: what is not modelled cannot be wrong in the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/calibration/profile_points.h"
#include "npuscope/calibration/report.h"

namespace npuscope::calibration {

inline constexpr double kProfileCoverageTargetPct = 95, kProfileMedianTargetPct = 25, kProfileTotalTargetPct = 20;

// Device work that is no compute kernel, counted apart ("HCCL", "MEMCPY": the task type).
struct OtherDeviceWork {
  std::string what;
  std::int64_t count = 0, dur_ns = 0;
};

// The kernels of one CANN op type, or of the whole profile.
struct ProfileTypeRow {
  std::string cann_type;    // "" for the overall row
  std::string emulator_op;  // the emulator ops its modelled kernels ran as ("Gemm MatMul"); "" none
  int kernels = 0, modelled = 0, within = 0;
  double measured_us = 0;           // every kernel of the type
  double modelled_measured_us = 0;  // the modelled ones' measured time
  double modelled_us = 0;
  double ratio = 0;  // modelled_us / modelled_measured_us
  double median_abs_error_pct = 0;
};

// The kernels left out for one reason.
struct ProfileReason {
  std::string reason;
  int kernels = 0;
  double measured_us = 0;
  std::string types;  // their CANN types ("MemSet"), space-separated
};

// One kernel: modelled (row set) or not (reason set).
struct ProfileKernelRow {
  const ProfileKernel* kernel = nullptr;
  const Row* row = nullptr;
  std::string reason;
};

struct ProfileSummary {
  std::string source, spec;
  std::vector<ProfileTypeRow> types;  // by measured time, largest first
  ProfileTypeRow overall;
  double covered_pct = 0;  // measured time of modelled kernels / of all compute kernels
  std::vector<ProfileReason> reasons;
  std::vector<OtherDeviceWork> other;
  std::vector<ProfileKernelRow> kernels;  // in the profile's order
  bool coverage_met = false, median_met = false, total_met = false;
  bool met() const { return coverage_met && median_met && total_met; }
};

// `rows` are model_rows(mapping.points, &spec), in mapping order; the summary points into `kernels`
// and `rows`, which must outlive it.
ProfileSummary summarize_profile(const std::vector<ProfileKernel>& kernels, const ProfileMapping& mapping,
                                 const std::vector<Row>& rows, std::vector<OtherDeviceWork> other);

std::string profile_text(const ProfileSummary& s);
std::string profile_json(const ProfileSummary& s);
// The csv tables op_types, kernels and unmodelled, as cells (the CLI writes them, one file each).
struct ProfileTable {
  std::string name;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
std::vector<ProfileTable> profile_tables(const ProfileSummary& s);

// The table of CANN op types (runtime_hooks/cann_op_types.h) as Markdown, for the docs (a test keeps
// the copy in the docs current): one line per row, with the note on how its kernels are read.
std::string cann_op_types_markdown();

}  // namespace npuscope::calibration
