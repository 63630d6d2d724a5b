// The cube path: GM -> L1 (DataCopy with Nd2NzParams: row-major to the NZ fractal layout), L1 -> L0A
// / L0B (LoadData, whole 512-byte fractals), Mmad into L0C (f32), and L0C -> GM (Fixpipe).
//
// Layouts (shared/REFERENCE.md "vector and cube data basics"), for f16/bf16 16x16 fractals with
// M1 = ceil(m / 16), K1 = ceil(k / 16), N1 = ceil(n / 16):
//   NZ in L1          element (i, j) of a rows x cols matrix at ((j / 16) * rows_padded + i) * 16 + j % 16
//   A in L0A          fractal (i / 16, kk / 16) at index (i / 16) * K1 + kk / 16, row-major inside
//   B in L0B          fractal (kk / 16, j / 16) at index (kk / 16) * N1 + j / 16, column-major inside
//   C in L0C (f32)    fractal (i / 16, j / 16) at index (j / 16) * M1 + i / 16, row-major inside
// So A's NZ fractals are reordered into L0A by LoadData, and B's are loaded transposed (ifTranspose).
#pragma once

#include <cstdint>
#include <source_location>

#include "npuscope/opkit/tensor.h"

namespace npuscope::opkit {

// Ascend C's Nd2NzParams, one matrix (ndNum 1): nValue rows of dValue elements, srcDValue elements
// apart in GM, to NZ with dstNzC0Stride rows per column block (the padded row count). The fractal
// padding (rows up to dstNzC0Stride, columns up to a multiple of 16) is filled with zeros.
struct Nd2NzParams {
  std::uint16_t ndNum = 1;
  std::uint16_t nValue = 0;
  std::uint16_t dValue = 0;
  std::uint16_t srcNdMatrixStride = 0;
  std::uint16_t srcDValue = 0;
  std::uint16_t dstNzC0Stride = 0;
  std::uint16_t dstNzNStride = 1;
  std::uint16_t dstNzMatrixStride = 0;
};

// Ascend C's LoadData2DParams: repeatTimes fractals of 512 bytes, the i-th from source fractal
// startIndex + i * srcStride to destination fractal i * (1 + dstGap), each transposed (16x16)
// when ifTranspose.
struct LoadData2DParams {
  std::uint16_t startIndex = 0;
  std::uint8_t repeatTimes = 1;
  std::uint16_t srcStride = 1;
  std::uint8_t sid = 0;
  std::uint16_t dstGap = 0;
  bool ifTranspose = false;
  std::uint8_t addrMode = 0;
};

// C (+)= A x B over m x n x k (each 1..4095); cmatrixInitVal true starts C from zero.
struct MmadParams {
  std::uint16_t m = 0;
  std::uint16_t n = 0;
  std::uint16_t k = 0;
  bool isBias = false;
  std::int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  std::uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
};

// L0C (NZ, f32) to GM (row-major): mSize x nSize results, srcStride rows per L0C column block
// (M1 * 16), dstStride elements between GM rows; rounded to the GM tensor's dtype.
struct FixpipeParams {
  std::uint32_t nSize = 0;
  std::uint32_t mSize = 0;
  std::uint32_t srcStride = 0;
  std::uint32_t dstStride = 0;
};

namespace detail {
void copy_nd2nz(const LocalRef& dst, DType t, const void* src, const Nd2NzParams& p, const std::source_location& loc);
void load_data(const LocalRef& dst, const LocalRef& src, const LoadData2DParams& p, const std::source_location& loc);
void mmad(DType in, const LocalRef& c, const LocalRef& a, const LocalRef& b, const MmadParams& p,
          const std::source_location& loc);
void fixpipe(void* dst, DType t, const LocalRef& src, const FixpipeParams& p, const std::source_location& loc);
}  // namespace detail

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& params,
              std::source_location loc = std::source_location::current()) {
  detail::copy_nd2nz(dst.ref(), dtype_of<T>(), src.GetPhyAddr(), params, loc);
}

template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& params,
              std::source_location loc = std::source_location::current()) {
  detail::load_data(dst.ref(), src.ref(), params, loc);
}

template <class T>
void Mmad(const LocalTensor<float>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, const MmadParams& params,
          std::source_location loc = std::source_location::current()) {
  detail::mmad(dtype_of<T>(), c.ref(), a.ref(), b.ref(), params, loc);
}

template <class T>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<float>& src, const FixpipeParams& params,
             std::source_location loc = std::source_location::current()) {
  detail::fixpipe(dst.GetPhyAddr(), dtype_of<T>(), src.ref(), params, loc);
}

}  // namespace npuscope::opkit
