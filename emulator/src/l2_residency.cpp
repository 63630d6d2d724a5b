// See l2_residency.h (Note [L2 residency]).
#include "npuscope/emulator/l2_residency.h"

namespace npuscope::emulator {
namespace {

constexpr std::size_t kMinSlots = 1024;

// Address-like keys differ in their middle bits: Fibonacci hashing spreads them over the table.
std::size_t slot_of(std::uint64_t key, std::size_t mask) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

// Key 0 marks an empty slot; a real key 0 (a hash may be) stands as 1.
std::uint64_t stored(std::uint64_t key) { return key == 0 ? 1 : key; }

}  // namespace

std::size_t L2Residency::find(std::uint64_t key) const {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = slot_of(key, mask);
  while (slots_[i].key != 0 && slots_[i].key != key) i = (i + 1) & mask;
  return i;
}

bool L2Residency::resident(std::uint64_t key, std::uint64_t bytes) const {
  if (capacity_ == 0 || bytes > capacity_ || slots_.empty()) return false;
  const Slot& s = slots_[find(stored(key))];
  return s.key != 0 && traffic_ - s.at + bytes <= capacity_;
}

void L2Residency::touch(std::uint64_t key, std::uint64_t bytes) {
  if (capacity_ == 0) return;
  if (slots_.empty()) slots_.resize(kMinSlots);
  traffic_ += bytes;
  key = stored(key);
  Slot& s = slots_[find(key)];
  if (s.key == 0) {
    s.key = key;
    ++used_;
  }
  s.at = traffic_;
  if (2 * used_ > slots_.size()) rebuild();
}

// At half load: keep the keys still in the L2, in a table at most a quarter full.
void L2Residency::rebuild() {
  std::vector<Slot> old;
  old.swap(slots_);
  std::size_t live = 0;
  for (const Slot& s : old) live += s.key != 0 && traffic_ - s.at < capacity_;
  std::size_t size = kMinSlots;
  while (size < 4 * live) size *= 2;
  slots_.assign(size, Slot{});
  used_ = 0;
  for (const Slot& s : old) {
    if (s.key == 0 || traffic_ - s.at >= capacity_) continue;
    slots_[find(s.key)] = s;
    ++used_;
  }
}

}  // namespace npuscope::emulator
