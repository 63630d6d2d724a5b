// A set of connection ids (which API calls launched which device work), as the exports that draw
// launch flows keep it: a bit per id below kDenseLimit (ids are counted from 1 per process, so 10 M
// launches cost 1.2 MiB), a hash set for any others.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace npuscope::collector::export_util {

class ConnectionSet {
 public:
  void insert(std::int64_t id) {
    if (id < 0 || id >= kDenseLimit) {
      sparse_.insert(id);
      return;
    }
    const auto word = static_cast<std::size_t>(id) / 64;
    if (word >= bits_.size()) bits_.resize(std::max(word + 1, bits_.size() * 2));
    bits_[word] |= std::uint64_t{1} << (id % 64);
  }
  bool contains(std::int64_t id) const {
    if (id < 0 || id >= kDenseLimit) return sparse_.contains(id);
    const auto word = static_cast<std::size_t>(id) / 64;
    return word < bits_.size() && ((bits_[word] >> (id % 64)) & 1) != 0;
  }

 private:
  static constexpr std::int64_t kDenseLimit = std::int64_t{1} << 28;  // at most 32 MiB of bits
  std::vector<std::uint64_t> bits_;
  std::unordered_set<std::int64_t> sparse_;
};

}  // namespace npuscope::collector::export_util
