// The storages of cpu tensors come from the host block cache (Note [Host block cache] in
// emulator/src/host_block_cache.h): a freed block of 64 KiB or more goes to the next tensor of its
// size class, so an op's fresh output does not fault its pages in again; under ASan nothing is kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "npuscope/emulator/tensor.h"

using namespace npuscope::emulator;

// Defined when the ASan runtime is linked (the test's own code is not instrumented, Note
// [Uninstrumented test code]): then freed blocks are never reused.
extern "C" int __asan_address_is_poisoned(const volatile void* addr) __attribute__((weak));

namespace {

bool caching() { return __asan_address_is_poisoned == nullptr; }

std::uintptr_t address_of_fresh(const Shape& shape, DType dtype) {
  const Tensor t = Tensor::empty(shape, dtype);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw_data()) % 64, 0u);
  return reinterpret_cast<std::uintptr_t>(t.raw_data());
}

TEST(HostBlockCacheTest, AFreedLargeBlockGoesToTheNextTensorOfItsSizeClass) {
  // 1 MiB + 4 bytes, freed at once; 1 MiB + 100,000 bytes is in the same class (the classes step by
  // an eighth of the power of two below: both take 1.125 MiB), so it gets the same block.
  const std::uintptr_t first = address_of_fresh({262145}, DType::kF32);
  const std::uintptr_t second = address_of_fresh({262144 + 25000}, DType::kF32);
  EXPECT_EQ(first == second, caching());
}

TEST(HostBlockCacheTest, BlocksInUseAreNeverHandedOutTwice) {
  std::vector<Tensor> live;
  for (int i = 0; i < 8; ++i) {
    live.push_back(Tensor::empty({64, 1024}, DType::kF32));
    std::memset(live.back().raw_data(), i, 64 * 1024 * 4);
  }
  live.erase(live.begin() + 2, live.begin() + 5);  // three blocks back to the cache
  for (int i = 0; i < 4; ++i) {
    live.push_back(Tensor::empty({64, 1024}, DType::kF32));
    std::memset(live.back().raw_data(), 100 + i, 64 * 1024 * 4);
  }
  // Each tensor still holds its own bytes: no two share memory.
  const int want[] = {0, 1, 5, 6, 7, 100, 101, 102, 103};
  ASSERT_EQ(live.size(), std::size(want));
  for (std::size_t k = 0; k < live.size(); ++k) {
    const auto* p = reinterpret_cast<const unsigned char*>(live[k].raw_data());
    EXPECT_EQ(p[0], want[k]) << k;
    EXPECT_EQ(p[64 * 1024 * 4 - 1], want[k]) << k;
  }
}

TEST(HostBlockCacheTest, SmallAndOtherSizedTensorsDoNotTakeACachedBlock) {
  const std::uintptr_t large = address_of_fresh({1 << 18}, DType::kF32);  // 1 MiB, cached
  // 2 MiB is another class; 4 KiB is below the cache. Neither may get the 1 MiB block.
  const Tensor other = Tensor::empty({1 << 19}, DType::kF32);
  const Tensor small = Tensor::empty({1024}, DType::kF32);
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(other.raw_data()), large);
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(small.raw_data()), large);
  // Zero-element tensors still get their own address.
  const Tensor empty = Tensor::empty({0}, DType::kF32);
  EXPECT_NE(empty.raw_data(), nullptr);
}

}  // namespace
