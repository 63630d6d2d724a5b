// Fuzzes the mapping of a real profile's kernels to emulator ops (`calibrate --from-profile`): the
// lists come from a profile the user hands us. One kernel per line, its fields separated by '|':
//   op type|input shapes|input dtypes|input formats|output shapes|output dtypes|output formats
// (the lists as the trace stores them, "32,1,224,224,8;121,4,16,8;64;"). map_profile never throws:
// every kernel is a point the cost model accepts, or unmodelled with a reason.
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/calibration/model.h"
#include "npuscope/calibration/profile_points.h"
#include "npuscope/emulator/device_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cal = npuscope::calibration;
  static const npuscope::emulator::DeviceSpec spec = npuscope::emulator::load_spec("ascend910b");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<cal::ProfileKernel> kernels;
  while (!text.empty() && kernels.size() < 64) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    std::vector<std::string> f;
    for (std::size_t bar; (bar = line.find('|')) != std::string_view::npos; line.remove_prefix(bar + 1)) {
      f.emplace_back(line.substr(0, bar));
    }
    f.emplace_back(line);
    f.resize(7);
    kernels.push_back({.op_type = f[0],
                       .name = "k",
                       .input_shapes = f[1],
                       .input_dtypes = f[2],
                       .input_formats = f[3],
                       .output_shapes = f[4],
                       .output_dtypes = f[5],
                       .output_formats = f[6],
                       .block_dim = 8,
                       .device_id = static_cast<int>(kernels.size() % 2),  // two L2s, kernels out of order
                       .task_type = "AI_CORE",
                       .start_ns = 1000 - static_cast<std::int64_t>(kernels.size()),
                       .dur_ns = 1000});
  }
  const cal::ProfileMapping m = cal::map_profile(kernels, spec);
  if (m.points.size() + m.unmodelled.size() != kernels.size()) std::abort();  // no kernel lost
  for (const cal::DataPoint& p : m.points) {
    const double us = cal::modelled_us(spec, p);  // accepted points are modelled without throwing
    if (!std::isfinite(us) || us < 0) std::abort();
  }
  return 0;
}
