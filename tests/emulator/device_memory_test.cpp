// The caching allocator (device_memory.h, Note [Caching allocator]) and the device's raw memory API.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/device_memory.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

struct Recorded {
  std::vector<MemoryEvent> events;
  static void listen(void* user, const MemoryEvent& e, const MemoryStats&) {
    static_cast<Recorded*>(user)->events.push_back(e);
  }
  int count(MemoryEvent::Kind kind) const {
    int n = 0;
    for (const auto& e : events) n += e.kind == kind;
    return n;
  }
};

}  // namespace

TEST(CachingAllocator, RoundsTo512AndCountsStats) {
  CachingAllocator a(64 * kMiB);
  const DeviceAddress p = a.allocate(1);
  EXPECT_EQ(a.block_size(p), 512u);
  const DeviceAddress q = a.allocate(513);
  EXPECT_EQ(a.block_size(q), 1024u);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 1536u);
  EXPECT_EQ(s.requested_bytes, 514u);
  EXPECT_EQ(s.reserved_bytes, CachingAllocator::kSmallSegment);  // both carved from one 2 MiB segment
  EXPECT_EQ(s.num_segments, 1u);
  EXPECT_EQ(s.num_allocs, 2u);
  EXPECT_EQ(s.capacity_bytes, 64 * kMiB);
  a.free(p);
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.peak_allocated_bytes, 1536u);
  EXPECT_EQ(s.num_frees, 1u);
  EXPECT_EQ(s.reserved_bytes, CachingAllocator::kSmallSegment);  // cached, not released
  a.reset_peak_stats();
  EXPECT_EQ(a.stats().peak_allocated_bytes, 1024u);
  a.free(q);
  EXPECT_EQ(a.stats().allocated_bytes, 0u);
  EXPECT_EQ(a.block_size(q), 0u);
}

TEST(CachingAllocator, FreedBlockIsReused) {
  CachingAllocator a(64 * kMiB);
  const DeviceAddress p = a.allocate(4096);
  a.free(p);
  EXPECT_EQ(a.allocate(4000), p);  // same size class: the cached block comes back
  EXPECT_EQ(a.stats().num_segments, 1u);
}

TEST(CachingAllocator, SplitAndMerge) {
  CachingAllocator a(64 * kMiB);
  const DeviceAddress x = a.allocate(1024);
  const DeviceAddress y = a.allocate(1024);
  const DeviceAddress z = a.allocate(1024);
  EXPECT_EQ(y, x + 1024);  // split off the same segment, back to back
  EXPECT_EQ(z, y + 1024);
  a.free(x);
  a.free(y);
  // x and y merged into one 2048-byte free block; the best fit for 2048 is exactly that block.
  EXPECT_EQ(a.allocate(2048), x);
  EXPECT_EQ(a.stats().num_segments, 1u);
}

TEST(CachingAllocator, SmallAndLargePools) {
  CachingAllocator a(64 * kMiB);
  const DeviceAddress small = a.allocate(kMiB);  // <= 1 MiB: a 2 MiB small segment
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kMiB);
  const DeviceAddress large = a.allocate(kMiB + 1);  // large: its own segment, rounded to 2 MiB
  // The 2 MiB segment's tail (under 1 MiB) is too small to split off a large block: it stays attached.
  EXPECT_EQ(a.block_size(large), 2 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * kMiB);
  EXPECT_EQ(a.stats().num_segments, 2u);
  a.free(small);
  // The free MiB in the small segment is not used for a large request.
  const DeviceAddress large2 = a.allocate(3 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 8 * kMiB);
  EXPECT_NE(large2, small);
  a.free(large);
  a.free(large2);
}

TEST(CachingAllocator, OutOfMemoryMessageNamesTheNumbers) {
  CachingAllocator a(8 * kMiB);
  const DeviceAddress p = a.allocate(6 * kMiB);
  try {
    a.allocate(4 * kMiB);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory on npu:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tried to allocate 4.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("6.00 MiB allocated"), std::string::npos) << msg;
    EXPECT_NE(msg.find("6.00 MiB reserved"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2.00 MiB free of 8.00 MiB"), std::string::npos) << msg;
  }
  a.free(p);
}

TEST(CachingAllocator, HugeRequestIsOutOfMemoryNotAWrappedSize) {
  CachingAllocator a(8 * kMiB);
  EXPECT_THROW(a.allocate(~0ull), OutOfMemoryError);
  EXPECT_THROW(a.allocate(~0ull - 100), OutOfMemoryError);
  EXPECT_THROW(a.allocate(9 * kMiB), OutOfMemoryError);
  EXPECT_EQ(a.stats().allocated_bytes, 0u);
}

TEST(CachingAllocator, OutOfMemoryThenEmptyCacheThenSuccess) {
  CachingAllocator a(8 * kMiB);
  // Eight 1 MiB small blocks fill four 2 MiB segments: the whole device.
  std::vector<DeviceAddress> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(a.allocate(kMiB));
  EXPECT_EQ(a.stats().reserved_bytes, 8 * kMiB);
  EXPECT_EQ(a.stats().num_segments, 4u);
  for (std::size_t i = 1; i < blocks.size(); ++i) a.free(blocks[i]);
  // blocks[0] pins its segment: even after flushing the three free ones, 7 MiB does not fit.
  EXPECT_THROW(a.allocate(7 * kMiB), OutOfMemoryError);
  a.free(blocks[0]);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  EXPECT_EQ(a.stats().num_segments, 0u);
  const DeviceAddress big = a.allocate(7 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 8 * kMiB);  // rounded up to 2 MiB
  a.free(big);
}

TEST(CachingAllocator, ReleasesCachedSegmentsUnderPressure) {
  CachingAllocator a(8 * kMiB);
  std::vector<DeviceAddress> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(a.allocate(kMiB));
  for (auto b : blocks) a.free(b);
  EXPECT_EQ(a.stats().reserved_bytes, 8 * kMiB);  // all cached
  // No explicit empty_cache: the allocator flushes the free cached segments and retries.
  const DeviceAddress big = a.allocate(6 * kMiB);
  const MemoryStats s = a.stats();
  EXPECT_EQ(s.num_segment_releases, 4u);
  EXPECT_EQ(s.reserved_bytes, 6 * kMiB);
  EXPECT_EQ(s.peak_reserved_bytes, 8 * kMiB);
  a.free(big);
}

TEST(CachingAllocator, ZeroBytesIsInvalid) {
  CachingAllocator a(8 * kMiB);
  EXPECT_THROW(a.allocate(0), InvalidArgument);
}

TEST(CachingAllocator, DoubleFreeAndUseAfterFree) {
  CachingAllocator a(8 * kMiB);
  const DeviceAddress p = a.allocate(1000);
  EXPECT_NE(a.translate(p, 1000), nullptr);
  a.free(p);
  EXPECT_THROW(a.free(p), MemoryAccessError);
  EXPECT_THROW(a.free(p + 8), MemoryAccessError);
  try {
    a.translate(p, 4, "copy");
    FAIL() << "expected MemoryAccessError";
  } catch (const MemoryAccessError& e) {
    EXPECT_NE(std::string(e.what()).find("not inside a live allocation"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.translate(kDeviceAddressBase - 64, 4), MemoryAccessError);
}

TEST(CachingAllocator, CopyPastTheEndIsOutOfRange) {
  CachingAllocator a(8 * kMiB);
  const DeviceAddress p = a.allocate(1000);  // a 1024-byte block
  const DeviceAddress q = a.allocate(1000);  // right behind it: an overrun must not reach it
  EXPECT_NE(a.translate(p + 24, 1000, "copy"), nullptr);
  try {
    a.translate(p + 24, 1001, "copy");
    FAIL() << "expected MemoryAccessError";
  } catch (const MemoryAccessError& e) {
    EXPECT_NE(std::string(e.what()).find("copy out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.translate(p, ~0ull, "copy"), MemoryAccessError);  // must not wrap around
  EXPECT_THROW(a.translate(p + 512, ~0ull - 100, "copy"), MemoryAccessError);
  a.free(p);
  a.free(q);
}

TEST(CachingAllocator, ListenerSeesEveryOperation) {
  CachingAllocator a(8 * kMiB, 3);
  Recorded rec;
  a.set_listener(&Recorded::listen, &rec);
  const DeviceAddress p = a.allocate(100);
  a.free(p);
  a.empty_cache();
  a.set_listener(nullptr, nullptr);
  a.allocate(100);  // not seen
  ASSERT_EQ(rec.events.size(), 4u);
  EXPECT_EQ(rec.events[0].kind, MemoryEvent::Kind::kReserve);
  EXPECT_EQ(rec.events[0].bytes, CachingAllocator::kSmallSegment);
  EXPECT_EQ(rec.events[1].kind, MemoryEvent::Kind::kAlloc);
  EXPECT_EQ(rec.events[1].address, p);
  EXPECT_EQ(rec.events[1].bytes, 512u);
  EXPECT_EQ(rec.events[2].kind, MemoryEvent::Kind::kFree);
  EXPECT_EQ(rec.events[3].kind, MemoryEvent::Kind::kRelease);
  EXPECT_EQ(rec.count(MemoryEvent::Kind::kAlloc), 1);
}

TEST(DeviceMemory, RawApiChecksCopies) {
  Runtime::configure(RuntimeOptions{.spec = "tiny", .num_devices = 2});
  Device& dev = Runtime::get().device();
  const DeviceAddress p = dev.malloc(256);
  std::vector<std::uint8_t> host(1024, 7), back(256, 0);
  dev.memcpy_h2d(p, host.data(), 256, dev.default_stream());
  dev.memcpy_d2h(back.data(), p, 256, dev.default_stream());
  EXPECT_EQ(back, std::vector<std::uint8_t>(256, 7));
  for (std::uint64_t bytes : {513ull, 1024ull}) {
    try {
      dev.memcpy_h2d(p, host.data(), bytes, dev.default_stream());
      FAIL() << "expected MemoryAccessError";
    } catch (const MemoryAccessError& e) {
      EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(dev.memcpy_d2h(back.data(), p + 256, 512, dev.default_stream()), MemoryAccessError);
  EXPECT_THROW(dev.malloc(0), InvalidArgument);
  // A stream of another device is refused.
  EXPECT_THROW(dev.memcpy_h2d(p, host.data(), 16, Runtime::get().device(1).default_stream()), InvalidArgument);
  EXPECT_THROW(dev.malloc(1ull << 40), OutOfMemoryError);
  dev.free(p);
  EXPECT_THROW(dev.free(p), MemoryAccessError);
}

TEST(DeviceMemory, FreeRightAfterAnAsyncCopyIsSafe) {
  Runtime::configure(RuntimeOptions{.spec = "tiny"});
  Device& dev = Runtime::get().device();
  std::vector<float> host(1 << 18, 1.0f);
  for (int i = 0; i < 20; ++i) {
    const DeviceAddress p = dev.malloc(host.size() * 4);
    dev.memcpy_h2d(p, host.data(), host.size() * 4, dev.default_stream());
    dev.free(p);  // the queued copy must not run into freed memory
  }
  dev.synchronize();
  EXPECT_EQ(dev.memory().stats().allocated_bytes, 0u);
}
