// Which tensors the device's L2 still holds, for KernelCost::hot_bytes.
//
// Note [L2 residency]
// ~~~~~~~~~~~~~~~~~~~
// On a 910B the L2 (192 MiB) holds what the last kernels wrote and read: a Relu right after the
// conv that wrote its input reads it at L2 speed (the shared profile's 32x64x55x55 Relu moves 50 MB
// in 15 us, 3.3 TB/s, twice what HBM gives), and a weight last touched a step ago comes from HBM.
// The model is an LRU over the traffic: every kernel touches its inputs and outputs in launch
// order, and a tensor is resident when the bytes touched since its last touch, plus its own, fit in
// the L2. Tensors are keys (a device address in the emulator, a shape's text in a real profile,
// where kernels record no addresses); a key touched again with another size counts at the new one.
// Not modelled: set associativity, prefetch, and the copy engines' traffic (H2D lands in HBM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace npuscope::emulator {

class L2Residency {
 public:
  explicit L2Residency(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Whether `key` (of `bytes`) is in the L2 now. Does not touch it.
  bool resident(std::uint64_t key, std::uint64_t bytes) const;
  // A kernel read or wrote `key`: it is the most recent data in the L2.
  void touch(std::uint64_t key, std::uint64_t bytes);
  std::uint64_t capacity() const { return capacity_; }

 private:
  // An open-addressing table (key 0: an empty slot), since every launch looks up each of its tensors:
  // no allocation per touch, one probe or two. A key's entry stays after it left the L2 (it is then
  // simply not resident); a rebuild at half load drops those.
  struct Slot {
    std::uint64_t key = 0;
    std::uint64_t at = 0;  // traffic_ just after the key's last touch
  };
  std::size_t find(std::uint64_t key) const;  // its slot, or the empty slot where it would go
  void rebuild();

  std::uint64_t capacity_;
  std::uint64_t traffic_ = 0;  // bytes touched so far
  std::vector<Slot> slots_;    // a power of two in size, or empty before the first touch
  std::size_t used_ = 0;
};

// An L2Residency shared by the host threads that launch on one device.
class SharedL2Residency {
 public:
  explicit SharedL2Residency(std::uint64_t capacity_bytes) : l2_(capacity_bytes) {}

  // Runs f(L2Residency&) under the lock: one launch's reads and writes as one step.
  template <class F>
  auto with(F&& f) {
    std::lock_guard lock(mutex_);
    return f(l2_);
  }

 private:
  std::mutex mutex_;
  L2Residency l2_;
};

}  // namespace npuscope::emulator
