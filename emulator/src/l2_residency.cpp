// See l2_residency.h (Note [L2 residency]).
#include "npuscope/emulator/l2_residency.h"

#include <iterator>

namespace npuscope::emulator {
namespace {

// Pruning walks the whole map; doing it when the map has doubled keeps it amortised O(1) per touch.
constexpr std::size_t kMinPruneSize = 4096;

}  // namespace

bool L2Residency::resident(std::uint64_t key, std::uint64_t bytes) const {
  if (capacity_ == 0 || bytes > capacity_) return false;
  const auto it = last_touch_.find(key);
  return it != last_touch_.end() && traffic_ - it->second + bytes <= capacity_;
}

void L2Residency::touch(std::uint64_t key, std::uint64_t bytes) {
  if (capacity_ == 0) return;
  traffic_ += bytes;
  last_touch_[key] = traffic_;
  if (last_touch_.size() < kMinPruneSize || last_touch_.size() < 2 * pruned_size_) return;
  for (auto it = last_touch_.begin(); it != last_touch_.end();) {
    it = traffic_ - it->second >= capacity_ ? last_touch_.erase(it) : std::next(it);
  }
  pruned_size_ = last_touch_.size();
}

}  // namespace npuscope::emulator
