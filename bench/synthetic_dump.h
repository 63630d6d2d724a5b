// A synthetic msprobe statistics dump for the benches (the dump reader's, the viewer's Compare
// panel): a dump.json of N entries in msprobe's own layout and spacing (indent 1, as Python's
// json.dump writes it), cycling through the kinds shared/realdata's ResNet-50 dump holds (an API
// forward with tensors, None, lists of ints and an int; a module forward with parameters; a
// backward; a parameters_grad entry), with stack.json and construct.json beside it. Written once
// under $TMPDIR, then reused.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace npuscope::bench {

inline std::string dump_tensor(const std::string& indent, const char* dims, double max) {
  const std::string i2 = indent + " ";
  return indent + "{\n" + i2 + "\"type\": \"torch.Tensor\",\n" + i2 + "\"dtype\": \"torch.float32\",\n" + i2 +
         "\"shape\": [\n" + i2 + " " + dims + "\n" + i2 + "],\n" + i2 + "\"Max\": " + std::to_string(max) + ",\n" + i2 +
         "\"Min\": -0.8525969982147217,\n" + i2 + "\"Mean\": 0.005410757381469011,\n" + i2 +
         "\"Norm\": 954.3693237304688,\n" + i2 + "\"requires_grad\": true\n" + indent + "}";
}

inline std::string dump_ints(const std::string& indent) {
  return indent + "[\n" + indent + " {\n" + indent + "  \"type\": \"int\",\n" + indent + "  \"value\": 2\n" + indent +
         " },\n" + indent + " {\n" + indent + "  \"type\": \"int\",\n" + indent + "  \"value\": 2\n" + indent + " }\n" +
         indent + "]";
}

inline std::string dump_entry(std::size_t i, std::string& name) {
  const std::string n = std::to_string(i / 4);
  const char* dims = "32,\n     64,\n     56,\n     56";
  switch (i % 4) {
    case 0:
      name = "Functional.conv2d." + n + ".forward";
      return "  \"input_args\": [\n" + dump_tensor("   ", dims, 1.0) + ",\n" + dump_tensor("   ", dims, 0.09) +
             ",\n   null,\n" + dump_ints("   ") + ",\n" + dump_ints("   ") +
             ",\n   {\n    \"type\": \"int\",\n    \"value\": 1\n   }\n  ],\n" +
             "  \"input_kwargs\": {},\n  \"is_recompute\": false,\n  \"output\": [\n" + dump_tensor("   ", dims, 0.84) +
             "\n  ]\n";
    case 1:
      name = "Module.layer" + n + ".conv1.Conv2d.forward.0";
      return "  \"input_args\": [\n" + dump_tensor("   ", dims, 1.0) +
             "\n  ],\n  \"input_kwargs\": {},\n  \"output\": [\n" + dump_tensor("   ", dims, 0.84) +
             "\n  ],\n  \"parameters\": {\n   \"weight\":\n" + dump_tensor("   ", dims, 0.09) + ",\n   \"bias\":\n" +
             dump_tensor("   ", dims, 0.01) + "\n  },\n  \"is_recompute\": false\n";
    case 2:
      name = "Functional.conv2d." + n + ".backward";
      return "  \"input\": [\n" + dump_tensor("   ", dims, 0.001) + "\n  ],\n  \"output\": [\n" +
             dump_tensor("   ", dims, 0.001) + ",\n" + dump_tensor("   ", dims, 0.002) + ",\n" +
             dump_tensor("   ", dims, 0.003) + "\n  ]\n";
    default:
      name = "Module.layer" + n + ".conv1.Conv2d.parameters_grad.0";
      return "  \"bias\": [\n" + dump_tensor("   ", dims, 0.02) + "\n  ],\n  \"weight\": [\n" +
             dump_tensor("   ", dims, 0.01) + "\n  ]\n";
  }
}

// The dump folder of `entries` entries under $TMPDIR, written on first use.
inline std::string synthetic_dump_dir(std::size_t entries) {
  namespace fs = std::filesystem;
  return [&] {
    const fs::path d = fs::temp_directory_path() / ("npuscope_msprobe_bench_" + std::to_string(entries));
    if (fs::exists(d / "dump.json")) return d.string();
    fs::create_directories(d);
    std::ofstream dump(d / "dump.json"), stack(d / "stack.json"), construct(d / "construct.json");
    dump << "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n"
         << " \"dump_data_dir\": null,\n \"data\": {\n";
    stack << "{\n";
    construct << "{\n";
    std::string name;
    for (std::size_t i = 0; i < entries; ++i) {
      const std::string body = dump_entry(i, name);
      const char* sep = i + 1 < entries ? ",\n" : "\n";
      dump << "  \"" << name << "\": {\n" << body << "  }" << sep;
      stack << " \"" << i << "\": [\n  [\n   \"" << name
            << "\"\n  ],\n  [\n   \"File /x/torch/nn/modules/conv.py, line 543, in _conv_forward, \\n return "
               "F.conv2d(\",\n   \"File /x/train.py, line 32, in <module>, \\n loss = model(x)\"\n  ]\n ]"
            << sep;
      construct << " \"" << name << "\": \"Module.layer" << i / 4 << ".Bottleneck.forward.0\"" << sep;
    }
    dump << " }\n}\n";
    stack << "}\n";
    construct << "}\n";
    return d.string();
  }();
}

}  // namespace npuscope::bench
