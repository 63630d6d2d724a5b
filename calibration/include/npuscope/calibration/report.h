// The calibration table: each point modelled against measured, and the summary the targets are
// judged by (dev within ±20%, wall within ±30%, median absolute error at most 10%).
#pragma once

#include <string>
#include <vector>

#include "npuscope/calibration/data_point.h"
#include "npuscope/emulator/device_spec.h"

namespace npuscope::calibration {

struct Row {
  const DataPoint* point = nullptr;
  std::string spec_name;  // the spec it was modelled on
  double modelled_us = 0;
  double ratio = 0;       // modelled / measured
  double error_pct = 0;   // 100 · (ratio − 1)
  double target_pct = 0;  // ±20 for device-side points, ±30 for wall and issue points
  bool within = false;
};

struct Summary {
  int points = 0, within = 0;
  double median_abs_error_pct = 0;
  bool median_within = false;  // ≤ 10%
};

// Each point modelled on `one_spec`, or without it on its own preset (load_spec(point.preset)).
std::vector<Row> model_rows(const std::vector<DataPoint>& points, const emulator::DeviceSpec* one_spec = nullptr);
Summary summarize(const std::vector<Row>& rows);

// A terminal table; and docs/calibration.md (the published points on the presets, with the notes).
std::string rows_text(const std::vector<Row>& rows, const Summary& summary);
std::string calibration_markdown(const std::vector<Row>& rows, const Summary& summary);

}  // namespace npuscope::calibration
