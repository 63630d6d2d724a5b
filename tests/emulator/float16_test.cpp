// f16 / bf16 conversions (float16.h): round to nearest even at every edge of the formats, NaN kept
// quiet, and the bulk (F16C) path equal to the scalar software path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "npuscope/emulator/float16.h"

using namespace npuscope::emulator;

namespace {

float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool half_is_quiet_nan(std::uint16_t h) { return half_is_nan(h) && (h & 0x200u) != 0; }

const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST(Float16, ZerosKeepTheirSign) {
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_bits(half_bits_to_float(0x8000)), 0x80000000u);
}

TEST(Float16, Subnormals) {
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // halfway to 0: ties to even (0)
  EXPECT_EQ(float_to_half_bits(-std::ldexp(1.0f, -25)), 0x8000);
  EXPECT_EQ(float_to_half_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);  // just above: up
  EXPECT_EQ(float_to_half_bits(3 * std::ldexp(1.0f, -25)), 0x0002);  // 1.5 units: tie, rounds to even 2
  EXPECT_EQ(float_to_half_bits(5 * std::ldexp(1.0f, -25)), 0x0002);  // 2.5 units: tie, rounds to even 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -26)), 0x0000);
  // Largest subnormal: 1023 * 2^-24.
  EXPECT_EQ(float_to_half_bits(1023 * std::ldexp(1.0f, -24)), 0x03ff);
  EXPECT_EQ(half_bits_to_float(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x0200), std::ldexp(1.0f, -15));
  // 1023.5 units ties to even 1024 = the smallest normal.
  EXPECT_EQ(float_to_half_bits(1023.5f * std::ldexp(1.0f, -24)), 0x0400);
}

TEST(Float16, NormalRangeEdges) {
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);  // max
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);  // below the halfway point to 65536: down
  EXPECT_EQ(float_to_half_bits(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // the tie rounds to even: inf
  EXPECT_EQ(float_to_half_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_half_bits(1e10f), 0x7c00);
}

TEST(Float16, TiesToEvenInTheNormalRange) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even mantissa (1) wins.
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the tie rounds up.
  EXPECT_EQ(float_to_half_bits(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 -> 2.
  EXPECT_EQ(float_to_half_bits(2.0f - std::ldexp(1.0f, -12)), 0x4000);
}

TEST(Float16, InfinityAndNaN) {
  EXPECT_EQ(float_to_half_bits(kInf), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-kInf), 0xfc00);
  EXPECT_EQ(half_bits_to_float(0x7c00), kInf);
  EXPECT_EQ(half_bits_to_float(0xfc00), -kInf);
  EXPECT_TRUE(half_is_quiet_nan(float_to_half_bits(std::numeric_limits<float>::quiet_NaN())));
  // A signalling NaN whose payload sits only in the low bits must not become inf.
  const std::uint16_t h = float_to_half_bits(bits_to_float(0x7f800001u));
  EXPECT_TRUE(half_is_quiet_nan(h)) << std::hex << h;
  EXPECT_TRUE(half_is_quiet_nan(float_to_half_bits(bits_to_float(0xffc00000u))));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7c01)));
}

TEST(Float16, EveryHalfRoundTripsThroughFloat) {
  std::vector<std::uint16_t> all(65536), back(65536);
  std::vector<float> wide(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
  half_to_float_n(all.data(), wide.data(), all.size());
  float_to_half_n(wide.data(), back.data(), wide.size());
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float scalar = half_bits_to_float(h);
    if (half_is_nan(h)) {
      ASSERT_TRUE(std::isnan(wide[i])) << i;
      ASSERT_TRUE(half_is_nan(back[i])) << i;
      ASSERT_TRUE(half_is_quiet_nan(float_to_half_bits(scalar))) << i;
      continue;
    }
    ASSERT_EQ(float_bits(wide[i]), float_bits(scalar)) << "bulk vs scalar widening of " << i;
    ASSERT_EQ(back[i], h) << "bulk round trip of " << i;
    ASSERT_EQ(float_to_half_bits(scalar), h) << "scalar round trip of " << i;
  }
}

TEST(Float16, BulkNarrowingEqualsScalar) {
  std::mt19937 rng(1234);
  std::vector<float> values;
  // Random bit patterns over the whole float range, then a dense band around f16's edges.
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 100000; ++i) values.push_back(bits_to_float(any_bits(rng)));
  std::uniform_real_distribution<float> near_max(65000.0f, 66000.0f), near_min(0.0f, 1.0e-4f);
  for (int i = 0; i < 20000; ++i) {
    values.push_back(near_max(rng));
    values.push_back(-near_max(rng));
    values.push_back(near_min(rng));
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, 65535.0f, std::ldexp(1.0f, -25), 3 * std::ldexp(1.0f, -25), kInf, -kInf,
                  0.0f, -0.0f}) {
    values.push_back(f);
  }
  values.push_back(7.0f);  // an odd tail so the non-vector remainder runs too
  std::vector<std::uint16_t> bulk(values.size());
  float_to_half_n(values.data(), bulk.data(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t scalar = float_to_half_bits(values[i]);
    if (std::isnan(values[i])) {
      ASSERT_TRUE(half_is_quiet_nan(bulk[i]) && half_is_quiet_nan(scalar)) << i;
    } else {
      ASSERT_EQ(bulk[i], scalar) << "value " << values[i] << " (bits " << std::hex << float_bits(values[i]) << ")";
    }
  }
}

TEST(Float16, ReportsF16c) {
  // The flag is stable and matches the CPU; both paths are checked above either way.
  EXPECT_EQ(has_f16c(), has_f16c());
  EXPECT_EQ(has_f16c(), __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx"));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1) wins; 1 + 3·2^-8 rounds up to even.
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3f81);
  // Max bf16 (2 - 2^-7)·2^127 = 0x7f7f; the float max rounds to inf.
  EXPECT_EQ(float_to_bf16_bits(bits_to_float(0x7f7f0000u)), 0x7f7f);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(bits_to_float(0x7f7f7fffu)), 0x7f7f);  // below the tie
  EXPECT_EQ(float_to_bf16_bits(bits_to_float(0x7f7f8000u)), 0x7f80);  // the tie: odd -> up to inf
  // Subnormals round like everything else.
  EXPECT_EQ(float_to_bf16_bits(bits_to_float(0x00008000u)), 0x0000);  // tie to even 0
  EXPECT_EQ(float_to_bf16_bits(bits_to_float(0x00018000u)), 0x0002);  // tie, odd 1 -> 2
  EXPECT_EQ(float_to_bf16_bits(kInf), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-kInf), 0xff80);
}

TEST(BFloat16, NaNStaysQuietNaN) {
  for (std::uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    const std::uint16_t h = float_to_bf16_bits(bits_to_float(bits));
    EXPECT_EQ(h & 0x7f80u, 0x7f80u) << std::hex << bits;
    EXPECT_NE(h & 0x0040u, 0u) << std::hex << bits;  // quiet bit
    EXPECT_TRUE(std::isnan(bf16_bits_to_float(h)));
  }
}

TEST(BFloat16, EveryBf16RoundTripsAndBulkEqualsScalar) {
  std::vector<std::uint16_t> all(65536), back(65536);
  std::vector<float> wide(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
  bf16_to_float_n(all.data(), wide.data(), all.size());
  float_to_bf16_n(wide.data(), back.data(), wide.size());
  for (std::uint32_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(float_bits(wide[i]), i << 16) << i;
    const bool nan = (i & 0x7f80u) == 0x7f80u && (i & 0x7fu) != 0;
    if (nan) {
      ASSERT_NE(back[i] & 0x40u, 0u) << i;
    } else {
      ASSERT_EQ(back[i], i) << i;
    }
  }
  std::mt19937 rng(99);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  std::vector<float> values(50001);
  for (auto& v : values) v = bits_to_float(any_bits(rng));
  std::vector<std::uint16_t> bulk(values.size());
  float_to_bf16_n(values.data(), bulk.data(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(bulk[i], float_to_bf16_bits(values[i])) << i;
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -9)), 1.0f);
  EXPECT_EQ(round_to_half(1.0f + std::ldexp(1.0f, -12)), 1.0f);
}
