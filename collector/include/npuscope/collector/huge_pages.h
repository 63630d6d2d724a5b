// Row arrays of a whole trace (10M tasks: ~1 GB) in 2 MiB pages.
//
// Note [Huge pages for row arrays]
// Loading a 10M-task trace fills about 1 GB of fresh memory. In 4 KiB pages that is 250,000 page
// faults, and on the virtual machines CI and users run on a fault is expensive (the trap leaves the
// guest): bench/analyze_bench.cpp spent 3.3 s of its 14 s in the kernel and more in TLB misses.
// Asking for transparent huge pages (madvise MADV_HUGEPAGE; Debian's default mode is `madvise`) on
// just the big arrays, before they are touched, took the same analysis from 13.1 s to 8.6 s. The
// cost is a possible wait in memory compaction when the machine has no free 2 MiB page (the kernel's
// defrag=madvise), which reusing a buffer avoids for the .pt reader (importer/src/torch_pt_file.cpp);
// a trace's row arrays are made once per load, so they take the pages. Small arrays are left alone:
// a huge page for a few rows would only waste memory.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuscope::collector {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Whether an array of `bytes` is big enough to be given huge pages (a smaller one would waste most
// of a 2 MiB page on its last part).
constexpr bool big_enough_for_huge_pages(std::size_t bytes) { return bytes >= 2 * kHugePageBytes; }

// Asks for huge pages on [data, data + bytes) where it spans whole 2 MiB pages (advice only: a
// kernel without transparent huge pages ignores it, and nothing fails).
inline void advise_huge_pages(const void* data, std::size_t bytes) {
  if (!big_enough_for_huge_pages(bytes)) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

// v.reserve(n), the new capacity in huge pages where it is big enough to matter: for an array about
// to be filled with a trace's rows (Note [Huge pages for row arrays]).
template <class T, class A>
void reserve_in_huge_pages(std::vector<T, A>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace npuscope::collector
