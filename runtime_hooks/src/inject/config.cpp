// See config.h.
#include "config.h"

#include <fnmatch.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "record_buffer.h"

namespace npuscope::inject {
namespace {

using nlohmann::json;

constexpr const char* kKnownKeys = "dump, ops, steps, max_dump_bytes, overflow_only, buffer_bytes";

[[noreturn]] void bad(const std::string& what) { throw ConfigError("NPUSCOPE_CONFIG: " + what); }

DumpMode parse_dump(const json& v) {
  if (!v.is_string()) bad("\"dump\" must be one of \"none\", \"stats\", \"tensor\", got " + v.dump());
  const auto& s = v.get_ref<const std::string&>();
  if (s == "none") return DumpMode::kNone;
  if (s == "stats") return DumpMode::kStats;
  if (s == "tensor") return DumpMode::kTensor;
  bad("\"dump\" must be one of \"none\", \"stats\", \"tensor\", got \"" + s + "\"");
}

std::vector<std::string> parse_ops(const json& v) {
  if (!v.is_array()) bad("\"ops\" must be a list of glob patterns, got " + v.dump());
  std::vector<std::string> ops;
  for (const auto& p : v) {
    if (!p.is_string() || p.get_ref<const std::string&>().empty()) {
      bad("\"ops\" must hold non-empty glob strings, got " + p.dump());
    }
    ops.push_back(p.get<std::string>());
  }
  return ops;
}

bool parse_int(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

void parse_steps(const json& v, InjectConfig& c) {
  if (!v.is_string()) bad("\"steps\" must be a string \"A-B\" or \"A\", got " + v.dump());
  const std::string& s = v.get_ref<const std::string&>();
  const auto dash = s.find('-');
  std::int64_t first = 0, last = 0;
  const bool ok = dash == std::string::npos
                      ? parse_int(s, &first) && parse_int(s, &last)
                      : parse_int(std::string_view(s).substr(0, dash), &first) &&
                            parse_int(std::string_view(s).substr(dash + 1), &last);
  if (!ok) bad("\"steps\" must be \"A-B\" or \"A\" with non-negative integers, got \"" + s + "\"");
  if (first > last) bad("\"steps\" range \"" + s + "\" is empty (A > B)");
  c.has_steps = true;
  c.step_first = first;
  c.step_last = last;
}

std::uint64_t parse_bytes(const json& v, const char* key) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
    bad(std::string("\"") + key + "\" must be a non-negative integer (bytes), got " + v.dump());
  }
  return v.get<std::uint64_t>();
}

bool parse_bool(const json& v, const char* key) {
  if (!v.is_boolean()) bad(std::string("\"") + key + "\" must be true or false, got " + v.dump());
  return v.get<bool>();
}

}  // namespace

const char* dump_mode_name(DumpMode mode) {
  switch (mode) {
    case DumpMode::kNone: return "none";
    case DumpMode::kStats: return "stats";
    case DumpMode::kTensor: return "tensor";
  }
  return "none";
}

InjectConfig parse_config(std::string_view text) {
  InjectConfig c;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return c;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    bad(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) bad("must be a JSON object, got " + j.dump());
  for (const auto& [key, value] : j.items()) {
    if (key == "dump") {
      c.dump = parse_dump(value);
    } else if (key == "ops") {
      c.ops = parse_ops(value);
    } else if (key == "steps") {
      parse_steps(value, c);
    } else if (key == "max_dump_bytes") {
      c.max_dump_bytes = parse_bytes(value, "max_dump_bytes");
    } else if (key == "overflow_only") {
      c.overflow_only = parse_bool(value, "overflow_only");
    } else if (key == "buffer_bytes") {
      c.buffer_bytes = parse_bytes(value, "buffer_bytes");
      if (c.buffer_bytes < kChunkBytes) {
        bad("\"buffer_bytes\" must be at least " + std::to_string(kChunkBytes) + " (one buffer chunk), got " +
            std::to_string(c.buffer_bytes));
      }
    } else {
      bad("unknown key \"" + key + "\" (known keys: " + kKnownKeys + ")");
    }
  }
  return c;
}

std::string InjectConfig::to_json() const {
  json j = {{"dump", dump_mode_name(dump)},
            {"ops", ops},
            {"max_dump_bytes", max_dump_bytes},
            {"overflow_only", overflow_only},
            {"buffer_bytes", buffer_bytes}};
  if (has_steps) j["steps"] = std::to_string(step_first) + "-" + std::to_string(step_last);
  return j.dump();
}

bool InjectConfig::ops_match(const char* name) const {
  if (ops.empty()) return true;
  if (name == nullptr) return false;
  for (const auto& pattern : ops) {
    if (fnmatch(pattern.c_str(), name, 0) == 0) return true;
  }
  return false;
}

bool InjectConfig::selects(const char* name, std::int64_t step) const {
  if (has_steps && (step < step_first || step > step_last)) return false;
  return ops_match(name);
}

}  // namespace npuscope::inject
