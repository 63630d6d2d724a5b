// Einsum through the ONNX importer (adapters_math.cpp): explicit and implicit outputs, transposes,
// diagonals and traces, sums, batched and broadcast contractions, outer products, three operands,
// on cpu and npu:0; and the errors for bad equations.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/adapter_test_util.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope::emulator;
using namespace npuscope::emulator::testing;

namespace {

class EinsumTest : public OpTest {};

// Runs einsum(equation, inputs) on `device`.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& inputs, DeviceRef device = DeviceRef::cpu()) {
  OneNodeModel m("Einsum", 12);
  for (std::size_t i = 0; i < inputs.size(); ++i) m.input(std::string(1, 'x').append(std::to_string(i)), inputs[i]);
  m.attr("equation", equation);
  return m.run(1, device)[0];
}

// Both devices give `want` with shape `shape`.
void expect_einsum(const std::string& eq, const std::vector<Tensor>& in, const Shape& shape, const Doubles& want) {
  for (DeviceRef d : {DeviceRef::cpu(), DeviceRef::npu()}) {
    const Tensor y = einsum(eq, in, d);
    EXPECT_EQ(y.shape(), shape) << eq;
    EXPECT_TRUE(all_close(to_vec(y), want, 1e-6, 1e-6)) << eq;
  }
}

// [[1, 2, 3], [4, 5, 6]]
const Tensor& a23() {
  static const Tensor t = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  return t;
}

// The (op type, task type) of every device task that ends while it lives.
struct TaskLog {
  std::vector<std::pair<std::string, npuscope::TaskType>> tasks;
  npuscope::hooks::SubscriberTable table;
  TaskLog() {
    table.user = this;
    table.on_task = [](void* u, const npuscope::hooks::TaskRecord& r) {
      if (r.phase == npuscope::hooks::TaskPhase::kEnd)
        static_cast<TaskLog*>(u)->tasks.emplace_back(r.op_type, r.task_type);
    };
    npuscope::hooks::subscribe(&table);
  }
  ~TaskLog() { npuscope::hooks::subscribe(nullptr); }
};

}  // namespace

TEST_F(EinsumTest, TransposeSumAndImplicitOutput) {
  expect_einsum("ij->ji", {a23()}, {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_einsum("ji", {a23()}, {3, 2}, {1, 4, 2, 5, 3, 6});  // implicit: letters in order, i j
  expect_einsum("ij", {a23()}, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_einsum("ij->i", {a23()}, {2}, {6, 15});
  expect_einsum("i j -> ", {a23()}, {}, {21});
}

TEST_F(EinsumTest, DiagonalsAndTraces) {
  const Tensor sq = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  expect_einsum("ii->i", {sq}, {3}, {1, 5, 9});
  expect_einsum("ii", {sq}, {}, {15});  // implicit: a label used twice is summed
  const Tensor batch = floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  expect_einsum("...ii->...i", {batch}, {2, 2}, {1, 4, 5, 8});
  expect_einsum("iij->j", {floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})}, {2}, {1 + 7, 2 + 8});
}

TEST_F(EinsumTest, ContractionsOnTheCube) {
  const Tensor b32 = floats({1, 0, 2, 1, 0, 3}, {3, 2});
  expect_einsum("ij,jk->ik", {a23(), b32}, {2, 2}, {5, 11, 14, 23});
  expect_einsum("ij,jk", {a23(), b32}, {2, 2}, {5, 11, 14, 23});
  expect_einsum("i,i", {floats({1, 2, 3}, {3}), floats({4, 5, 6}, {3})}, {}, {32});
  expect_einsum("ij,ij->i", {a23(), a23()}, {2}, {14, 77});
  // Batched: bij,bjk -> bik with b = 2.
  const Tensor x = floats({1, 2, 3, 4, 1, 0, 0, 1}, {2, 2, 2}), y = floats({1, 1, 0, 1, 2, 0, 0, 2}, {2, 2, 2});
  expect_einsum("bij,bjk->bik", {x, y}, {2, 2, 2}, {1, 3, 3, 7, 2, 0, 0, 2});
  // Three operands.
  expect_einsum("ij,jk,kl->il", {a23(), b32, floats({1, 1}, {2, 1})}, {2, 1}, {16, 37});
}

TEST_F(EinsumTest, ContractionIsACubeTaskAndTheDiagonalAVectorCopy) {
  using npuscope::TaskType;
  std::vector<std::pair<std::string, TaskType>> tasks;
  {
    TaskLog log;
    const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), y = floats({1, 0, 0, 1, 1, 1, 1, 1}, {2, 2, 2});
    einsum("bji,bjk->bik", {x, y}, DeviceRef::npu());  // [b, K, M]: read transposed by the cube
    einsum("ijb,bjk->bik", {x, y}, DeviceRef::npu());  // [M, K, b]: transposed first
    einsum("ii->i", {floats({1, 2, 3, 4}, {2, 2})}, DeviceRef::npu());
    Runtime::get().synchronize_all();  // the device thread has recorded every task's end
    tasks = log.tasks;
  }
  const std::vector<std::pair<std::string, TaskType>> want{{"BatchMatMul", TaskType::kAiCore},
                                                           {"Transpose", TaskType::kAiVectorCore},
                                                           {"BatchMatMul", TaskType::kAiCore},
                                                           {"AsStrided", TaskType::kAiVectorCore}};
  EXPECT_EQ(tasks, want);
}

TEST_F(EinsumTest, BroadcastAndOuterProducts) {
  expect_einsum("i,j->ij", {floats({1, 2}, {2}), floats({1, 10, 100}, {3})}, {2, 3}, {1, 10, 100, 2, 20, 200});
  // '...' broadcast: [2, 1, 2] x [3, 2] -> [2, 3] after contracting j.
  const Tensor x = floats({1, 2, 3, 4}, {2, 1, 2}), y = floats({1, 0, 0, 1, 1, 1}, {3, 2});
  expect_einsum("...j,...j->...", {x, y}, {2, 3}, {1, 2, 3, 3, 4, 7});
  // The implicit output puts the '...' dims first.
  expect_einsum("...i,...i", {x, y}, {2, 3}, {1, 2, 3, 3, 4, 7});
}

TEST_F(EinsumTest, ScalarsEmptyDimsAndSizeOneLabels) {
  expect_einsum(",->", {floats({3}, {}), floats({4}, {})}, {}, {12});
  expect_einsum("i,->i", {floats({1, 2}, {2}), floats({3}, {})}, {2}, {3, 6});
  expect_einsum("ij->", {floats({}, {0, 3})}, {}, {0});
  expect_einsum("ij,jk", {floats({}, {2, 0}), floats({}, {0, 3})}, {2, 3}, {0, 0, 0, 0, 0, 0});
  // A contracted label of size 1 broadcasts: sum_i a[0] * b[i].
  expect_einsum("i,i", {floats({2}, {1}), floats({1, 2, 3}, {3})}, {}, {12});
  expect_einsum("Ab,bC->AC", {floats({1, 2}, {1, 2}), floats({3, 4}, {2, 1})}, {1, 1}, {11});
}

TEST_F(EinsumTest, BadEquationsNameTheProblem) {
  EXPECT_TRUE(mentions(error_of([&] { einsum("ij,jk->ik", {a23()}); }), {"Einsum", "2 input terms for 1 inputs"}));
  EXPECT_TRUE(mentions(error_of([&] { einsum("ijk->i", {a23()}); }), {"'ijk'", "names 3 dims", "has 2"}));
  EXPECT_TRUE(mentions(error_of([&] { einsum("i1->i", {a23()}); }), {"'1'", "only letters"}));
  EXPECT_TRUE(mentions(error_of([&] { einsum("ij->k", {a23()}); }), {"output label that no input term has"}));
  EXPECT_TRUE(mentions(error_of([&] { einsum("ij,ij->", {a23(), floats({1, 2, 3, 4}, {2, 2})}); }), {"sizes 3 and 2"}));
  EXPECT_TRUE(mentions(error_of([&] { einsum("ii->i", {a23()}); }), {"repeated label", "[2, 3]"}));
}
