// npuscope calibrate: the cost model against measured timings, and a refit of a spec to them.
//
//   npuscope calibrate                          the published points of shared/CALIBRATION.md, each on
//                                               the preset of its chip: modelled vs measured
//   npuscope calibrate --spec S                 the same points, all on spec S (a preset or file)
//   npuscope calibrate --points my.csv --spec S your own points (points_csv.h) on S
//   ... --fit [--fit-fields a,b] [--out F.json] refit S's constants to the points (least squares
//                                               on log time) and write the fitted spec file
//   ... --markdown docs/calibration.md          write the table as Markdown too
//   npuscope calibrate --from-profile SRC [--spec S] [--format text|json|csv] [-o OUT]
//                                               a real profile's kernels as the points (profile_points.h):
//                                               per CANN op type and overall, the covered device time;
//                                               --fit / --fit-fields / --out as for --points
//
// Exit status 0 whatever the errors are (they are the report); --check makes a missed target exit 1
// (a profile's targets: Note [Profile targets] in npuscope/calibration/profile_report.h).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "npuscope/calibration/fit.h"
#include "npuscope/calibration/points_csv.h"
#include "npuscope/calibration/profile_report.h"
#include "npuscope/calibration/report.h"
#include "npuscope/collector/csv.h"
#include "npuscope/emulator/device_spec.h"
#include "profile_kernels.h"
#include "report_output.h"

namespace npuscope::cli {
namespace {

namespace cal = npuscope::calibration;

constexpr const char* kUsage =
    "npuscope calibrate [--spec PRESET|FILE] [--points FILE.csv] [--fit [--fit-fields A,B] [--out FILE.json]] "
    "[--markdown FILE.md] [--check]\n"
    "       npuscope calibrate --from-profile SRC [--spec PRESET|FILE] [--format text|json|csv] [-o OUT] "
    "[--fit [--fit-fields A,B] [--out FILE.json]] [--check]";

struct CalibrateFlags {
  std::string spec, points, out, markdown, from_profile, format = "text", output;
  std::vector<std::string> fit_fields;
  bool fit = false, check = false;
};

void print_fit(const cal::FitResult& fit, const emulator::DeviceSpec& base, std::FILE* to = stdout) {
  std::fprintf(to, "\nfit (least squares on log time): rms log error %.4f -> %.4f after %d evaluations\n",
               fit.rms_log_error_before, fit.rms_log_error_after, fit.evaluations);
  for (const std::string& field : fit.fitted) {
    std::fprintf(to, "  %-24s %14.6g -> %-14.6g\n", field.c_str(), emulator::spec_field(base, field),
                 emulator::spec_field(fit.spec, field));
  }
  for (const std::string& field : fit.unused) {
    std::fprintf(to, "  %-24s %14.6g    (kept: no point depends on it)\n", field.c_str(),
                 emulator::spec_field(base, field));
  }
}

// The summary of a profile's kernels modelled on `spec`.
cal::ProfileSummary profile_summary(const ProfileKernels& read, const cal::ProfileMapping& mapping,
                                    const std::vector<cal::Row>& rows, const std::string& source,
                                    const std::string& spec) {
  cal::ProfileSummary s = cal::summarize_profile(read.kernels, mapping, rows, read.other);
  s.source = source;
  s.spec = spec;
  return s;
}

void write_profile_report(const cal::ProfileSummary& s, const CalibrateFlags& f) {
  if (f.format == "json") {
    write_json_output(f.output, [&](std::ostream& out) { out << cal::profile_json(s); });
  } else if (f.format == "csv") {
    std::filesystem::create_directories(f.output);
    for (const cal::ProfileTable& t : cal::profile_tables(s)) {
      std::string text;
      const auto add_line = [&](const std::vector<std::string>& cells) {
        for (std::size_t i = 0; i < cells.size(); ++i) {
          if (i) text += ',';
          collector::append_csv_field(text, cells[i]);
        }
        text += '\n';
      };
      add_line(t.header);
      for (const auto& row : t.rows) add_line(row);
      write_text_file((std::filesystem::path(f.output) / (t.name + ".csv")).string(), text);
    }
    std::printf("wrote op_types.csv, kernels.csv and unmodelled.csv into %s\n", f.output.c_str());
  } else if (f.output.empty()) {
    std::printf("%s", cal::profile_text(s).c_str());
  } else {
    write_text_file(f.output, cal::profile_text(s));
  }
}

// --from-profile: the kernels of a real profile as the points (Note [Kernels as data points]).
int calibrate_profile(const CalibrateFlags& f) {
  const std::string spec_name = !f.spec.empty() ? f.spec : "ascend910b";
  const emulator::DeviceSpec spec = emulator::load_spec(spec_name);
  const ProfileKernels read = read_profile_kernels(f.from_profile);
  const cal::ProfileMapping mapping = cal::map_profile(read.kernels, spec);
  std::vector<cal::Row> rows = cal::model_rows(mapping.points, &spec);
  cal::ProfileSummary summary = profile_summary(read, mapping, rows, f.from_profile, spec_name);
  if (f.fit) {
    if (f.format == "text") write_profile_report(summary, f);
    if (mapping.points.empty()) throw InputError(f.from_profile + ": no kernel could be modelled: nothing to fit");
    const std::vector<std::string> fields =
        f.fit_fields.empty() ? cal::default_fit_fields() : split_commas(f.fit_fields);
    const cal::FitResult fit = cal::fit_spec(spec, mapping.points, fields);
    print_fit(fit, spec, f.format == "text" && f.output.empty() ? stdout : stderr);
    rows = cal::model_rows(mapping.points, &fit.spec);
    summary = profile_summary(read, mapping, rows, f.from_profile, spec_name + " refitted");
    if (f.format == "text" && f.output.empty()) std::printf("\nwith the fitted constants:\n");
    if (!f.out.empty()) {
      write_text_file(f.out, cal::fitted_spec_json(fit, spec_name));
      std::fprintf(f.format == "text" ? stdout : stderr, "wrote %s (use it as --spec %s)\n", f.out.c_str(),
                   f.out.c_str());
    }
  }
  write_profile_report(summary, f);
  return f.check && !summary.met() ? 1 : 0;
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
      "check", po::bool_switch(&f.check),
      "exit 1 when a point misses its target or the median error exceeds 10% (a profile: when coverage, median or "
      "total misses its target, docs/calibration.md)")(
      "from-profile", po::value(&f.from_profile),
      "the kernels of a real profile as the points: an *_ascend_pt folder, its db, an msprof folder or a trace")(
      "format", po::value(&f.format), "with --from-profile: text (default), json or csv (csv needs -o DIR)")(
      "output,o", po::value(&f.output), "with --from-profile: write the report here (csv: a directory)");
  if (!parse_flags(argc, argv, desc, kUsage)) return 0;
  if (!f.from_profile.empty()) {
    if (!f.points.empty())
      throw UsageError(std::string("--from-profile and --points exclude each other\nusage: ") + kUsage);
    if (!f.markdown.empty()) throw UsageError(std::string("--markdown is for the published points\nusage: ") + kUsage);
  } else if (f.format != "text" || !f.output.empty()) {
    throw UsageError(std::string("--format and -o need --from-profile\nusage: ") + kUsage);
  }
  if (!f.out.empty() && !f.fit) throw UsageError(std::string("--out needs --fit\nusage: ") + kUsage);
  if (!f.fit_fields.empty() && !f.fit) throw UsageError(std::string("--fit-fields needs --fit\nusage: ") + kUsage);
  if (!f.from_profile.empty()) {
    check_report_format(f.format, f.output);
    return calibrate_profile(f);
  }

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
