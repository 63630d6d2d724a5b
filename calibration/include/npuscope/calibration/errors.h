// What calibrate reports to its caller: a bad CSV line, an unknown op or preset, a fit that cannot run.
#pragma once

#include <stdexcept>

namespace npuscope::calibration {

class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace npuscope::calibration
