// The injection library's settings: NPUSCOPE_CONFIG, a JSON object `npuscope run` writes.
//
//   {"dump": "none" | "stats" | "tensor",  // TENSOR rows: none, statistics, statistics + raw bytes
//    "ops": ["layer0/*", "*MatMul"],       // dump only tasks whose op instance name matches a glob
//    "steps": "A-B" | "A",                 // dump only tasks launched while the step is in [A, B]
//    "max_dump_bytes": N,                  // stop dumping raw bytes past N uncompressed bytes (0: no cap)
//    "overflow_only": true,                // raw bytes only for tasks that overflowed
//    "buffer_bytes": N}                    // cap on buffered records + pending dumps (default 256 MiB)
//
// Every key is optional; an unknown key or a wrong type is an error (a typo must not silently
// profile something else).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::inject {

enum class DumpMode : std::uint8_t { kNone, kStats, kTensor };

struct InjectConfig {
  DumpMode dump = DumpMode::kNone;
  std::vector<std::string> ops;  // empty: every op
  bool has_steps = false;
  std::int64_t step_first = 0, step_last = 0;
  std::uint64_t max_dump_bytes = 0;  // 0: unlimited
  bool overflow_only = false;
  std::uint64_t buffer_bytes = std::uint64_t{256} << 20;

  // The effective settings as JSON (defaults filled in): META.config.
  std::string to_json() const;
  // True when a task with this instance name, launched in `step` (-1: none or unknown), has its
  // tensors recorded (the "ops" and "steps" filters).
  bool selects(const char* name, std::int64_t step) const;
  bool ops_match(const char* name) const;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses NPUSCOPE_CONFIG's text ("" means all defaults). Throws ConfigError naming the bad key.
InjectConfig parse_config(std::string_view text);

const char* dump_mode_name(DumpMode mode);

}  // namespace npuscope::inject
