// msprobe's view of one dump value (Note [msprobe's statistics cells] in dump_values.h).
#include "dump_values.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "dump_special_values.h"

namespace npuscope::comparator {
namespace {

using collector::DumpValue;

bool is_json_string(std::string_view v) { return v.size() >= 2 && v.front() == '"' && v.back() == '"'; }

bool parse_number(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool looks_integral(std::string_view json_number) { return json_number.find_first_of(".eE") == std::string_view::npos; }

// torch.int64, torch.uint8, torch.bool, Int32 ...: dump.json writes their statistics as ints.
bool integral_dtype(const DumpValue& v) {
  return v.dtype.find("int") != std::string::npos || v.dtype.find("Int") != std::string::npos ||
         v.dtype.find("bool") != std::string::npos || v.dtype.find("Bool") != std::string::npos;
}

StatCell number_cell(double v, bool integral) {
  StatCell c;
  c.num = v;
  c.kind = std::isnan(v)   ? StatKind::kNan
           : std::isinf(v) ? (v > 0 ? StatKind::kInf : StatKind::kNegInf)
                           : StatKind::kNum;
  c.integral = integral && c.kind == StatKind::kNum;
  return c;
}

StatCell other_cell(std::string text, StatKind kind = StatKind::kOther) {
  StatCell c;
  c.kind = kind;
  c.other = std::move(text);
  return c;
}

bool names_device(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return text.find("npu") != std::string::npos || text.find("cpu") != std::string::npos ||
         text.find("cuda") != std::string::npos;
}

// A string argument's statistic, classified as CalcStatsDiff.classify does.
StatCell string_cell(std::string text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  double v = 0;
  if (lower == "nan") return number_cell(std::numeric_limits<double>::quiet_NaN(), false);
  if (lower == "inf" || lower == "-inf") return number_cell(lower == "inf" ? INFINITY : -INFINITY, false);
  if (parse_number(text, v)) return number_cell(v, looks_integral(text));
  if (text == "N/A") return other_cell(std::move(text), StatKind::kNa);
  const bool device = names_device(text);
  return other_cell(std::move(text), device ? StatKind::kDevice : StatKind::kOther);
}

// A non-tensor argument's value as its statistic (gen_op_item: the value itself).
StatCell value_cell(const DumpValue& v) {
  const std::string_view json = v.value;
  double n = 0;
  if (json.empty() || json == "null") return other_cell("None");
  if (json == "true" || json == "false") return other_cell(json == "true" ? "True" : "False");
  if (is_json_string(json)) return string_cell(python_str_of_json(json));
  if (parse_number(json, n)) return number_cell(n, looks_integral(json));
  return other_cell(std::string(json));
}

// Python's str of the value (for md5 of non-tensors and string statistics).
std::string python_str(const DumpValue& v) { return v.value.empty() ? "None" : python_str_of_json(v.value); }

// zlib's CRC-32 of the text: what msprobe's md5 cell holds for a non-tensor (zlib.crc32 of its str),
// the hash the injection library takes of a tensor's bytes (tensor_capture.h).
std::uint32_t text_crc32(std::string_view text) {
  return static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

// cross_dtype_mapping of msprobe's check.py: MindSpore's and PyTorch's dtype names by kind.
std::string_view dtype_kind(std::string_view dtype) {
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"Int8", "int"},           {"torch.int8", "int"},
      {"UInt8", "int"},          {"torch.uint8", "int"},
      {"Int16", "int"},          {"torch.int16", "int"},
      {"UInt16", "int"},         {"torch.uint16", "int"},
      {"Int32", "int"},          {"torch.int32", "int"},
      {"UInt32", "int"},         {"torch.uint32", "int"},
      {"Int64", "int"},          {"torch.int64", "int"},
      {"UInt64", "int"},         {"torch.uint64", "int"},
      {"Float16", "float"},      {"torch.float16", "float"},
      {"Float32", "float"},      {"torch.float32", "float"},
      {"Float64", "float"},      {"torch.float64", "float"},
      {"BFloat16", "float"},     {"torch.bfloat16", "float"},
      {"Bool", "bool"},          {"torch.bool", "bool"},
      {"Complex64", "complex"},  {"torch.complex64", "complex"},
      {"Complex128", "complex"}, {"torch.complex128", "complex"},
  };
  for (const auto& [name, kind] : kKinds) {
    if (name == dtype) return kind;
  }
  return dtype;
}

bool in_float_group(std::string_view dtype) { return dtype == "Float16" || dtype == "Float32" || dtype == "BFloat16"; }
bool in_torch_float_group(std::string_view dtype) {
  return dtype == "torch.float16" || dtype == "torch.float32" || dtype == "torch.bfloat16";
}

// npu.text() == bench.text(), without writing them.
bool same_text(const StatCell& a, const StatCell& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case StatKind::kNum: return a.num == b.num && a.integral == b.integral;
    case StatKind::kNan:
    case StatKind::kInf:
    case StatKind::kNegInf: return true;
    default: return a.text() == b.text();
  }
}

}  // namespace

std::string python_float(double v) {
  std::string out;
  append_python_float(out, v);
  return out;
}

void append_python_float(std::string& text, double v) {
  if (std::isnan(v)) return text.append("nan"), void();
  if (std::isinf(v)) return text.append(v > 0 ? "inf" : "-inf"), void();
  char sci[40];
  const auto r = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);  // shortest round trip
  // "-d.ddde-XX": the digits without the point, and the exponent.
  const char* p = sci;
  char out[48];
  std::size_t n = 0;
  if (*p == '-') out[n++] = *p++;
  char digits[24];
  std::size_t count = 0;
  for (; p < r.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[count++] = *p;
  }
  int exp = 0;
  std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), r.ptr, exp);
  if (exp >= -4 && exp < 16) {  // repr's fixed notation
    if (exp < 0) {
      out[n++] = '0', out[n++] = '.';
      for (int i = -1; i > exp; --i) out[n++] = '0';
      for (std::size_t i = 0; i < count; ++i) out[n++] = digits[i];
    } else {
      const auto whole = static_cast<std::size_t>(exp) + 1;
      for (std::size_t i = 0; i < whole; ++i) out[n++] = i < count ? digits[i] : '0';
      out[n++] = '.';
      if (count <= whole) out[n++] = '0';
      for (std::size_t i = whole; i < count; ++i) out[n++] = digits[i];
    }
    text.append(out, n);
    return;
  }
  out[n++] = digits[0];
  if (count > 1) {
    out[n++] = '.';
    for (std::size_t i = 1; i < count; ++i) out[n++] = digits[i];
  }
  out[n++] = 'e';
  out[n++] = exp < 0 ? '-' : '+';
  const int e = std::abs(exp);
  if (e >= 100) out[n++] = static_cast<char>('0' + e / 100);
  out[n++] = static_cast<char>('0' + e / 10 % 10);
  out[n++] = static_cast<char>('0' + e % 10);
  text.append(out, n);
}

std::string StatCell::text() const {
  std::string out;
  append_text(out);
  return out;
}

void StatCell::append_text(std::string& out) const {
  switch (kind) {
    case StatKind::kNum: {
      if (!integral) return append_python_float(out, num);
      char digits[24];
      out.append(digits, std::to_chars(digits, digits + sizeof digits, static_cast<long long>(num)).ptr);
      return;
    }
    case StatKind::kNan: out += "Nan"; return;
    case StatKind::kInf: out += "inf"; return;
    case StatKind::kNegInf: out += "-inf"; return;
    case StatKind::kNa: out += other.empty() ? "N/A" : other; return;
    case StatKind::kDevice:
    case StatKind::kOther: out += other; return;
  }
}

StatCell na_cell() { return other_cell("N/A", StatKind::kNa); }

std::array<StatCell, 4> stat_cells(const DumpValue& v) {
  if (!v.is_tensor) {
    StatCell c;
    switch (special_value(v)) {  // Note [msprobe's special values]
      case SpecialValue::kSize:
      case SpecialValue::kSlice:
      case SpecialValue::kNoValue: c = other_cell("None"); break;
      case SpecialValue::kRank: c = string_cell(python_str(v)); break;
      case SpecialValue::kProcessGroup: c = string_cell(group_ranks(v)); break;
      case SpecialValue::kEllipsis:
      case SpecialValue::kNone: c = value_cell(v); break;
    }
    return {c, c, c, c};
  }
  // A null or absent statistic is msprobe's None (written "None", a kOther), not a NaN.
  const bool integral = integral_dtype(v);
  const auto cell = [&](std::uint8_t bit, double x, bool whole) {
    return v.has_stat(bit) ? number_cell(x, whole) : other_cell("None");
  };
  return {cell(DumpValue::kHasMax, v.max, integral), cell(DumpValue::kHasMin, v.min, integral),
          cell(DumpValue::kHasMean, v.mean, false), cell(DumpValue::kHasNorm, v.norm, false)};
}

// A None is the hub's {type "", value "null"} (Note [Reading dump.json]); a {type, value: null}
// is no None: msprobe writes its dtype "<class 'NoneType'>" and its statistics None.
bool is_null_value(const DumpValue& v) { return !v.is_tensor && v.type.empty(); }

std::string_view msprobe_dtype(const DumpValue& v) {
  if (v.is_tensor) return v.dtype;
  if (is_null_value(v)) return "None";
  switch (special_value(v)) {  // Note [msprobe's special values]
    case SpecialValue::kNone: break;
    case SpecialValue::kNoValue: return "<class 'NoneType'>";
    default: return v.type;
  }
  const std::string_view json = v.value;
  if (json == "true" || json == "false") return "<class 'bool'>";
  if (json.empty() || json == "null") return "<class 'NoneType'>";
  if (is_json_string(json)) return "<class 'str'>";
  if (json.front() == '[') return "<class 'list'>";
  if (json.front() == '{') return "<class 'dict'>";
  return looks_integral(json) ? "<class 'int'>" : "<class 'float'>";
}

std::string msprobe_shape(const DumpValue& v) {
  std::string out;
  append_msprobe_shape(out, v);
  return out;
}

void append_msprobe_shape(std::string& out, const DumpValue& v) {
  if (is_null_value(v)) return out.append("None"), void();
  if (v.is_tensor) {
    out += '[';
    char digits[24];
    for (std::size_t i = 0; i < v.shape.size(); ++i) {
      if (i) out += ", ";
      out.append(digits, std::to_chars(digits, digits + sizeof digits, v.shape[i]).ptr);
    }
    out += ']';
    return;
  }
  const SpecialValue special = special_value(v);
  if (special == SpecialValue::kSize) return out.append(python_str(v)), void();  // str(value): "[2, 3]"
  if (special == SpecialValue::kSlice) {                                         // str(np.shape(np.array(value)))
    const auto items = std::count(v.value.begin(), v.value.end(), ',') + (v.value.size() > 2 ? 1 : 0);
    char text[32];
    std::snprintf(text, sizeof text, "(%lld,)", static_cast<long long>(items));
    out += text;
    return;
  }
  out += "[]";
}

bool dtypes_pair(std::string_view npu, std::string_view bench, bool cross_frame) {
  const std::string_view n = cross_frame ? dtype_kind(npu) : npu, b = cross_frame ? dtype_kind(bench) : bench;
  return n == b || (in_float_group(n) && in_float_group(b)) || (in_torch_float_group(n) && in_torch_float_group(b));
}

std::string msprobe_md5(const DumpValue& v) {
  if (!v.md5.empty()) return v.md5;
  if (v.is_tensor || is_null_value(v)) return "None";
  const SpecialValue special = special_value(v);  // Note [msprobe's special values]
  if (special == SpecialValue::kRank) return python_str(v);
  if (special == SpecialValue::kProcessGroup) return group_ranks(v);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", text_crc32(special == SpecialValue::kNoValue ? "" : python_str(v)));
  return hex;
}

StatDiff stat_diff(const StatCell& npu, const StatCell& bench) {
  using K = StatDiff::Kind;
  StatDiff d;
  if (same_text(npu, bench)) {
    d.kind = K::kSame;
    return d;
  }
  const StatKind n = npu.kind, b = bench.kind;
  const auto numeric = [](StatKind k) {
    return k == StatKind::kNum || k == StatKind::kNan || k == StatKind::kInf || k == StatKind::kNegInf;
  };
  const auto other = [](StatKind k) { return k == StatKind::kDevice || k == StatKind::kOther; };
  if (n == StatKind::kNa || b == StatKind::kNa) {
    d.kind = K::kNa;
  } else if (n == StatKind::kNum && b == StatKind::kNum) {
    d.kind = K::kNum;
    d.diff = npu.num - bench.num;
    d.rel = bench.num != 0 ? std::abs(d.diff / bench.num * 100) : INFINITY;
  } else if ((n == StatKind::kNan && numeric(b)) || (b == StatKind::kNan && numeric(n))) {
    d.kind = K::kNan;
  } else if ((n == StatKind::kInf && (b == StatKind::kNum || b == StatKind::kNegInf)) ||
             (n == StatKind::kNum && b == StatKind::kNegInf)) {
    d.kind = K::kInf;
  } else if ((n == StatKind::kNegInf && (b == StatKind::kNum || b == StatKind::kInf)) ||
             (n == StatKind::kNum && b == StatKind::kInf)) {
    d.kind = K::kNegInf;
  } else if (n == StatKind::kDevice && b == StatKind::kDevice) {
    d.kind = K::kNa;
  } else if ((other(n) && (numeric(b) || other(b))) || (other(b) && numeric(n))) {
    d.kind = K::kDiff;
  }
  return d;
}

std::string StatDiff::diff_text() const {
  std::string out;
  append_diff_text(out);
  return out;
}

std::string StatDiff::rel_text() const {
  std::string out;
  append_rel_text(out);
  return out;
}

void StatDiff::append_diff_text(std::string& out) const {
  switch (kind) {
    case Kind::kSame: out += '0'; return;
    case Kind::kNum: return append_python_float(out, diff);
    case Kind::kNan: out += "Nan"; return;
    case Kind::kInf: out += "inf"; return;
    case Kind::kNegInf: out += "-inf"; return;
    case Kind::kNa: out += "N/A"; return;
    case Kind::kDiff: out += "Diff"; return;
  }
}

void StatDiff::append_rel_text(std::string& out) const {
  if (kind != Kind::kNum) return append_diff_text(out);
  if (std::isinf(rel)) return out.append("inf"), void();
  append_python_float(out, rel);
  out += '%';
}

double StatDiff::share_or_nan() const {
  return kind == Kind::kNum && std::isfinite(rel) ? rel / 100 : std::numeric_limits<double>::quiet_NaN();
}

double StatDiff::share_for_threshold() const {
  switch (kind) {
    case Kind::kNum: return std::isfinite(rel) ? rel / 100 : INFINITY;
    case Kind::kNan: return std::numeric_limits<double>::quiet_NaN();
    case Kind::kInf: return INFINITY;
    case Kind::kNegInf: return -INFINITY;
    default: return 0;  // "0", "N/A", "Diff": str2float gives 0
  }
}

}  // namespace npuscope::comparator
