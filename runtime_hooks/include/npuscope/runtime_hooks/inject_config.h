// The injection library's settings, declared once: NPUSCOPE_CONFIG, a JSON object, parsed by the
// injection library, and `npuscope run`'s flags, turned into the same settings by the same parsers
// (parse_steps("3") whichever way the value came), so that a value is accepted or refused alike, in
// the same words, by the CLI before the program starts and by the library inside it.
//
//   {"dump": "none" | "stats" | "tensor" | "md5",  // TENSOR rows: none, statistics, statistics + raw
//                                                  // bytes, statistics + CRC-32 (msprobe's summary_mode md5)
//    "ops": ["layer0/*", "*MatMul"],       // dump only tasks whose op instance name matches a glob
//    "steps": "A-B" | "A",                 // dump only tasks launched while the step is in [A, B]
//    "max_dump_bytes": N,                  // stop dumping raw bytes past N uncompressed bytes (0: no cap)
//    "overflow_only": true,                // raw bytes only for tasks that overflowed (needs "tensor")
//    "buffer_bytes": N,                    // cap on buffered records + pending dumps (default 256 MiB)
//    "grad_probe": true,                   // every parameter's gradient statistics (GRADIENT; PyTorch scripts)
//    "check_ops": true,                    // check every NPU kernel against its f64 golden (OP_CHECK)
//    "pipe_trace": false,                  // custom kernels: no PIPE_INSTRUCTION rows (KERNEL_BLOCK stays)
//    "keep_going": true}                   // custom kernels: list every sanitizer finding and run on
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

enum class DumpMode : std::uint8_t { kNone, kStats, kTensor, kMd5 };

struct InjectConfig {
  DumpMode dump = DumpMode::kNone;
  std::vector<std::string> ops;  // empty: every op
  bool has_steps = false;
  std::int64_t step_first = 0, step_last = 0;
  std::uint64_t max_dump_bytes = 0;  // 0: unlimited
  bool overflow_only = false;
  std::uint64_t buffer_bytes = std::uint64_t{256} << 20;
  bool grad_probe = false;
  bool check_ops = false;
  bool pipe_trace = true;
  bool keep_going = false;

  // The effective settings as JSON (defaults filled in): META.config, and what `npuscope run`
  // hands the library. parse_config(to_json()) gives the same settings.
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

// The valid ranges (inclusive), checked by the parsers below and listed in `npuscope run --help`:
//   max_dump_bytes  0 .. 2^50 (1 PiB; 0: no cap)
//   buffer_bytes    2^16 (one chunk of the record buffer: record_buffer.h asserts they agree) .. 2^40 (1 TiB)
//   steps           0 <= A <= B <= 2^63-1
// A value past a maximum is refused rather than clamped: "-5" read as 2^64-5 must not pass as "no cap".
inline constexpr std::uint64_t kMinBufferBytes = 64 * 1024;
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kMaxDumpBytesLimit = std::uint64_t{1} << 50;

// What the messages call a setting: NPUSCOPE_CONFIG's key ("\"steps\"") or the CLI's flag ("--steps").
enum class Setting : std::uint8_t {
  kDump,
  kOps,
  kSteps,
  kMaxDumpBytes,
  kOverflowOnly,
  kBufferBytes,
  kGradProbe,
  kCheckOps,
  kPipeTrace,
  kKeepGoing
};
enum class Spelling : std::uint8_t { kJsonKey, kFlag };
std::string setting_name(Setting setting, Spelling spelling);

// One parser per setting, from its text. Each throws ConfigError "<setting> must be ..., got ..."
// with the setting named as `spelling` says.
DumpMode parse_dump(std::string_view text, Spelling spelling);        // none | stats | tensor | md5
std::string parse_op_glob(std::string_view text, Spelling spelling);  // a non-empty glob
struct StepRange {
  std::int64_t first = 0, last = 0;
};
StepRange parse_steps(std::string_view text, Spelling spelling);  // "A-B" or "A", 0 <= A <= B
// Decimal, within the setting's range above (buffer_bytes' minimum is validate()'s).
std::uint64_t parse_bytes(std::string_view text, Setting setting, Spelling spelling);
// The rules between settings (overflow_only needs dump tensor) and buffer_bytes' range.
void validate(const InjectConfig& config, Spelling spelling);

// Parses NPUSCOPE_CONFIG's text ("" means all defaults). Throws ConfigError "NPUSCOPE_CONFIG: ..."
// naming the bad key.
InjectConfig parse_config(std::string_view text);

const char* dump_mode_name(DumpMode mode);

}  // namespace npuscope::inject
