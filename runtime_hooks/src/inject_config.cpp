// See npuscope/runtime_hooks/inject_config.h.
#include "npuscope/runtime_hooks/inject_config.h"

#include <fnmatch.h>

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

namespace npuscope::inject {
namespace {

using nlohmann::json;

struct SettingNames {
  Setting setting;
  const char* key;   // in NPUSCOPE_CONFIG
  const char* flag;  // of `npuscope run` (nullptr: none)
};
// Indexed by Setting.
constexpr std::array kSettings = {
    SettingNames{Setting::kDump, "dump", "--dump"},
    SettingNames{Setting::kOps, "ops", "--ops"},
    SettingNames{Setting::kSteps, "steps", "--steps"},
    SettingNames{Setting::kMaxDumpBytes, "max_dump_bytes", "--max-dump-bytes"},
    SettingNames{Setting::kOverflowOnly, "overflow_only", "--overflow-only"},
    SettingNames{Setting::kBufferBytes, "buffer_bytes", nullptr},
    SettingNames{Setting::kGradProbe, "grad_probe", "--grad-probe"},
    SettingNames{Setting::kCheckOps, "check_ops", "--check-ops"},
    SettingNames{Setting::kPipeTrace, "pipe_trace", "--no-pipe-trace"},
    SettingNames{Setting::kKeepGoing, "keep_going", "--keep-going"},
};
static_assert(kSettings.size() == static_cast<std::size_t>(Setting::kKeepGoing) + 1);
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kSettings.size(); ++i) {
    if (static_cast<std::size_t>(kSettings[i].setting) != i) return false;
  }
  return true;
}
static_assert(in_enum_order());

const SettingNames& names_of(Setting s) { return kSettings[static_cast<std::size_t>(s)]; }

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

[[noreturn]] void bad(Setting s, Spelling spelling, const std::string& what) {
  throw ConfigError(setting_name(s, spelling) + " " + what);
}

bool parse_non_negative(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

// ---- NPUSCOPE_CONFIG: JSON types, then the value through the setting's parser -------------------

constexpr Spelling kJson = Spelling::kJsonKey;

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<std::string> ops_from_json(const json& v) {
  if (!v.is_array()) bad(Setting::kOps, kJson, "must be a list of glob patterns, got " + v.dump());
  std::vector<std::string> ops;
  for (const auto& p : v) {
    if (!p.is_string()) bad(Setting::kOps, kJson, "must hold non-empty glob strings, got " + p.dump());
    ops.push_back(parse_op_glob(p.get_ref<const std::string&>(), kJson));
  }
  return ops;
}

std::uint64_t bytes_from_json(const json& v, Setting s) {
  if (!v.is_number()) bad(s, kJson, "must be a non-negative integer (bytes), got " + v.dump());
  return parse_bytes(v.dump(), s, kJson);
}

bool bool_from_json(const json& v, Setting s) {
  if (!v.is_boolean()) bad(s, kJson, "must be true or false, got " + v.dump());
  return v.get<bool>();
}

void set_from_json(InjectConfig& c, const std::string& key, const json& value) {
  if (key == "dump") {
    c.dump = parse_dump(text_of(value), kJson);
  } else if (key == "ops") {
    c.ops = ops_from_json(value);
  } else if (key == "steps") {
    if (!value.is_string()) bad(Setting::kSteps, kJson, "must be a string \"A-B\" or \"A\", got " + value.dump());
    const StepRange r = parse_steps(value.get_ref<const std::string&>(), kJson);
    c.has_steps = true;
    c.step_first = r.first;
    c.step_last = r.last;
  } else if (key == "max_dump_bytes") {
    c.max_dump_bytes = bytes_from_json(value, Setting::kMaxDumpBytes);
  } else if (key == "overflow_only") {
    c.overflow_only = bool_from_json(value, Setting::kOverflowOnly);
  } else if (key == "buffer_bytes") {
    c.buffer_bytes = bytes_from_json(value, Setting::kBufferBytes);
  } else if (key == "grad_probe") {
    c.grad_probe = bool_from_json(value, Setting::kGradProbe);
  } else if (key == "check_ops") {
    c.check_ops = bool_from_json(value, Setting::kCheckOps);
  } else if (key == "pipe_trace") {
    c.pipe_trace = bool_from_json(value, Setting::kPipeTrace);
  } else if (key == "keep_going") {
    c.keep_going = bool_from_json(value, Setting::kKeepGoing);
  } else {
    std::string known;
    for (const SettingNames& n : kSettings) known += (known.empty() ? "" : ", ") + std::string(n.key);
    throw ConfigError("unknown key \"" + key + "\" (known keys: " + known + ")");
  }
}

}  // namespace

std::string setting_name(Setting setting, Spelling spelling) {
  const SettingNames& n = names_of(setting);
  return spelling == Spelling::kFlag && n.flag != nullptr ? std::string(n.flag) : quoted(n.key);
}

const char* dump_mode_name(DumpMode mode) {
  switch (mode) {
    case DumpMode::kNone: return "none";
    case DumpMode::kStats: return "stats";
    case DumpMode::kTensor: return "tensor";
    case DumpMode::kMd5: return "md5";
  }
  return "none";
}

DumpMode parse_dump(std::string_view text, Spelling spelling) {
  for (DumpMode m : {DumpMode::kNone, DumpMode::kStats, DumpMode::kTensor, DumpMode::kMd5}) {
    if (text == dump_mode_name(m)) return m;
  }
  bad(Setting::kDump, spelling, "must be one of \"none\", \"stats\", \"tensor\", \"md5\", got " + quoted(text));
}

std::string parse_op_glob(std::string_view text, Spelling spelling) {
  if (text.empty()) bad(Setting::kOps, spelling, "must hold non-empty glob strings, got \"\"");
  return std::string(text);
}

StepRange parse_steps(std::string_view text, Spelling spelling) {
  const auto dash = text.find('-');
  StepRange r;
  const bool ok =
      dash == std::string_view::npos
          ? parse_non_negative(text, &r.first) && parse_non_negative(text, &r.last)
          : parse_non_negative(text.substr(0, dash), &r.first) && parse_non_negative(text.substr(dash + 1), &r.last);
  if (!ok) {
    bad(Setting::kSteps, spelling,
        "must be \"A-B\" or \"A\" with non-negative integers (up to 2^63-1), got " + quoted(text));
  }
  if (r.first > r.last) bad(Setting::kSteps, spelling, "range " + quoted(text) + " is empty (A > B)");
  return r;
}

std::uint64_t parse_bytes(std::string_view text, Setting setting, Spelling spelling) {
  const std::uint64_t limit = setting == Setting::kBufferBytes ? kMaxBufferBytes : kMaxDumpBytesLimit;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value > limit) {
    std::string what = "must be a non-negative integer (bytes) up to ";
    what += std::to_string(limit);
    what += ", got ";
    what += quoted(text);
    bad(setting, spelling, what);
  }
  return value;
}

void validate(const InjectConfig& c, Spelling spelling) {
  if (c.overflow_only && c.dump != DumpMode::kTensor) {
    bad(Setting::kOverflowOnly, spelling, "needs " + setting_name(Setting::kDump, spelling) + " tensor");
  }
  if (c.buffer_bytes < kMinBufferBytes || c.buffer_bytes > kMaxBufferBytes) {
    std::string what = "must be at least ";
    what += std::to_string(kMinBufferBytes);
    what += " (one buffer chunk) and at most ";
    what += std::to_string(kMaxBufferBytes);
    what += ", got ";
    what += std::to_string(c.buffer_bytes);
    bad(Setting::kBufferBytes, spelling, what);
  }
  if (c.max_dump_bytes > kMaxDumpBytesLimit) {
    std::string what = "must be at most ";
    what += std::to_string(kMaxDumpBytesLimit);
    what += ", got ";
    what += std::to_string(c.max_dump_bytes);
    bad(Setting::kMaxDumpBytes, spelling, what);
  }
}

InjectConfig parse_config(std::string_view text) {
  InjectConfig c;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return c;
  try {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      throw ConfigError(std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw ConfigError("must be a JSON object, got " + j.dump());
    for (const auto& [key, value] : j.items()) set_from_json(c, key, value);
    validate(c, kJson);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("NPUSCOPE_CONFIG: ") + e.what());
  }
  return c;
}

std::string InjectConfig::to_json() const {
  json j = {{"dump", dump_mode_name(dump)},     {"ops", ops},
            {"max_dump_bytes", max_dump_bytes}, {"overflow_only", overflow_only},
            {"buffer_bytes", buffer_bytes},     {"grad_probe", grad_probe},
            {"check_ops", check_ops},           {"pipe_trace", pipe_trace},
            {"keep_going", keep_going}};
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
