// Times as the viewer prints them: durations with a unit that fits ("340 ns", "1.25 ms"), and the
// time ruler's tick spacing and labels, whose unit adapts to the zoom.
#pragma once

#include <cstdint>
#include <string>

namespace npuscope::viewer {

// "0 ns", "999 ns", "1.50 us", "12.3 ms", "2.00 s": three significant digits from 1 us up.
std::string format_duration(std::int64_t ns);

// The ruler's tick spacing: the smallest 1, 2 or 5 x 10^k ns that puts ticks at least `min_px`
// pixels apart at `ns_per_px`.
std::int64_t ruler_step(double ns_per_px, double min_px = 90);

// A tick label: `t_ns` (relative to the trace's start) in the unit of `step_ns`, with as many
// decimals as the step needs ("1.5 ms" for a 500 us step, "1500 ns" for a 100 ns step).
std::string format_tick(std::int64_t t_ns, std::int64_t step_ns);

}  // namespace npuscope::viewer
