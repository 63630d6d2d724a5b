#include "npuscope/viewer/time_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace npuscope::viewer {
namespace {

struct Unit {
  std::int64_t ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};

}  // namespace

std::string format_duration(std::int64_t ns) {
  const std::int64_t a = std::llabs(ns);
  char buf[48];
  if (a < 1000) {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
    return buf;
  }
  for (const Unit& u : kUnits) {
    if (a < u.ns) continue;
    const double v = static_cast<double>(ns) / static_cast<double>(u.ns);
    const double av = std::fabs(v);
    std::snprintf(buf, sizeof buf, av >= 100 ? "%.0f %s" : av >= 10 ? "%.1f %s" : "%.2f %s", v, u.name);
    return buf;
  }
  return "?";
}

std::int64_t ruler_step(double ns_per_px, double min_px) {
  const double want = std::max(1.0, ns_per_px * min_px);
  std::int64_t decade = 1;
  while (true) {
    for (const std::int64_t m : {1, 2, 5}) {
      if (static_cast<double>(m * decade) >= want) return m * decade;
    }
    if (decade > INT64_MAX / 100) return decade * 10;
    decade *= 10;
  }
}

std::string format_tick(std::int64_t t_ns, std::int64_t step_ns) {
  // The largest unit at most ten steps long; decimals enough to tell the ticks apart.
  const Unit* unit = &kUnits[3];
  for (const Unit& u : kUnits) {
    if (u.ns <= step_ns * 10) {
      unit = &u;
      break;
    }
  }
  int decimals = 0;
  for (std::int64_t s = unit->ns; s > step_ns && s % 10 == 0 && decimals < 9; s /= 10) ++decimals;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, static_cast<double>(t_ns) / static_cast<double>(unit->ns),
                unit->name);
  return buf;
}

}  // namespace npuscope::viewer
