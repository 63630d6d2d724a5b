// Data-parallel training of a small MLP over MPI, one emulated NPU per rank: launch with
//
//   mpirun -np 4 mpi_data_parallel [--steps 20] [--global-batch 32] [--slow-rank 2 --slow-factor 1.5]
//   mpirun -np 4 npuscope run -o traces/rank_%r.db -- mpi_data_parallel      (one trace per rank)
//
// Every rank holds the whole model, takes its 1/N share of each global batch, computes the
// gradients by hand (forward and backward with the emulator's ops), sums them over the ranks with
// the emulated AllReduce (HCCL's on the device, carried by MPI: comm::MpiWorld) and takes the same
// SGD step, as DistributedDataParallel does. The loss is the global batch's mean squared error
// (its sum AllReduced), so every rank prints the same number, and the result equals training on one
// process with the whole global batch up to float rounding: per-rank partial sums of x^T·dy add
// in another order than one matmul over the whole batch.
//
// --slow-rank R --slow-factor F makes rank R's device compute F times slower
// (DeviceSpec::compute_slowdown): the straggler `npuscope cluster` should name, while the other
// ranks wait for it in every AllReduce. --out FILE (with %r for the rank) writes the losses and the
// final parameters as hex floats, for tests that compare ranks bit by bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "npuscope/comm/mpi_world.h"
#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/runtime_hooks/launcher_env.h"
#include "sample_common.h"

namespace {

using namespace npuscope::samples;
using npuscope::ReduceOp;
using npuscope::emulator::Tensor;
namespace ops = npuscope::emulator::ops;

struct Options {
  CommonOptions common;
  int steps = 20;
  int global_batch = 32;
  int inputs = 64, hidden = 256, outputs = 16;
  float learning_rate = 0.05f;
  int slow_rank = -1;
  double slow_factor = 2.0;
  std::string out;
};

struct Model {
  Tensor w1, b1, w2, b2;
  std::vector<Tensor*> parameters() { return {&w1, &b1, &w2, &b2}; }
};

Tensor scalar(float v, emu::DeviceRef device) {
  return Tensor::from_floats(std::vector<float>{v}, {1}, emu::DType::kF32, device);
}

// Initial weights, the same on every rank from the seed (then broadcast from rank 0, as DDP does).
Model init_model(const Options& o, emu::DeviceRef device) {
  const std::uint64_t seed = o.common.seed;
  const auto layer = [&](int in, int out, std::uint64_t s) {
    return Tensor::randn({in, out}, emu::DType::kF32, device, seed * 16 + s, 1.0f / std::sqrt(static_cast<float>(in)));
  };
  return {layer(o.inputs, o.hidden, 1), Tensor::zeros({o.hidden}, emu::DType::kF32, device),
          layer(o.hidden, o.outputs, 2), Tensor::zeros({o.outputs}, emu::DType::kF32, device)};
}

// Step s's global batch (the same on every rank) and this rank's rows of it: inputs and the targets
// of a fixed linear teacher.
std::pair<Tensor, Tensor> batch(const Options& o, int step, int rank, int ranks, emu::DeviceRef device) {
  const emu::DeviceRef cpu = emu::DeviceRef::cpu();
  const std::uint64_t seed = o.common.seed;
  const Tensor x = Tensor::randn({o.global_batch, o.inputs}, emu::DType::kF32, cpu, seed * 1000003 + 100 + step);
  const Tensor teacher = Tensor::randn({o.inputs, o.outputs}, emu::DType::kF32, cpu, seed * 16 + 7, 0.3f);
  const Tensor y = ops::tanh(ops::matmul(x, teacher));
  const std::int64_t rows = o.global_batch / ranks, first = rows * rank;
  return {ops::slice(x, {first}, {first + rows}, {0}).to(device),
          ops::slice(y, {first}, {first + rows}, {0}).to(device)};
}

int train(const Options& o, npuscope::comm::MpiWorld& world) {
  const emu::DeviceRef device = emu::DeviceRef::npu(0);
  emu::Stream stream = emu::Runtime::get().device(0).default_stream();
  npuscope::emulator::Communicator& comm = world.world();
  Model model = init_model(o, device);
  for (Tensor* p : model.parameters()) *p = comm.broadcast(*p, 0, stream);
  // As DDP's constructor: wait for the broadcasts, so that every rank's host starts step 0 at their
  // common end, not after its own start-up (device creation takes each process its own real time).
  emu::Runtime::get().device(0).synchronize();

  const float grad_scale = 2.0f / static_cast<float>(o.global_batch * o.outputs);
  const Tensor lr = scalar(o.learning_rate, device), scale = scalar(grad_scale, device), one = scalar(1.0f, device);
  std::vector<float> losses;
  for (int step = 0; step < o.steps; ++step) {
    npuscope::emulator::ScopedStep marker(step);
    const auto [x, target] = batch(o, step, world.rank(), world.size(), device);
    // Forward: h = tanh(x·W1 + b1), y = h·W2 + b2.
    const Tensor h = ops::tanh(ops::add(ops::matmul(x, model.w1), model.b1));
    const Tensor y = ops::add(ops::matmul(h, model.w2), model.b2);
    const Tensor diff = ops::sub(y, target);
    const Tensor loss_sum =
        comm.all_reduce(ops::reduce_sum(ops::mul(diff, diff), {0, 1}, false), ReduceOp::kSum, stream);
    // Backward of the global mean: each rank's share of the sum, AllReduced below.
    const Tensor dy = ops::mul(diff, scale);
    const Tensor dh = ops::mul(ops::matmul(dy, ops::transpose(model.w2, {1, 0})), ops::sub(one, ops::mul(h, h)));
    std::vector<Tensor> grads = {ops::matmul(ops::transpose(x, {1, 0}), dh), ops::reduce_sum(dh, {0}, false),
                                 ops::matmul(ops::transpose(h, {1, 0}), dy), ops::reduce_sum(dy, {0}, false)};
    for (Tensor& g : grads) g = comm.all_reduce(g, ReduceOp::kSum, stream);
    const std::vector<Tensor*> params = model.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) *params[i] = ops::sub(*params[i], ops::mul(grads[i], lr));
    const float loss = loss_sum.to_floats()[0] / static_cast<float>(o.global_batch * o.outputs);
    losses.push_back(loss);
    if (world.rank() == 0) std::printf("step %d loss %.6f\n", step, static_cast<double>(loss));
  }
  if (!o.out.empty()) {
    const std::string path = npuscope::launcher::expand_rank(o.out, world.rank());
    std::ofstream out(path);
    for (std::size_t s = 0; s < losses.size(); ++s) out << "loss " << s << " " << std::hexfloat << losses[s] << "\n";
    const char* names[] = {"w1", "b1", "w2", "b2"};
    const std::vector<Tensor*> params = model.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      out << "param " << names[i];
      for (float v : params[i]->to_floats()) out << " " << std::hexfloat << v;
      out << "\n";
    }
    if (!out) {
      std::fprintf(stderr, "mpi_data_parallel: error: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  emu::Device& d = emu::Runtime::get().device(0);
  std::printf("rank %d of %d (node %d): %d steps, final loss %.6f, device busy %.1f us, clock %.1f us%s\n",
              world.rank(), world.size(), world.node(), o.steps,
              losses.empty() ? 0.0 : static_cast<double>(losses.back()),
              static_cast<double>(d.modelled_busy_ns()) / 1e3, static_cast<double>(d.last_task_end_ns()) / 1e3,
              world.rank() == o.slow_rank ? " (slowed)" : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.common.dtype = "f32";
  po::options_description desc("mpi_data_parallel options (launch with mpirun -np N)");
  add_common_options(desc, o.common);
  desc.add_options()("steps", po::value(&o.steps)->default_value(o.steps), "training steps")(
      "global-batch", po::value(&o.global_batch)->default_value(o.global_batch),
      "samples per step over all ranks (divisible by the number of ranks)")(
      "hidden", po::value(&o.hidden)->default_value(o.hidden), "hidden units")(
      "lr", po::value(&o.learning_rate)->default_value(o.learning_rate), "SGD learning rate")(
      "slow-rank", po::value(&o.slow_rank)->default_value(o.slow_rank),
      "this rank's device computes --slow-factor times slower (-1: none)")(
      "slow-factor", po::value(&o.slow_factor)->default_value(o.slow_factor), "1 to 1000")(
      "out", po::value(&o.out), "write losses and final parameters (hex floats) here; %r becomes the rank");
  int exit_code = 0;
  if (!parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  try {
    npuscope::comm::MpiWorld world(&argc, &argv,
                                   o.common.spec.empty() ? 0 : emu::load_spec(o.common.spec).ranks_per_node);
    if (o.steps < 1 || o.hidden < 1 || o.global_batch < 1 || o.global_batch % world.size() != 0) {
      throw emu::InvalidArgument("--global-batch " + std::to_string(o.global_batch) +
                                 " must be a positive multiple of " + std::to_string(world.size()) +
                                 " ranks, and --steps and --hidden positive");
    }
    if (!o.common.device_ref().is_npu()) throw emu::InvalidArgument("--device: the ranks train on npu devices");
    // The runtime is made after MPI: only now is this process's rank, and so its slowdown, known.
    emu::RuntimeOptions r = emu::RuntimeOptions::from_environment();
    if (!o.common.spec.empty()) r.spec = o.common.spec;
    if (world.rank() == o.slow_rank) r.compute_slowdown = o.slow_factor;
    emu::Runtime::configure(r);
    return train(o, world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_data_parallel: error: %s\n", e.what());
    return 1;
  }
}
