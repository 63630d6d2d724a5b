// See formats.h and Note [Private formats].
#include "npuscope/emulator/formats.h"

#include <array>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {
namespace {

struct FormatName {
  Format format;
  std::string_view name;
};
constexpr std::array<FormatName, 5> kFormatNames{{{Format::kND, "FORMAT_ND"},
                                                  {Format::kNCHW, "NCHW"},
                                                  {Format::kNC1HWC0, "NC1HWC0"},
                                                  {Format::kFractalZ, "FRACTAL_Z"},
                                                  {Format::kFractalNZ, "FRACTAL_NZ"}}};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

[[noreturn]] void bad_rank(Format f, const Shape& base, const char* want) {
  throw InvalidArgument("storage shape: " + std::string(format_name(f)) + " needs " + want + ", got " +
                        shape_str(base));
}

}  // namespace

std::string_view format_name(Format f) {
  for (const auto& entry : kFormatNames) {
    if (entry.format == f) return entry.name;
  }
  return "FORMAT_ND";
}

Format parse_format(std::string_view text) {
  const std::string_view name = text.substr(0, text.find(':'));
  if (name == "ND") return Format::kND;
  for (const auto& entry : kFormatNames) {
    if (entry.name == name) return entry.format;
  }
  throw InvalidArgument("unknown format '" + std::string(text) +
                        "': expected FORMAT_ND (or ND), NCHW, NC1HWC0, FRACTAL_Z or FRACTAL_NZ, optionally with a "
                        "':N' sub-format (NC1HWC0:1)");
}

int c0_of(DType dtype) { return static_cast<int>(32 / dtype_size(dtype)); }

Shape storage_shape(Format f, const Shape& base, DType dtype, int c0) {
  const std::int64_t k0 = c0 > 0 ? c0 : c0_of(dtype);
  switch (f) {
    case Format::kND:
    case Format::kNCHW: return base;
    case Format::kNC1HWC0:
      if (base.size() != 4) bad_rank(f, base, "a 4-D [N, C, H, W] shape");
      return {base[0], ceil_div(base[1], k0), base[2], base[3], k0};
    case Format::kFractalZ:
      if (base.size() != 4) bad_rank(f, base, "a 4-D [Cout, Cin, kh, kw] shape");
      return {ceil_div(base[1], k0) * base[2] * base[3], ceil_div(base[0], 16), 16, k0};
    case Format::kFractalNZ: {
      if (base.size() < 2) bad_rank(f, base, "at least 2 dims [..., m, n]");
      Shape out(base.begin(), base.end() - 2);
      const std::int64_t m = base[base.size() - 2], n = base.back();
      out.insert(out.end(), {ceil_div(n, k0), ceil_div(m, 16), 16, k0});
      return out;
    }
  }
  return base;
}

}  // namespace npuscope::emulator
