// Moving data: DataCopy (lengths and local addresses in 32-byte units, as the hardware requires) and
// DataCopyPad (any length; the tail of each block padded to 32 bytes in local memory).
//   GM -> UB / L1      MTE2
//   UB -> GM           MTE3
//   L0C -> GM          FIXP
//   L1 -> L0A / L0B    MTE1
//   UB -> UB           Vector
#pragma once

#include <cstdint>
#include <source_location>

#include "npuscope/opkit/tensor.h"

namespace npuscope::opkit {

struct DataCopyExtParams {
  std::uint16_t blockCount = 1;
  std::uint32_t blockLen = 0;   // bytes per block
  std::uint32_t srcStride = 0;  // gap between blocks: bytes in GM, 32-byte blocks in local memory
  std::uint32_t dstStride = 0;  // the same on the destination side
  std::uint32_t rsv = 0;
};
using DataCopyParams = DataCopyExtParams;

template <class T>
struct DataCopyPadExtParams {
  bool isPad = false;             // fill the 32-byte tail of each block with paddingValue
  std::uint8_t leftPadding = 0;   // accepted for source compatibility; must be 0
  std::uint8_t rightPadding = 0;  // elements
  T paddingValue{};
};

namespace detail {
void copy_gm_to_local(const LocalRef& dst, const void* src, std::uint64_t bytes, const std::source_location& loc);
void copy_local_to_gm(void* dst, const LocalRef& src, std::uint64_t bytes, const std::source_location& loc);
void copy_local_to_local(const LocalRef& dst, const LocalRef& src, std::uint64_t bytes,
                         const std::source_location& loc);
void copy_pad_gm_to_local(const LocalRef& dst, const void* src, const DataCopyExtParams& p, std::uint32_t elem,
                          const void* pad_value, const std::source_location& loc);
void copy_pad_local_to_gm(void* dst, const LocalRef& src, const DataCopyExtParams& p, const std::source_location& loc);
}  // namespace detail

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, std::uint32_t count,
              std::source_location loc = std::source_location::current()) {
  detail::copy_gm_to_local(dst.ref(), src.GetPhyAddr(), std::uint64_t{count} * sizeof(T), loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, std::uint32_t count,
              std::source_location loc = std::source_location::current()) {
  detail::copy_local_to_gm(dst.GetPhyAddr(), src.ref(), std::uint64_t{count} * sizeof(T), loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, std::uint32_t count,
              std::source_location loc = std::source_location::current()) {
  detail::copy_local_to_local(dst.ref(), src.ref(), std::uint64_t{count} * sizeof(T), loc);
}

template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& params,
                 const DataCopyPadExtParams<T>& pad = {}, std::source_location loc = std::source_location::current()) {
  detail::copy_pad_gm_to_local(dst.ref(), src.GetPhyAddr(), params, sizeof(T), pad.isPad ? &pad.paddingValue : nullptr,
                               loc);
}
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& params,
                 std::source_location loc = std::source_location::current()) {
  detail::copy_pad_local_to_gm(dst.GetPhyAddr(), src.ref(), params, loc);
}

}  // namespace npuscope::opkit
