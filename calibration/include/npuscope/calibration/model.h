// The emulator's time for a data point: the op's own cost function (the one its kernel registers)
// through the cost model, and for wall and issue points the host's side as the emulator charges it
// (device.cpp, dispatch.cpp): op_issue_ns + host_launch_ns per eager op, launch_latency_ns before a
// task may start, tasks of one stream back to back, sync_latency_ns after the last.
#pragma once

#include "npuscope/calibration/data_point.h"
#include "npuscope/emulator/device_spec.h"

namespace npuscope::calibration {

// Microseconds, unrounded (the fit needs a smooth function). CalibrationError for an unknown op or
// inputs the op refuses, naming the point.
double modelled_us(const emulator::DeviceSpec& spec, const DataPoint& point);

}  // namespace npuscope::calibration
