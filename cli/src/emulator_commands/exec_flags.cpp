// See exec_flags.h. One row per flag: its name, help, the member it sets, and whether it only sets
// up the NPU; add_exec_flags() and exec_arguments() both walk the rows.
#include "exec_flags.h"

#include <limits>
#include <variant>

namespace npuscope::cli {
namespace {

template <class T>
using Member = T& (*)(ExecFlags&);
using AnyMember =
    std::variant<Member<std::string>, Member<std::vector<std::string>>, Member<int>, Member<std::uint64_t>>;

enum class Applies : std::uint8_t { kBoth, kNpuOnly, kExecOnly };

struct ExecFlag {
  const char* name;
  const char* help;  // a numeric flag's help states its range
  AnyMember member;
  Applies applies = Applies::kBoth;
  std::uint64_t min = 0, max = 0;  // numeric flags: the valid range (ranged_value in command.h)
};

// A captureless lambda per member: the rows reach into ExecFlags::device as well.
#define NPUSCOPE_EXEC_MEMBER(type, path) static_cast<Member<type>>([](ExecFlags& f) -> type& { return f.path; })

const ExecFlag kExecFlags[] = {
    {"model", "the ONNX model file (required)", NPUSCOPE_EXEC_MEMBER(std::string, model)},
    {"input", "NAME=FILE: an input from a .npy or .pb file (repeatable); others are generated",
     NPUSCOPE_EXEC_MEMBER(std::vector<std::string>, inputs)},
    {"dim", "NAME=VALUE: a symbolic dim for generated inputs (default 1)",
     NPUSCOPE_EXEC_MEMBER(std::vector<std::string>, dims)},
    {"iterations", "forward passes (timings are per pass): 1 to 1000000", NPUSCOPE_EXEC_MEMBER(int, iterations),
     Applies::kBoth, 1, 1'000'000},
    {"seed", "seed for generated inputs: 0 to 18446744073709551615", NPUSCOPE_EXEC_MEMBER(std::uint64_t, seed),
     Applies::kBoth, 0, std::numeric_limits<std::uint64_t>::max()},
    {"device", "npu, npu:N, or cpu (the golden backend)", NPUSCOPE_EXEC_MEMBER(std::string, device.device),
     Applies::kExecOnly},
    {"output-dir", "where output_<i>.npy go (default: exec_<model name>)",
     NPUSCOPE_EXEC_MEMBER(std::string, output_dir), Applies::kExecOnly},
    {"spec", "device preset (ascend910b, ascend910b1..b4, ascend910, ascend310p, tiny) or a JSON spec file",
     NPUSCOPE_EXEC_MEMBER(std::string, device.spec), Applies::kNpuOnly},
    {"precision-mode",
     "force_fp16 | allow_fp32_to_fp16 | allow_mix_precision | must_keep_origin_dtype (default: the device's)",
     NPUSCOPE_EXEC_MEMBER(std::string, device.precision_mode), Applies::kNpuOnly},
    {"overflow-mode", "inf_nan | saturation (default: the device's)",
     NPUSCOPE_EXEC_MEMBER(std::string, device.overflow_mode), Applies::kNpuOnly},
    {"perturb",
     "GLOB:MODE: perturb the NPU outputs of the ops whose names match GLOB (fnmatch); MODE noise[=REL] "
     "(default 0.01), bitflip[=BIT] (default: the exponent's top bit, element 0) or f16 (repeatable)",
     NPUSCOPE_EXEC_MEMBER(std::vector<std::string>, perturb), Applies::kNpuOnly},
};

#undef NPUSCOPE_EXEC_MEMBER

template <class T>
po::typed_value<T>* value_of(T& member, const ExecFlag& flag) {
  if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return po::value(&member)->composing();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return member.empty() ? po::value(&member) : po::value(&member)->default_value(member);
  } else {
    return ranged_value(&member, flag.name, static_cast<T>(flag.min), static_cast<T>(flag.max))->default_value(member);
  }
}

template <class T>
void append(std::vector<std::string>& args, const char* name, const T& value, const T& default_value) {
  if (value == default_value) return;
  if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    for (const std::string& v : value) args.insert(args.end(), {std::string("--") + name, v});
  } else if constexpr (std::is_same_v<T, std::string>) {
    args.insert(args.end(), {std::string("--") + name, value});
  } else {
    args.insert(args.end(), {std::string("--") + name, std::to_string(value)});
  }
}

}  // namespace

void add_exec_flags(po::options_description& desc, ExecFlags& flags, ExecFlagSet set) {
  for (const ExecFlag& flag : kExecFlags) {
    if (set == ExecFlagSet::kButDeviceAndOutput && flag.applies == Applies::kExecOnly) continue;
    std::visit([&](auto member) { desc.add_options()(flag.name, value_of(member(flags), flag), flag.help); },
               flag.member);
  }
}

void check_exec_flags(const ExecFlags& flags) {
  if (flags.model.empty()) throw UsageError("--model is required");
}

std::vector<std::string> exec_arguments(const ExecFlags& flags, bool golden) {
  ExecFlags copy = flags, defaults;
  std::vector<std::string> args;
  for (const ExecFlag& flag : kExecFlags) {
    if (golden && flag.applies == Applies::kNpuOnly) continue;
    std::visit([&](auto member) { append(args, flag.name, member(copy), member(defaults)); }, flag.member);
  }
  return args;
}

}  // namespace npuscope::cli
