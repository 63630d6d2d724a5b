// Host memory for the storages of cpu-device tensors, with freed blocks kept for reuse.
//
// Note [Host block cache]
// Every op on the cpu device writes a fresh output tensor, and glibc serves a large block by mmap (or
// trims its heap when it is freed), so the op's first write faulted every page in from the kernel,
// zeroed: once the golden's element-wise maps ran in f32 (Note [Golden maps in f32]), page faults were
// a third of a ConvNeXt-tiny pass on `cpu`. Freed blocks of at least kMinCachedBytes are therefore
// kept by size class (eight classes per power of two: at most 12.5 % more than asked for) and handed
// to the next storage of that class, as PyTorch's caching allocator does for device memory. At most
// kMaxCachedBytes are kept (a block that does not fit is freed); a failed allocation frees the cache
// and tries again. Under ASan nothing is kept, so that a use of a freed host tensor is still found.
#pragma once

#include <cstddef>

namespace npuscope::emulator {

// 64-byte aligned memory of at least `bytes` (> 0) bytes, or null when the host has none.
std::byte* allocate_host_block(std::size_t bytes);
// Gives back a block from allocate_host_block(bytes), with the same `bytes`.
void free_host_block(std::byte* block, std::size_t bytes) noexcept;

}  // namespace npuscope::emulator
