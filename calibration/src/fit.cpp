// See fit.h.
//
// Note [Fitting in log space]
// Times span five decades (1 us kernels to 8 ms matmuls), so the residual of a point is
// ln(modelled) - ln(measured): a 10% miss weighs the same on either. The constants span as much (a
// fraction, nanoseconds, bytes per second) and must stay positive, so the solver moves x = ln(value),
// and the model sees the value clamped into the field's spec range. A constant no point depends on
// (cube_f32_rate without an f32 matmul) would make the problem singular: it is found by moving it 10%
// and seeing no residual change, and kept as it was. Eigen's Levenberg-Marquardt with forward
// differences does the rest; the model is piecewise smooth in every constant it fits (waves and tiles
// depend on shapes only).
#include "npuscope/calibration/fit.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

#include "npuscope/calibration/errors.h"
#include "npuscope/calibration/model.h"

namespace npuscope::calibration {
namespace {

using emulator::DeviceSpec;

struct Problem {
  DeviceSpec base;
  const std::vector<DataPoint>* points;
  std::vector<std::string> fields;

  DeviceSpec with(const Eigen::VectorXd& x) const {
    DeviceSpec s = base;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const emulator::SpecFieldInfo info = emulator::spec_field_info(fields[i]);
      emulator::set_spec_field(s, fields[i], std::clamp(std::exp(x[static_cast<Eigen::Index>(i)]), info.min, info.max));
    }
    return s;
  }
  void residuals(const DeviceSpec& s, Eigen::VectorXd& r) const {
    for (std::size_t i = 0; i < points->size(); ++i) {
      const DataPoint& p = (*points)[i];
      r[static_cast<Eigen::Index>(i)] = std::log(std::max(modelled_us(s, p), 1e-9)) - std::log(p.measured_us);
    }
  }
};

// The functor Eigen's solver asks for: n unknowns, m residuals.
struct LogResiduals {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;

  const Problem* problem;
  int* evaluations;
  int inputs() const { return static_cast<int>(problem->fields.size()); }
  int values() const { return static_cast<int>(problem->points->size()); }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& r) const {
    ++*evaluations;
    problem->residuals(problem->with(x), r);
    return 0;
  }
};

double rms(const Eigen::VectorXd& r) {
  return r.size() ? std::sqrt(r.squaredNorm() / static_cast<double>(r.size())) : 0;
}

// Where the search starts for a field at 0 (ln 0 is no start): a small value of its kind.
double start_value(const std::string& field, double value) {
  if (value > 0) return value;
  if (field.ends_with("_ns")) return 100;
  if (field.ends_with("bandwidth")) return 1e9;
  return 0.01;
}

}  // namespace

std::vector<std::string> default_fit_fields() {
  return {"cube_efficiency",      "cube_tile_fill_ns",        "cube_f32_rate",
          "cube_hf32_rate",       "cube_core_read_bandwidth", "cube_f32_read_factor",
          "cube_l2_miss_penalty", "vector_efficiency",        "vector_stage_ns",
          "reduce_cross_core_ns", "memory_efficiency",        "memory_write_efficiency",
          "l2_bandwidth",         "kernel_overhead_ns",       "multi_core_launch_ns",
          "op_issue_ns",          "sync_latency_ns",          "host_link_bandwidth",
          "transdata_fixed_ns",   "transdata_burst_bytes"};
}

FitResult fit_spec(const DeviceSpec& base, const std::vector<DataPoint>& points,
                   const std::vector<std::string>& fields) {
  for (const DataPoint& p : points) {
    if (!(p.measured_us > 0)) throw CalibrationError("point " + p.id + ": the measured time must be positive");
  }
  FitResult result;
  result.spec = base;
  Problem problem{base, &points, {}};
  const auto m = static_cast<Eigen::Index>(points.size());
  Eigen::VectorXd before(m), moved(m);
  problem.residuals(base, before);
  result.rms_log_error_before = result.rms_log_error_after = rms(before);

  // Which requested fields the points depend on (Note [Fitting in log space]): does moving the
  // field 10% up or down change any residual?
  for (const std::string& field : fields) {
    const emulator::SpecFieldInfo info = emulator::spec_field_info(field);  // SpecError for a bad name
    const double v = start_value(field, emulator::spec_field(base, field));
    const auto moves = [&](double value) {
      DeviceSpec probe = base;
      emulator::set_spec_field(probe, field, std::clamp(value, info.min, info.max));
      problem.residuals(probe, moved);
      return (moved - before).cwiseAbs().maxCoeff() > 1e-9;
    };
    (moves(v * 1.1) || moves(v / 1.1) ? problem.fields : result.unused).push_back(field);
  }
  if (problem.fields.empty()) return result;
  if (points.size() < problem.fields.size()) {
    throw CalibrationError(std::to_string(points.size()) + " points cannot fit " +
                           std::to_string(problem.fields.size()) +
                           " constants: measure more ops or name fewer constants (--fit-fields)");
  }

  Eigen::VectorXd x(static_cast<Eigen::Index>(problem.fields.size()));
  for (std::size_t i = 0; i < problem.fields.size(); ++i) {
    x[static_cast<Eigen::Index>(i)] =
        std::log(start_value(problem.fields[i], emulator::spec_field(base, problem.fields[i])));
  }
  LogResiduals functor{&problem, &result.evaluations};
  // Steps of ~0.3% of ln(value): large enough to move an integral field of nanoseconds.
  Eigen::NumericalDiff<LogResiduals> diff(functor, 1e-5);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<LogResiduals>> solver(diff);
  solver.parameters.maxfev = 4000;
  solver.parameters.xtol = 1e-10;
  solver.parameters.ftol = 1e-12;
  solver.minimize(x);

  result.spec = problem.with(x);
  result.fitted = problem.fields;
  Eigen::VectorXd after(m);
  problem.residuals(result.spec, after);
  result.rms_log_error_after = rms(after);
  return result;
}

std::string fitted_spec_json(const FitResult& fit, const std::string& spec) {
  nlohmann::ordered_json doc;
  if (emulator::is_preset(spec)) {
    doc["base"] = spec;
  } else {
    std::ifstream in(spec);
    try {
      doc = nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw CalibrationError("cannot read the spec file '" + spec + "' again to refit it: " + e.what());
    }
  }
  if (!doc.contains("description")) doc["description"] = "refit by npuscope calibrate from " + spec;
  for (const std::string& field : fit.fitted) {
    const double v = emulator::spec_field(fit.spec, field);
    if (emulator::spec_field_info(field).integral) {
      doc[field] = static_cast<std::uint64_t>(std::llround(v));
    } else {
      doc[field] = v;
    }
  }
  return doc.dump(2) + "\n";
}

}  // namespace npuscope::calibration
