// GatherElements, ScatterElements, GatherND, ScatterND: ONNX's examples by hand on the CPU,
// negative indices (wrap) and out-of-range ones (errors), scatter reductions (duplicates in order, exact int64), NPU
// results identical to the CPU's (bytes for the copies, f32 tolerance for the reductions), f64
// reductions on the AI CPU, and bad shapes rejected.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "emulator/ext_op_test_util.h"
#include "npuscope/emulator/errors.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;
using npuscope::emulator::ops::Ints;

namespace {

class ScatterGatherOpsTest : public OpTest {};

Tensor gather_elements(const Tensor& x, const Tensor& idx, std::int64_t axis) {
  return call_op1("GatherElements", {x, idx}, {{"axis", axis}});
}

Tensor scatter_elements(const Tensor& x, const Tensor& idx, const Tensor& upd, std::int64_t axis,
                        const std::string& reduction = "none") {
  return call_op1("ScatterElements", {x, idx, upd}, {{"axis", axis}, {"reduction", reduction}});
}

Tensor gather_nd(const Tensor& x, const Tensor& idx, std::int64_t batch_dims = 0) {
  return call_op1("GatherND", {x, idx}, {{"batch_dims", batch_dims}});
}

Tensor scatter_nd(const Tensor& x, const Tensor& idx, const Tensor& upd, const std::string& reduction = "none") {
  return call_op1("ScatterND", {x, idx, upd}, {{"reduction", reduction}});
}

}  // namespace

TEST_F(ScatterGatherOpsTest, GatherElementsOnnxExamples) {
  EXPECT_EQ(to_vec(gather_elements(floats({1, 2, 3, 4}, {2, 2}), ints({0, 0, 1, 0}, {2, 2}), 1)),
            (Doubles{1, 1, 4, 3}));
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const Tensor y = gather_elements(x, ints({1, 2, 0, 2, 0, 0}, {2, 3}, DType::kI32), 0);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vec(y), (Doubles{4, 8, 3, 7, 2, 3}));
  EXPECT_EQ(to_vec(gather_elements(x, ints({-1, -2, 0, -2, 0, 0}, {2, 3}), 0)), (Doubles{7, 5, 3, 4, 2, 3}));
  EXPECT_EQ(to_vec(gather_elements(x, ints({-3, 2, 1}, {1, 3}), 0)), (Doubles{1, 8, 6}));  // -3: the first row
}

TEST_F(ScatterGatherOpsTest, ScatterElementsOnnxExamplesAndReductions) {
  const Tensor zeros = Tensor::zeros({3, 3}, DType::kF32);
  const Tensor upd = floats({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3});
  const Tensor y = scatter_elements(zeros, ints({1, 0, 2, 0, 2, 1}, {2, 3}), upd, 0);
  EXPECT_EQ(to_vec(y), to_vec(floats({2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}, {9})));
  const Tensor row = floats({1, 2, 3, 4, 5}, {1, 5});
  const Tensor two = floats({1.1f, 2.1f}, {1, 2});
  EXPECT_EQ(to_vec(scatter_elements(row, ints({1, 3}, {1, 2}), two, 1)), to_vec(floats({1, 1.1f, 3, 2.1f, 5}, {5})));
  EXPECT_EQ(to_vec(scatter_elements(row, ints({1, -3}, {1, 2}), two, 1)), to_vec(floats({1, 1.1f, 2.1f, 4, 5}, {5})));
  // Duplicates: 'none' keeps the last; reductions combine in order with the data.
  const Tensor dup = ints({1, 1}, {1, 2});
  EXPECT_EQ(to_vec(scatter_elements(row, dup, two, 1))[1], static_cast<double>(2.1f));
  EXPECT_EQ(to_vec(scatter_elements(row, dup, two, 1, "add"))[1],
            static_cast<double>(static_cast<float>(2.0 + static_cast<double>(1.1f) + static_cast<double>(2.1f))));
  EXPECT_EQ(to_vec(scatter_elements(row, dup, two, 1, "mul"))[1],
            static_cast<double>(static_cast<float>(2.0 * static_cast<double>(1.1f) * static_cast<double>(2.1f))));
  EXPECT_EQ(to_vec(scatter_elements(row, dup, two, 1, "max"))[1], static_cast<double>(2.1f));
  EXPECT_EQ(to_vec(scatter_elements(row, dup, two, 1, "min"))[1], static_cast<double>(1.1f));
  // int64 sums are exact.
  const std::int64_t p60 = std::int64_t{1} << 60;
  const Tensor big = ints({p60, 7}, {2});
  for (const Tensor& t : {big, on_npu({big})[0]}) {
    const Tensor r =
        call_op1("ScatterElements", {t, ints({0, 0}, {2}).to(t.device()), ints({1, 2}, {2}).to(t.device())},
                 {{"reduction", std::string("add")}});
    EXPECT_EQ(r.to_ints(), (I64s{p60 + 3, 7}));
  }
}

TEST_F(ScatterGatherOpsTest, GatherNdOnnxExamples) {
  const Tensor m = ints({0, 1, 2, 3}, {2, 2}, DType::kI32);
  EXPECT_EQ(gather_nd(m, ints({0, 0, 1, 1}, {2, 2})).to_ints(), (I64s{0, 3}));
  const Tensor rows = gather_nd(m, ints({1, 0}, {2, 1}));
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(rows.to_ints(), (I64s{2, 3, 0, 1}));
  const Tensor cube = ints({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}, DType::kI32);
  EXPECT_EQ(gather_nd(cube, ints({0, 1, 1, 0}, {2, 2})).to_ints(), (I64s{2, 3, 4, 5}));
  const Tensor nested = gather_nd(cube, ints({0, 1, 1, 0}, {2, 1, 2}));
  EXPECT_EQ(nested.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(nested.to_ints(), (I64s{2, 3, 4, 5}));
  const Tensor batched = gather_nd(cube, ints({1, 0}, {2, 1}), 1);
  EXPECT_EQ(batched.shape(), (Shape{2, 2}));
  EXPECT_EQ(batched.to_ints(), (I64s{2, 3, 4, 5}));
  EXPECT_EQ(gather_nd(m, ints({-1, -2}, {2, 1})).to_ints(), (I64s{2, 3, 0, 1}));  // -1: last row, -2: first
}

TEST_F(ScatterGatherOpsTest, ScatterNdOnnxExamplesAndReductions) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  const Tensor idx = ints({4, 3, 1, 7}, {4, 1});
  EXPECT_EQ(to_vec(scatter_nd(x, idx, floats({9, 10, 11, 12}, {4}))), (Doubles{1, 11, 3, 10, 9, 6, 7, 12}));
  // Slabs: one index names a whole row.
  const Tensor y = scatter_nd(Tensor::zeros({2, 2}, DType::kF32), ints({1}, {1, 1}), floats({5, 6}, {1, 2}));
  EXPECT_EQ(to_vec(y), (Doubles{0, 0, 5, 6}));
  const Tensor d = floats({10, 20}, {2});
  const Tensor dup = ints({0, 0}, {2, 1});
  EXPECT_EQ(to_vec(scatter_nd(d, dup, floats({1, 2}, {2}), "add")), (Doubles{13, 20}));
  EXPECT_EQ(to_vec(scatter_nd(d, dup, floats({1, 2}, {2}), "mul")), (Doubles{20, 20}));
  EXPECT_EQ(to_vec(scatter_nd(d, dup, floats({1, 2}, {2}))), (Doubles{2, 20}));  // the last wins
  EXPECT_EQ(to_vec(scatter_nd(d, ints({-1, -2}, {2, 1}), floats({1, 2}, {2}))), (Doubles{2, 1}));
}

TEST_F(ScatterGatherOpsTest, NpuMatchesCpu) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI64}) {
    const Tensor x = Tensor::uniform({5, 7}, t, DeviceRef::cpu(), 1, -50, 50);
    const Tensor idx = ints({4, 0, -1, 2, -6, 1, 3, 0, 0, 6, -7, 2}, {2, 6});
    const Tensor upd = Tensor::uniform({2, 6}, t, DeviceRef::cpu(), 2, -50, 50);
    EXPECT_TRUE(npu_bytes_match_cpu("GatherElements", {x, idx}, {{"axis", std::int64_t{1}}}));
    EXPECT_TRUE(npu_bytes_match_cpu("ScatterElements", {x, idx, upd}, {{"axis", std::int64_t{1}}}));
    const Tensor nd = ints({4, 6, 0, 0, -1, 3}, {3, 2});
    EXPECT_TRUE(npu_bytes_match_cpu("GatherND", {x, nd}));
    EXPECT_TRUE(npu_bytes_match_cpu("ScatterND", {x, nd, Tensor::uniform({3}, t, DeviceRef::cpu(), 3, -5, 5)}));
    for (const char* r : {"add", "mul", "max", "min"}) {
      const auto tol = default_tolerance(t);
      EXPECT_TRUE(npu_close_to_cpu("ScatterElements", {x, idx, upd},
                                   {{"axis", std::int64_t{1}}, {"reduction", std::string(r)}}, tol.rtol, tol.atol))
          << r << " " << dtype_name(t);
    }
  }
  // f64 reductions run on the AI CPU (the NPU kernel adds in f32), with the golden's result.
  const Tensor x64 = floats({1, 2, 3}, {3}, DType::kF64);
  const Tensor third = floats({1.0f / 3}, {1}, DType::kF64);
  const auto r = run_both("ScatterND", {x64, ints({0}, {1, 1}), third}, {{"reduction", std::string("add")}});
  EXPECT_EQ(bytes_of(r.npu[0]), bytes_of(r.cpu[0]));
  EXPECT_EQ(to_vec(r.cpu[0])[0], 1.0 + static_cast<double>(1.0f / 3));
}

// ONNX: an index outside [-dim, dim - 1] is an error. Each op says which index, its range and where;
// on the NPU the fault comes with the next synchronisation and names the op instance.
TEST_F(ScatterGatherOpsTest, OutOfRangeIndicesAreErrors) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor row = floats({1, 2, 3, 4, 5}, {1, 5});
  const Tensor two = floats({1.1f, 2.1f}, {1, 2});
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  struct Bad {
    const char* op;
    std::vector<Tensor> inputs;
    Attrs attrs;
    std::vector<const char*> says;
  };
  const std::vector<Bad> cases = {
      {"GatherElements", {x, ints({0, 3}, {1, 2})}, {{"axis", std::int64_t{0}}}, {"index 3", "[-3, 2]", "axis 0"}},
      {"GatherElements", {x, ints({-4, 0}, {1, 2})}, {{"axis", std::int64_t{0}}}, {"index -4", "[-3, 2]"}},
      {"ScatterElements",
       {row, ints({5, 0}, {1, 2}), two},
       {{"axis", std::int64_t{1}}},
       {"index 5", "[-5, 4]", "axis 1"}},
      {"ScatterElements",
       {row, ints({0, -6}, {1, 2}), two},
       {{"axis", std::int64_t{1}}, {"reduction", std::string("add")}},
       {"index -6", "[-5, 4]"}},
      {"GatherND", {x, ints({0, max}, {1, 2})}, {}, {"index 9223372036854775807", "[-2, 1]"}},
      {"GatherND", {x, ints({min}, {1, 1})}, {}, {"index -9223372036854775808", "[-3, 2]"}},
      {"ScatterND", {x, ints({3}, {1, 1}), floats({1, 2}, {1, 2})}, {}, {"index 3", "[-3, 2]"}},
  };
  for (const Bad& b : cases) {
    const std::string cpu = error_of([&] { call_op(b.op, b.inputs, b.attrs); });
    EXPECT_TRUE(mentions(cpu, {b.op})) << b.op;
    for (const char* part : b.says) EXPECT_TRUE(mentions(cpu, {part})) << b.op;
    const auto out = call_op(b.op, on_npu(b.inputs), b.attrs, {.name = "bad_indices"});
    const std::string npu = error_of([&] { out[0].cpu(); });
    EXPECT_TRUE(mentions(npu, {"'bad_indices'", b.op})) << b.op;
    for (const char* part : b.says) EXPECT_TRUE(mentions(npu, {part})) << b.op;
  }
  // The deprecated ONNX Scatter runs as ScatterElements (onnx adapter), so it is covered above.
}

TEST_F(ScatterGatherOpsTest, RejectsBadShapes) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THROW(gather_elements(x, ints({0, 1}, {2}), 0), InvalidArgument);           // rank differs
  EXPECT_THROW(gather_elements(x, ints({0, 0, 0, 0}, {1, 4}), 0), InvalidArgument);  // 4 > 3 outside axis
  EXPECT_THROW(gather_elements(x, floats({0, 0}, {1, 2}), 0), InvalidArgument);      // float indices
  EXPECT_THROW(gather_elements(x, ints({0, 0}, {1, 2}), 2), InvalidArgument);
  EXPECT_THROW(scatter_elements(x, ints({0, 0}, {1, 2}), floats({1}, {1, 1}), 0), InvalidArgument);
  EXPECT_THROW(scatter_elements(x, ints({0, 0}, {1, 2}), floats({1, 1}, {1, 2}), 0, "sub"), InvalidArgument);
  EXPECT_THROW(scatter_elements(x, ints({0, 0}, {1, 2}), ints({1, 1}, {1, 2}), 0), InvalidArgument);  // dtype
  EXPECT_THROW(gather_nd(x, ints({0, 0, 0}, {1, 3})), InvalidArgument);                               // k > rank
  EXPECT_THROW(gather_nd(x, ints({0, 0, 0}, {3, 1}), 1), InvalidArgument);                            // batch 3 vs 2
  EXPECT_THROW(gather_nd(x, ints({0, 0}, {2, 1}), 2), InvalidArgument);                     // batch_dims too large
  EXPECT_THROW(scatter_nd(x, ints({0}, {1, 1}), floats({1, 2}, {1, 2})), InvalidArgument);  // needs [1, 3]
}
