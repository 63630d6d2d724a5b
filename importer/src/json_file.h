// The small JSON side files of a profile (profiler_info_{rank}.json, profiler_metadata.json,
// communication.json, communication_matrix.json, msprof's info.json.N and start_info.N): kilobytes
// to a few megabytes, read whole into RapidJSON's DOM (the timelines stream: chrome_events.h).
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace npuscope::importer {

// The file's JSON. ImportError naming the file and the byte when it cannot be read or parsed.
rapidjson::Document read_json_file(const std::string& path);

// A member of an object, null when `v` is no object or has none.
const rapidjson::Value* json_member(const rapidjson::Value& v, std::string_view key);
// A scalar member as text (a string's content, a number's digits), nullopt for anything else.
std::optional<std::string> json_text(const rapidjson::Value& v, std::string_view key);
// A number, or a string holding one ("1701069324370978", msprof writes both).
std::optional<std::int64_t> json_int(const rapidjson::Value& v, std::string_view key);
std::optional<double> json_double(const rapidjson::Value& v, std::string_view key);

}  // namespace npuscope::importer
