// Reading msprobe dumps: see npuscope/importer/msprobe_dump_reader.h.
//
// Note [Where msprobe dumps are]
// msprobe writes dump_path/step{S}/rank{R}/ (proc{PID}/ before the rank is known, rank/ with no
// number when torch.distributed is not initialised), each holding dump.json, stack.json,
// construct.json and, in tensor mode, dump_tensor_data/. `npuscope export --msprobe DIR` writes
// DIR/step{S}/rank0/ the same way. A user may point at any level: the dump.json, its folder, a
// step folder (its rank folders), a folder of rank folders, or dump_path (every step and rank).
// Folders are found by msprobe's own names (step, rank and proc followed by digits, as its compare
// checks them: check_and_return_dir_contents), two levels deep at most; step and rank come from
// the names of the folders above the dump.json (-1 where there is none).
#include "npuscope/importer/msprobe_dump_reader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "msprobe_dump_json.h"
#include "msprobe_side_files.h"
#include "msprobe_tensor_files.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::MsprobeDump;

// The number after `prefix` in a folder name ("rank3" -> 3), -1 for the bare prefix ("rank"),
// nullopt when the name is not the prefix followed by digits.
std::optional<std::int64_t> numbered(const std::string& name, std::string_view prefix) {
  if (!std::string_view(name).starts_with(prefix)) return std::nullopt;
  const std::string_view digits = std::string_view(name).substr(prefix.size());
  if (digits.empty()) return -1;
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  return std::stoll(std::string(digits));
}

struct Found {
  std::string path;       // what MsprobeDump::path says: the folder, or the dump.json named
  std::string dump_json;  // the file
  std::int64_t step = -1, rank = -1;
};

Found found_at(const fs::path& folder, std::string path) {
  Found f{std::move(path), (folder / "dump.json").string()};
  const std::string name = folder.filename().string();
  if (const auto rank = numbered(name, "rank")) {
    f.rank = *rank;
  } else if (!numbered(name, "proc")) {
    return f;  // a folder of another name: no step either
  }
  if (const auto step = numbered(folder.parent_path().filename().string(), "step")) f.step = *step;
  return f;
}

bool is_dump_folder_name(const std::string& name) {
  return numbered(name, "step") || numbered(name, "rank") || numbered(name, "proc");
}

// The dump folders at or under `dir` (Note [Where msprobe dumps are]).
void find_dumps(const fs::path& dir, int depth, std::vector<Found>& out) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "dump.json", ec)) {
    out.push_back(found_at(dir, dir.string()));
    return;
  }
  if (depth == 2) return;
  for (const auto& child : fs::directory_iterator(dir, ec)) {
    if (child.is_directory(ec) && is_dump_folder_name(child.path().filename().string())) {
      find_dumps(child.path(), depth + 1, out);
    }
  }
}

std::vector<Found> find_dumps(const std::string& path) {
  std::error_code ec;
  std::vector<Found> found;
  if (fs::is_regular_file(path, ec)) {
    const fs::path file = fs::absolute(path, ec);
    Found f = found_at(file.parent_path(), path);
    f.dump_json = path;
    found.push_back(std::move(f));
  } else if (fs::is_directory(path, ec)) {
    find_dumps(fs::path(path), 0, found);
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.step, a.rank, a.path) < std::tie(b.step, b.rank, b.path);
  });
  return found;
}

// Whether a file's first bytes are a dump.json's ({"task": ..., "level": ...}, as msprobe and
// export --msprobe begin it).
bool looks_like_dump_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[4096];
  in.read(head, sizeof head);
  const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  return text.find("\"task\"") != std::string_view::npos && text.find("\"level\"") != std::string_view::npos;
}

void read_side_file(const fs::path& file, msprobe::JsonFiles& files, msprobe::EntryIndex& index, MsprobeDump& dump,
                    msprobe::NoteCounts& notes) {
  std::error_code ec;
  const bool stack = file.filename() == "stack.json";
  if (!fs::is_regular_file(file, ec)) {
    notes.add(stack ? "dump without stack.json: its entries have no call stacks"
                    : "dump without construct.json: its entries have no parent module");
    return;
  }
  if (stack) {
    msprobe::read_stack_json(files, file.string(), index, dump, notes);
  } else {
    msprobe::read_construct_json(files, file.string(), index, dump, notes);
  }
}

MsprobeDump read_one(const Found& f, msprobe::JsonFiles& files) {
  MsprobeDump dump;
  dump.path = f.path;
  dump.step = f.step;
  dump.rank = f.rank;
  msprobe::NoteCounts notes;
  const std::string dump_data_dir = msprobe::read_dump_json(files, f.dump_json, dump, notes);
  const fs::path folder = fs::path(f.dump_json).parent_path();
  msprobe::EntryIndex index(dump);
  read_side_file(folder / "stack.json", files, index, dump, notes);
  read_side_file(folder / "construct.json", files, index, dump, notes);
  notes.render(dump.notes);
  dump.load = msprobe::tensor_loader(dump, folder.string(), dump_data_dir);
  return dump;
}

}  // namespace

bool is_msprobe_dump(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return fs::path(path).filename() == "dump.json" ||
           (fs::path(path).extension() == ".json" && looks_like_dump_json(path));
  }
  return !find_dumps(path).empty();
}

std::vector<MsprobeDump> read_msprobe_dumps(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ImportError("'" + path + "': no such file or folder");
  const std::vector<Found> found = find_dumps(path);
  if (found.empty()) {
    throw ImportError("'" + path +
                      "' holds no msprobe dump: no dump.json in it, nor in step*/rank*/ (or proc*/) folders under it");
  }
  msprobe::JsonFiles files;  // Note [One buffer for every JSON file of a dump]
  std::vector<MsprobeDump> dumps;
  dumps.reserve(found.size());
  for (const Found& f : found) dumps.push_back(read_one(f, files));
  return dumps;
}

std::string dump_place(const MsprobeDump& d) {
  return "step " + (d.step < 0 ? std::string("?") : std::to_string(d.step)) + ", rank " +
         (d.rank < 0 ? std::string("?") : std::to_string(d.rank));
}

std::vector<MsprobeDumpPair> pair_msprobe_dumps(const std::vector<MsprobeDump>& npu,
                                                const std::vector<MsprobeDump>& bench,
                                                std::vector<std::string>& unpaired) {
  if (npu.size() == 1 && bench.size() == 1) return {{&npu[0], &bench[0]}};
  // Two sides of one rank each (one process: a trace, a proc{PID} folder, one rank's steps) pair
  // step by step whatever their ranks: the same script run on two devices.
  const auto one_rank = [](const std::vector<MsprobeDump>& side) {
    return std::all_of(side.begin(), side.end(), [&](const MsprobeDump& d) { return d.rank == side.front().rank; });
  };
  const bool by_step = !npu.empty() && !bench.empty() && one_rank(npu) && one_rank(bench);
  const auto key = [&](const MsprobeDump& d) { return std::pair{d.step, by_step ? std::int64_t{0} : d.rank}; };
  std::map<std::pair<std::int64_t, std::int64_t>, const MsprobeDump*> bench_at;
  for (const MsprobeDump& b : bench) bench_at.emplace(key(b), &b);
  std::vector<MsprobeDumpPair> pairs;
  for (const MsprobeDump& n : npu) {
    const auto it = bench_at.find(key(n));
    if (it == bench_at.end()) {
      unpaired.push_back(dump_place(n) + ": the NPU dump " + n.path + " has no bench dump of its step and rank");
      continue;
    }
    pairs.push_back({&n, it->second});
    bench_at.erase(it);
  }
  for (const auto& [at, b] : bench_at)
    unpaired.push_back(dump_place(*b) + ": the bench dump " + b->path + " has no NPU dump of its step and rank");
  return pairs;
}

}  // namespace npuscope::importer
