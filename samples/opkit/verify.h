// Ascend C's verify_result.py criterion: an element matches when |out - golden| <= atol + rtol *
// |golden| (rtol 1e-3, atol 1e-5); the kernel passes when at most 0.1% of the elements do not.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace npuscope::samples {

struct Verdict {
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  double max_abs_err = 0;
  double error_ratio() const { return elements == 0 ? 0 : static_cast<double>(mismatches) / elements; }
  bool pass() const { return error_ratio() <= 1e-3; }
};

inline Verdict verify(const std::vector<double>& out, const std::vector<double>& golden, double rtol = 1e-3,
                      double atol = 1e-5) {
  Verdict v;
  v.elements = golden.size();
  if (out.size() != golden.size()) {
    v.mismatches = v.elements;
    return v;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(out[i] - golden[i]);
    if (!(err <= atol + rtol * std::fabs(golden[i]))) ++v.mismatches;
    if (err > v.max_abs_err || std::isnan(err)) v.max_abs_err = err;
  }
  return v;
}

}  // namespace npuscope::samples
