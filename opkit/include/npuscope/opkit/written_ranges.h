// Which bytes of a local memory have been written: the sanitizer's shadow for reads of memory
// nothing wrote. Kept as disjoint, merged [begin, end) ranges rather than a byte per byte: a kernel
// writes whole tiles, so a block holds a handful of ranges, and marking or checking a 32 KiB tile
// costs a map lookup instead of a 32 KiB memset or memchr (measured: the byte shadow was a third of
// the GELU sample's simulation time).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace npuscope::opkit {

class WrittenRanges {
 public:
  void mark(std::uint64_t begin, std::uint64_t end) {
    if (begin >= end) return;
    // The first range that could touch [begin, end): the one before begin's upper bound.
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
    while (it != ranges_.end() && it->first <= end) {
      begin = std::min(begin, it->first);
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(begin, end);
  }
  bool contains(std::uint64_t begin, std::uint64_t end) const {
    if (begin >= end) return true;
    auto it = ranges_.upper_bound(begin);
    if (it == ranges_.begin()) return false;
    --it;
    return it->first <= begin && it->second >= end;
  }
  std::size_t size() const { return ranges_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // begin -> end, disjoint and not adjacent
};

}  // namespace npuscope::opkit
