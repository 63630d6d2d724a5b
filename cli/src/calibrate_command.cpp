// npuscope calibrate: the cost model against measured timings, and a refit of a spec to them.
//
//   npuscope calibrate                          the published points of shared/CALIBRATION.md, each on
//                                               the preset of its chip: modelled vs measured
//   npuscope calibrate --spec S                 the same points, all on spec S (a preset or file)
//   npuscope calibrate --points my.csv --spec S your own points (points_csv.h) on S
//   ... --fit [--fit-fields a,b] [--out F.json] refit S's constants to the points (least squares
//                                               on log time) and write the fitted spec file
//   ... --markdown docs/calibration.md          write the table as Markdown too
//
// Exit status 0 whatever the errors are (they are the report); --check makes a missed target exit 1.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "npuscope/calibration/fit.h"
#include "npuscope/calibration/points_csv.h"
#include "npuscope/calibration/report.h"
#include "npuscope/emulator/device_spec.h"

namespace npuscope::cli {
namespace {

namespace cal = npuscope::calibration;

constexpr const char* kUsage =
    "npuscope calibrate [--spec PRESET|FILE] [--points FILE.csv] [--fit [--fit-fields A,B] [--out FILE.json]] "
    "[--markdown FILE.md] [--check]";

struct CalibrateFlags {
  std::string spec, points, out, markdown;
  std::vector<std::string> fit_fields;
  bool fit = false, check = false;
};

void print_fit(const cal::FitResult& fit, const emulator::DeviceSpec& base) {
  std::printf("\nfit (least squares on log time): rms log error %.4f -> %.4f after %d evaluations\n",
              fit.rms_log_error_before, fit.rms_log_error_after, fit.evaluations);
  for (const std::string& field : fit.fitted) {
    std::printf("  %-24s %14.6g -> %-14.6g\n", field.c_str(), emulator::spec_field(base, field),
                emulator::spec_field(fit.spec, field));
  }
  for (const std::string& field : fit.unused) {
    std::printf("  %-24s %14.6g    (kept: no point depends on it)\n", field.c_str(), emulator::spec_field(base, field));
  }
}

}  // namespace

int calibrate_command(int argc, char** argv) {
  CalibrateFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&f.spec),
      "model every point on this preset or spec file (default: each published point on its chip's preset; "
      "ascend910b for --points)")("points", po::value(&f.points),
                                  "your measurements: CSV with op,shapes,dtype,measured_us[,method][,repeats]"
                                  "[,block_dim][,id][,attrs] (see README, \"Calibrating the cost model\")")(
      "fit", po::bool_switch(&f.fit), "refit the spec's calibration constants to the points")(
      "fit-fields", po::value(&f.fit_fields)->composing(),
      "the constants to refit, separated by ',' (default: the calibration constants of docs/calibration.md)")(
      "out", po::value(&f.out), "with --fit: write the fitted spec file here (use it as --spec / NPUSCOPE_SPEC)")(
      "markdown", po::value(&f.markdown), "also write the table as Markdown (docs/calibration.md is made this way)")(
      "check", po::bool_switch(&f.check), "exit 1 when a point misses its target or the median error exceeds 10%");
  if (!parse_flags(argc, argv, desc, kUsage)) return 0;
  if (!f.out.empty() && !f.fit) throw UsageError(std::string("--out needs --fit\nusage: ") + kUsage);
  if (!f.fit_fields.empty() && !f.fit) throw UsageError(std::string("--fit-fields needs --fit\nusage: ") + kUsage);

  const std::vector<cal::DataPoint> points =
      f.points.empty() ? cal::published_points() : cal::read_points_csv(f.points);
  if (points.empty()) throw InputError(f.points + ": no data points");
  const std::string spec_name = !f.spec.empty() ? f.spec : "ascend910b";
  const bool one_spec = !f.spec.empty() || !f.points.empty();
  const emulator::DeviceSpec spec = emulator::load_spec(spec_name);

  std::vector<cal::Row> rows = cal::model_rows(points, one_spec ? &spec : nullptr);
  cal::Summary summary = cal::summarize(rows);
  std::printf("%s", cal::rows_text(rows, summary).c_str());

  if (f.fit) {
    const std::vector<std::string> fields =
        f.fit_fields.empty() ? cal::default_fit_fields() : split_commas(f.fit_fields);
    const cal::FitResult fit = cal::fit_spec(spec, points, fields);
    print_fit(fit, spec);
    rows = cal::model_rows(points, &fit.spec);
    summary = cal::summarize(rows);
    std::printf("\nwith the fitted constants:\n%s", cal::rows_text(rows, summary).c_str());
    if (!f.out.empty()) {
      write_text_file(f.out, cal::fitted_spec_json(fit, spec_name));
      std::printf("wrote %s (use it as --spec %s)\n", f.out.c_str(), f.out.c_str());
    }
  }
  if (!f.markdown.empty()) {
    write_text_file(f.markdown, cal::calibration_markdown(rows, summary));
    std::printf("wrote %s\n", f.markdown.c_str());
  }
  if (f.check && (summary.within < summary.points || !summary.median_within)) return 1;
  return 0;
}

}  // namespace npuscope::cli
