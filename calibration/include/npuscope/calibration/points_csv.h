// A user's measurements as CSV, one op per line, with a header naming the columns:
//
//   op,shapes,dtype,measured_us[,method][,repeats][,block_dim][,id][,attrs]   (any order)
//   MatMul,2048x4096;4096x4096,f16,268.1,dev
//   Cast,1024x1024,f32,4.2,dev,,,,to=f16
//
// shapes: the inputs separated by ';', dims by 'x'; dtype applies to every input; method dev (the
// default), wall, issue or h2d (data_point.h); attrs: name=value pairs separated by ';', a value an
// integer, a float, integers separated by ',' (then attrs must be the last column, which takes the
// rest of the line) or (for Cast's `to`) a dtype name.
#pragma once

#include <string>
#include <vector>

#include "npuscope/calibration/data_point.h"

namespace npuscope::calibration {

// CalibrationError naming the file, line and column for anything it cannot read.
std::vector<DataPoint> read_points_csv(const std::string& path);

}  // namespace npuscope::calibration
