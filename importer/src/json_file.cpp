#include "json_file.h"

#include <rapidjson/error/en.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "chrome_events.h"
#include "csv_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {

rapidjson::Document read_json_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw ImportError(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag>(text.c_str(), text.size());
  if (doc.HasParseError()) {
    throw ImportError(path + ": malformed JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": " +
                      rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return doc;
}

const rapidjson::Value* json_member(const rapidjson::Value& v, std::string_view key) {
  if (!v.IsObject()) return nullptr;
  const auto it = v.FindMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string> json_text(const rapidjson::Value& v, std::string_view key) {
  const rapidjson::Value* m = json_member(v, key);
  if (m == nullptr) return std::nullopt;
  if (m->IsString()) return std::string(m->GetString(), m->GetStringLength());
  if (m->IsInt64()) return std::to_string(m->GetInt64());
  if (m->IsUint64()) return std::to_string(m->GetUint64());
  if (m->IsNumber()) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", m->GetDouble());
    return std::string(b);
  }
  return std::nullopt;
}

std::optional<std::int64_t> json_int(const rapidjson::Value& v, std::string_view key) {
  const rapidjson::Value* m = json_member(v, key);
  if (m == nullptr) return std::nullopt;
  if (m->IsInt64()) return m->GetInt64();
  if (m->IsDouble()) return clamp_to_i64(m->GetDouble());
  if (m->IsString()) return parse_int(std::string_view(m->GetString(), m->GetStringLength()));
  return std::nullopt;
}

std::optional<double> json_double(const rapidjson::Value& v, std::string_view key) {
  const rapidjson::Value* m = json_member(v, key);
  if (m == nullptr) return std::nullopt;
  if (m->IsNumber()) return m->GetDouble();
  if (m->IsString()) return parse_double(std::string_view(m->GetString(), m->GetStringLength()));
  return std::nullopt;
}

}  // namespace npuscope::importer
