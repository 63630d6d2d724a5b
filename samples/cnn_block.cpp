// A small ResNet-style network on the emulator: a 7x7/2 stem with BatchNorm, Relu and 3x3/2 max
// pooling, one basic block (two 3x3 convolutions with BatchNorm and an identity shortcut), global
// average pooling and a fully connected classifier.
//
//   cnn_block --device npu               # f16 on the emulated Ascend 910B
//   cnn_block --device cpu --batch 4     # the f32 golden run
#include <cmath>
#include <string>
#include <vector>

#include "sample_common.h"

namespace emu = npuscope::emulator;
namespace ops = npuscope::emulator::ops;
using npuscope::samples::CommonOptions;

namespace {

struct CnnConfig {
  std::int64_t batch = 1, channels = 64, image = 64, classes = 100;
};

struct BatchNormWeights {
  emu::Tensor scale, bias, mean, var;
};

BatchNormWeights make_bn(std::int64_t c, emu::DType dtype, emu::DeviceRef dev, std::uint64_t seed) {
  BatchNormWeights bn;
  bn.scale = emu::Tensor::uniform({c}, dtype, dev, seed, 0.5f, 1.5f);
  bn.bias = emu::Tensor::uniform({c}, dtype, dev, seed + 1, -0.1f, 0.1f);
  bn.mean = emu::Tensor::uniform({c}, dtype, dev, seed + 2, -0.1f, 0.1f);
  bn.var = emu::Tensor::uniform({c}, dtype, dev, seed + 3, 0.5f, 1.5f);
  return bn;
}

emu::Tensor conv_weight(std::int64_t cout, std::int64_t cin, std::int64_t k, emu::DType dtype, emu::DeviceRef dev,
                        std::uint64_t seed) {
  const float std_dev = std::sqrt(2.0f / static_cast<float>(cin * k * k));  // He init keeps activations O(1)
  return emu::Tensor::randn({cout, cin, k, k}, dtype, dev, seed, std_dev);
}

emu::Tensor conv_bn(const emu::Tensor& x, const emu::Tensor& w, const BatchNormWeights& bn, std::int64_t stride,
                    std::int64_t pad, const std::string& name) {
  auto y = ops::conv2d(x, w, emu::Tensor(), {stride, stride}, {pad, pad, pad, pad}, {1, 1}, 1, {.name = name});
  return ops::batch_norm(y, bn.scale, bn.bias, bn.mean, bn.var, 1e-5f, {.name = name + "_bn"});
}

int run(int argc, char** argv) {
  CnnConfig c;
  CommonOptions common;
  npuscope::samples::po::options_description desc("cnn_block: a ResNet basic block network on the emulated NPU");
  npuscope::samples::add_common_options(desc, common);
  desc.add_options()("batch", npuscope::samples::po::value(&c.batch)->default_value(c.batch), "batch size")(
      "channels", npuscope::samples::po::value(&c.channels)->default_value(c.channels), "channels")(
      "image", npuscope::samples::po::value(&c.image)->default_value(c.image), "input height and width")(
      "classes", npuscope::samples::po::value(&c.classes)->default_value(c.classes), "classifier outputs");
  int exit_code = 0;
  if (!npuscope::samples::parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  if (c.batch < 1 || c.channels < 1 || c.image < 8 || c.classes < 1) {
    throw emu::InvalidArgument("sizes must be positive and the image at least 8 pixels");
  }
  npuscope::samples::configure_runtime(common);
  const emu::DeviceRef dev = common.device_ref();
  const emu::DType dtype = common.dtype_value();
  const std::uint64_t s = common.seed;

  auto stem_w = conv_weight(c.channels, 3, 7, dtype, dev, s + 1);
  auto stem_bn = make_bn(c.channels, dtype, dev, s + 10);
  auto conv1_w = conv_weight(c.channels, c.channels, 3, dtype, dev, s + 2);
  auto bn1 = make_bn(c.channels, dtype, dev, s + 20);
  auto conv2_w = conv_weight(c.channels, c.channels, 3, dtype, dev, s + 3);
  auto bn2 = make_bn(c.channels, dtype, dev, s + 30);
  auto fc_w = emu::Tensor::randn({c.classes, c.channels}, dtype, dev, s + 4, 1.0f / std::sqrt(float(c.channels)));
  auto fc_b = emu::Tensor::zeros({c.classes}, dtype, dev);
  auto image = emu::Tensor::randn({c.batch, 3, c.image, c.image}, dtype, dev, s + 5);

  npuscope::samples::RunTimer timer(dev);
  emu::Tensor logits;
  for (int it = 0; it < common.iterations; ++it) {
    emu::Tensor x;
    {
      emu::NameScope scope("stem");
      x = ops::relu(conv_bn(image, stem_w, stem_bn, 2, 3, "conv"), {.name = "relu"});
      x = ops::max_pool2d(x, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, {.name = "maxpool"});
    }
    {
      emu::NameScope scope("layer1/block0");
      auto y = ops::relu(conv_bn(x, conv1_w, bn1, 1, 1, "conv1"), {.name = "relu1"});
      y = conv_bn(y, conv2_w, bn2, 1, 1, "conv2");
      x = ops::relu(ops::add(y, x, {.name = "residual"}), {.name = "relu2"});
    }
    {
      emu::NameScope scope("head");
      auto pooled =
          ops::reshape(ops::global_avg_pool(x, {.name = "avgpool"}), {c.batch, c.channels}, {.name = "flatten"});
      logits = ops::gemm(pooled, fc_w, fc_b, 1.0f, 1.0f, false, true, {.name = "fc"});
    }
  }
  npuscope::samples::print_summary("cnn_block", common, logits, timer);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return npuscope::samples::run_sample("cnn_block", [&] { return run(argc, argv); });
}
