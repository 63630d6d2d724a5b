// See points_csv.h. The CSV is simple (no quoted fields: shapes separate with ';' and 'x', and attrs,
// whose lists use ',', takes the rest of the line when it is the last column), so a split suffices.
#include "npuscope/calibration/points_csv.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "npuscope/calibration/errors.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::calibration {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

template <class T>
bool parse_number(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<DataPoint> read_points_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CalibrationError("cannot open the points file '" + path + "'");
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  std::vector<DataPoint> points;
  while (std::getline(in, line)) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line_no);
    std::vector<std::string> cells = split(line, ',');
    for (auto& c : cells) c = trim(c);
    if (header.empty()) {
      header = cells;
      for (const char* required : {"op", "shapes", "dtype", "measured_us"}) {
        if (std::find(header.begin(), header.end(), required) == header.end()) {
          throw CalibrationError(where +
                                 ": the header must name the columns op, shapes, dtype and measured_us "
                                 "(and optionally method, repeats, block_dim, attrs, id)");
        }
      }
      continue;
    }
    // An attrs value may hold ',' (axes=0,1): as the last column, attrs takes the rest of the line.
    if (header.back() == "attrs" && cells.size() > header.size()) {
      for (std::size_t i = header.size(); i < cells.size(); ++i) cells[header.size() - 1] += "," + cells[i];
      cells.resize(header.size());
    }
    if (cells.size() > header.size()) throw CalibrationError(where + ": more cells than the header has columns");
    DataPoint p;
    p.id = "line " + std::to_string(line_no);
    std::string shapes, dtype_name;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string& col = header[i];
      const std::string& v = cells[i];
      auto bad = [&](const std::string& what) { return CalibrationError(where + ": column " + col + ": " + what); };
      if (col == "op") {
        p.op = v;
      } else if (col == "shapes") {
        shapes = v;
      } else if (col == "dtype") {
        dtype_name = v;
      } else if (col == "measured_us") {
        if (!parse_number(v, p.measured_us) || !(p.measured_us > 0)) throw bad("'" + v + "' is not a positive number");
      } else if (col == "method") {
        if (!v.empty()) {
          try {
            p.method = parse_method(v);
          } catch (const CalibrationError& e) {
            throw bad(e.what());
          }
        }
      } else if (col == "repeats") {
        if (!v.empty() && (!parse_number(v, p.repeats) || p.repeats < 1)) throw bad("'" + v + "' is not a count >= 1");
      } else if (col == "block_dim") {
        if (!v.empty() && !parse_number(v, p.block_dim)) throw bad("'" + v + "' is not a block count");
      } else if (col == "id") {
        if (!v.empty()) p.id = v;
      } else if (col == "attrs") {
        for (const std::string& pair : split(v, ';')) {
          if (trim(pair).empty()) continue;
          const auto eq = pair.find('=');
          if (eq == std::string::npos) throw bad("'" + pair + "' is not name=value");
          const std::string name = trim(pair.substr(0, eq)), value = trim(pair.substr(eq + 1));
          std::int64_t integer = 0;
          double real = 0;
          if (parse_number(value, integer)) {
            p.attrs.set(name, integer);
          } else if (parse_number(value, real)) {
            p.attrs.set(name, real);
          } else if (value.find(',') != std::string::npos) {
            std::vector<std::int64_t> ints;
            for (const std::string& item : split(value, ',')) {
              if (!parse_number(trim(item), integer)) throw bad("'" + value + "' is not a list of integers");
              ints.push_back(integer);
            }
            p.attrs.set(name, ints);
          } else {
            try {
              p.attrs.set(name, static_cast<std::int64_t>(emulator::parse_dtype(value)));
            } catch (const emulator::EmulatorError&) {
              throw bad("'" + value + "' is not an integer, a float, a list of integers or a dtype");
            }
          }
        }
      } else {
        throw CalibrationError(where + ": unknown column '" + col + "'");
      }
    }
    emulator::DType dtype;
    try {
      dtype = emulator::parse_dtype(dtype_name);
    } catch (const emulator::EmulatorError& e) {
      throw CalibrationError(where + ": column dtype: " + e.what());
    }
    if (p.op.empty()) throw CalibrationError(where + ": column op is empty");
    for (const std::string& shape : split(shapes, ';')) {
      emulator::TensorMeta meta;
      meta.dtype = dtype;
      for (const std::string& dim : split(trim(shape), 'x')) {
        std::int64_t d = 0;
        if (!parse_number(trim(dim), d) || d < 0) {
          throw CalibrationError(where + ": column shapes: '" + shapes + "' is not shapes like 2048x4096;4096x4096");
        }
        meta.shape.push_back(d);
      }
      p.inputs.push_back(std::move(meta));
    }
    p.what = p.op + " (" + path + ")";
    p.source = path;
    points.push_back(std::move(p));
  }
  if (header.empty()) throw CalibrationError(path + ": no header line (op,shapes,dtype,measured_us,...)");
  return points;
}

}  // namespace npuscope::calibration
