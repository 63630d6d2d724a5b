#include "command.h"

#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "npuscope/emulator/runtime.h"

namespace npuscope::cli {

namespace emu = npuscope::emulator;

void configure_runtime(const DeviceFlags& f) {
  emu::RuntimeOptions r = emu::RuntimeOptions::from_environment();
  if (!f.spec.empty()) r.spec = f.spec;
  if (!f.precision_mode.empty()) r.precision_mode = emu::parse_precision_mode(f.precision_mode);
  if (!f.overflow_mode.empty()) r.overflow_mode = emu::parse_overflow_mode(f.overflow_mode);
  const emu::DeviceRef device = emu::DeviceRef::parse(f.device);
  if (device.is_npu()) r.num_devices = device.index + 1;
  emu::Runtime::configure(r);
}

bool parse_flags(int argc, char** argv, const po::options_description& desc, const char* usage,
                 po::positional_options_description* positional, po::variables_map* out) {
  po::variables_map local;
  po::variables_map& vm = out != nullptr ? *out : local;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(desc);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << desc;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + "\nusage: " + usage);
  }
  return true;
}

int command_separator(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) return i;
  return argc;
}

std::vector<std::string> split_commas(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::stringstream in(v);
    for (std::string item; std::getline(in, item, ',');) {
      if (!item.empty()) out.push_back(item);
    }
  }
  return out;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace npuscope::cli
