// The table of CANN op types (runtime_hooks/cann_op_types.h): every emulator name is a registered op,
// and the lookups give the first row each way.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "npuscope/emulator/op_registry.h"
#include "npuscope/runtime_hooks/cann_op_types.h"

using namespace npuscope;

TEST(CannOpTypes, EveryEmulatorOpIsRegistered) {
  const auto& registry = emulator::OpRegistry::instance();
  for (const CannOpType& row : kCannOpTypes) {
    EXPECT_NE(registry.find_schema(row.emulator), nullptr)
        << "CANN type " << row.cann << " maps to " << row.emulator << ", which no kernel file registers";
  }
}

TEST(CannOpTypes, RowsAreUniqueAndFilled) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const CannOpType& row : kCannOpTypes) {
    EXPECT_FALSE(row.cann.empty());
    EXPECT_FALSE(row.emulator.empty()) << row.cann;
    EXPECT_TRUE(seen.insert({row.cann, row.emulator}).second) << row.cann << " -> " << row.emulator << " twice";
  }
}

TEST(CannOpTypes, LookupsGiveTheFirstRow) {
  static_assert(emulator_op_of("Conv2D") == "Conv2d");
  EXPECT_EQ(emulator_op_of("MatMulV2"), "MatMul");  // a second row says Gemm (with a bias)
  EXPECT_EQ(emulator_op_of("MatMulV3"), "MatMul");
  EXPECT_EQ(emulator_op_of("ReluGrad"), "ThresholdGrad");
  EXPECT_EQ(emulator_op_of("TensorMove"), "ViewCopy");
  EXPECT_EQ(emulator_op_of("RealDiv"), "Div");
  EXPECT_EQ(emulator_op_of("LogSoftmaxV2"), "LogSoftmax");
  EXPECT_EQ(emulator_op_of("DSAGenBitMask"), "");
  EXPECT_EQ(emulator_op_of(""), "");

  EXPECT_EQ(cann_op_of("Conv2d"), "Conv2D");
  EXPECT_EQ(cann_op_of("MatMul"), "MatMulV2");
  EXPECT_EQ(cann_op_of("Gemm"), "MatMulV2");
  EXPECT_EQ(cann_op_of("ThresholdGrad"), "ReluGrad");
  EXPECT_EQ(cann_op_of("ViewCopy"), "TensorMove");
  EXPECT_EQ(cann_op_of("Fill"), "Fill");
  EXPECT_EQ(cann_op_of("Muls"), "Mul");  // aclnnMuls launches CANN Mul
  EXPECT_EQ(cann_op_of("Expand"), "BroadcastTo");
  EXPECT_EQ(cann_op_of("AdaptiveAvgPool2d"), "AdaptiveAvgPool3d");
  EXPECT_EQ(cann_op_of("NoSuchOp"), "");
}
