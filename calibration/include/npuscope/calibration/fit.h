// Refitting a spec's calibration constants to measured points: least squares on log time
// (Levenberg-Marquardt, Eigen), each constant searched in log space within its spec range.
#pragma once

#include <string>
#include <vector>

#include "npuscope/calibration/data_point.h"
#include "npuscope/emulator/device_spec.h"

namespace npuscope::calibration {

// The constants a fit adjusts unless told otherwise: those of Note [Calibrated cost model].
std::vector<std::string> default_fit_fields();

struct FitResult {
  emulator::DeviceSpec spec;                                 // the base spec with the fitted values
  std::vector<std::string> fitted;                           // the fields the points could tell apart (others kept)
  std::vector<std::string> unused;                           // requested fields no point depends on
  double rms_log_error_before = 0, rms_log_error_after = 0;  // sqrt(mean((ln model - ln measured)^2))
  int evaluations = 0;
};

// Every point is modelled on `base` (a CSV's points carry no preset of their own). CalibrationError
// when there are fewer points than fields to fit or a field is not a numeric spec field.
FitResult fit_spec(const emulator::DeviceSpec& base, const std::vector<DataPoint>& points,
                   const std::vector<std::string>& fields);

// The fitted spec as a spec file to pass as --spec: for a preset, {"base": <preset>, field: value...}
// of the fitted fields; for a spec file, that file's own fields with the fitted ones set over them,
// so nothing it overrode is lost. CalibrationError when the file cannot be read again.
std::string fitted_spec_json(const FitResult& fit, const std::string& spec);

}  // namespace npuscope::calibration
