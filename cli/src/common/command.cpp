#include "command.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>

namespace npuscope::cli {

int run_guarded(const char* name, CommandFn fn, int argc, char** argv) {
  try {
    return fn(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "npuscope %s: error: %s\n", name, e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "npuscope: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope: error: %s\n", e.what());
    return 1;
  }
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
