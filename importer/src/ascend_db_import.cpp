// Finding and importing the Ascend db exports (Note [Ascend db import] in ascend_db.h).
#include <algorithm>
#include <charconv>

#include "ascend_db.h"
#include "json_file.h"
#include "source_files.h"

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

// The first file of `dir` (in name order) whose name starts with `prefix` and ends in .db.
std::optional<fs::path> db_in(const fs::path& dir, std::string_view prefix) {
  const std::vector<std::string> found = files_like(dir, prefix, ".db");
  if (found.empty()) return std::nullopt;
  return fs::path(found.front());
}

constexpr std::string_view kPtPrefix = "ascend_pytorch_profiler";
constexpr std::string_view kMsprofPrefix = "msprof_";

Source pt_source(const fs::path& db) {
  Source s{Format::kAscendPtDb, db.string(), {db.string()}};
  const fs::path analysis = db.parent_path() / "analysis.db";
  if (is_file(analysis)) s.files.push_back(analysis.string());
  return s;
}

// The rank in ascend_pytorch_profiler_{rank}.db; nullopt for another name.
std::optional<int> rank_in_name(const std::string& file) {
  const std::string name = fs::path(file).stem().string();
  if (!name.starts_with(std::string(kPtPrefix) + "_")) return std::nullopt;
  const std::string_view digits = std::string_view(name).substr(kPtPrefix.size() + 1);
  int rank = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  if (ec != std::errc() || end != digits.data() + digits.size() || rank < 0) return std::nullopt;
  return rank;
}

std::int64_t scalar(ForeignDb& db, const std::string& sql, std::int64_t otherwise) {
  ForeignStmt q(db, sql);
  return q.step() ? q.int64(0, otherwise) : otherwise;
}

// What makes the file an export npuscope reads: STRING_IDS, and TASK or the host tables.
void require_tables(ForeignDb& db) {
  if (db.has_table("STRING_IDS") && (db.has_table("TASK") || db.has_table("PYTORCH_API") || db.has_table("CANN_API"))) {
    return;
  }
  std::string have;
  for (const std::string& t : db.tables()) have += (have.empty() ? "" : ", ") + t;
  throw ImportError(db.path() + ": an SQLite database without the tables of an msprof / Ascend PyTorch Profiler db " +
                    "export (it needs STRING_IDS and TASK, PYTORCH_API or CANN_API; it has: " +
                    (have.empty() ? std::string("no table") : have) + ")");
}

void damaged(AscendDb& a, const std::string& what) {
  a.sink.set_incomplete();
  if (!a.damage_noted) a.sink.note(what + ": what was read before stands");
  a.damage_noted = true;
}

// Runs one pass; a damaged page ends it, and the import goes on with the next (marked incomplete).
// In a file cut short any failure is one (a table whose pages are gone).
template <class F>
void pass(AscendDb& a, F&& f) {
  try {
    f(a);
  } catch (const ForeignDbDamaged& e) {
    damaged(a, e.what());
  } catch (const ImportError& e) {
    if (!a.db.cut_short()) throw;
    damaged(a, e.what());
  }
}

void count_unmapped_tables(AscendDb& a) {
  for (const std::string& t : a.db.tables()) {
    if (a.mapped.contains(t) || t == "sqlite_sequence" || t.starts_with("ENUM_")) continue;
    pass(a, [&](AscendDb&) {
      const std::int64_t n = scalar(a.db, "SELECT COUNT(*) FROM " + sql_quoted(t), 0);
      if (n > 0) a.sink.unmapped(a.file, "table " + t, n);
    });
  }
}

}  // namespace

std::string enum_text(AscendDb& a, const std::string& expr, std::string_view enum_table) {
  if (!enum_table.empty() && a.db.has_table(enum_table)) {
    return "(SELECT name FROM " + sql_quoted(enum_table) + " WHERE id = " + expr + ")";
  }
  return "(SELECT value FROM " + a.strings.table() + " WHERE id = " + expr + ")";
}

std::optional<Source> detect_ascend_pt_db(const fs::path& path) {
  const std::string name = path.filename().string();
  if (is_file(path)) {
    if (name.starts_with(kPtPrefix) && name.ends_with(".db")) return pt_source(path);
    if (name == "analysis.db") {
      if (const auto db = db_in(path.parent_path(), kPtPrefix)) {
        Source s = pt_source(*db);
        return s;
      }
      throw ImportError(path.string() + ": analysis.db holds the profiler's summaries only; the " +
                        "ascend_pytorch_profiler_{rank}.db beside it, which holds the profile, is missing");
    }
    return std::nullopt;
  }
  if (!is_dir(path)) return std::nullopt;
  for (const fs::path& dir : {path, path / "ASCEND_PROFILER_OUTPUT"}) {
    if (!is_dir(dir)) continue;
    if (const auto db = db_in(dir, kPtPrefix)) return pt_source(*db);
  }
  return std::nullopt;
}

std::optional<Source> detect_msprof_db(const fs::path& path) {
  const std::string name = path.filename().string();
  if (is_file(path)) {
    if (name.starts_with(kMsprofPrefix) && name.ends_with(".db")) {
      return Source{Format::kMsprofDb, path.string(), {path.string()}};
    }
    return std::nullopt;
  }
  if (!is_dir(path)) return std::nullopt;
  for (const fs::path& dir : {path, path / "mindstudio_profiler_output"}) {
    if (!is_dir(dir)) continue;
    if (const auto db = db_in(dir, kMsprofPrefix)) return Source{Format::kMsprofDb, path.string(), {db->string()}};
  }
  return std::nullopt;
}

void import_ascend_db(const Source& source, ImportSink& sink) {
  if (source.files.empty()) throw ImportError(source.path + ": no db file to import");
  const std::string& file = source.files.front();
  ForeignDb db(file);
  require_tables(db);
  if (db.cut_short()) {
    sink.set_incomplete();
    sink.note(file + ": shorter than its header says (cut short): what it holds is imported");
  }
  ForeignStrings strings(db, sink);
  AscendDb a{.db = db, .sink = sink, .strings = strings, .file = file};
  a.mapped.insert("STRING_IDS");
  if (const auto in_name = rank_in_name(file)) {
    a.rank = *in_name;
  } else if (db.has_table("RANK_DEVICE_MAP")) {
    ForeignTable map = a.table("RANK_DEVICE_MAP");
    const std::string rank = map.col("m", {"rankId"});
    map.col("m", {"deviceId"});
    const std::int64_t r = scalar(db, "SELECT " + rank + " FROM RANK_DEVICE_MAP m LIMIT 1", -1);
    if (!is_invalid_rank(r)) a.rank = static_cast<int>(r);
  }
  a.mapped.insert("RANK_DEVICE_MAP");
  // torch_npu's profiler_metadata.json, in the *_ascend_pt folder above ASCEND_PROFILER_OUTPUT.
  const fs::path db_dir = fs::path(file).parent_path();
  for (const fs::path& f : {db_dir / "profiler_metadata.json", db_dir.parent_path() / "profiler_metadata.json"}) {
    if (!is_file(f)) continue;
    const rapidjson::Document d = read_json_file(f.string());
    if (const auto* groups = json_member(d, "parallel_group_info")) a.groups = parallel_group_ranks(*groups);
    break;
  }
  if (db.has_table("TASK") && db.columns("TASK").size() > 0) {
    ForeignTable task(db, "TASK");
    const std::string gid = task.col("t", {"globalTaskId"});
    if (gid != "NULL") a.comm_task_base = wrap_add(task_id_of(scalar(db, "SELECT MAX(" + gid + ") FROM TASK t", 0)), 1);
  }
  if (source.files.size() > 1) {
    sink.note(source.files[1] +
              ": not read (its step times and communication figures are recomputed from the "
              "profile by `npuscope analyze` and `cluster`)");
  }

  pass(a, import_device_and_counters);
  pass(a, import_host);
  pass(a, import_tasks);
  pass(a, import_collectives);
  count_unmapped_tables(a);
  if (strings.damaged()) damaged(a, file + ": damaged where STRING_IDS is: names not found there are empty");

  if (a.rank >= 0) sink.meta(collector::kMetaRank, std::to_string(a.rank));
  if (a.world_size > 0) sink.meta(collector::kMetaWorldSize, std::to_string(a.world_size));
}

}  // namespace npuscope::importer
