// See Note [msprobe dumps in memory] in npuscope/collector/msprobe_dump.h.
#include "npuscope/collector/msprobe_dump.h"

#include <cctype>

namespace npuscope::collector {

std::optional<DType> msprobe_dtype(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  if (const std::optional<DType> d = find_dtype(name)) return d;
  char lower[32];
  if (name.size() > sizeof lower) return std::nullopt;
  for (std::size_t i = 0; i < name.size(); ++i) {
    lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  return find_dtype(std::string_view(lower, name.size()));  // MindSpore's Float32, BFloat16, Bool
}

}  // namespace npuscope::collector
