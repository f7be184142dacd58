#include "render/render_support.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

namespace devlint {

LineColumn position_at(const SourceFile &file, uint32_t offset) {
  uint32_t line = 0;
  uint32_t column = 0;
  file.position(offset, line, column);
  return {line, column};
}

uint32_t code_point_column(const SourceFile &file, uint32_t line, uint32_t byte_column) {
  if (line == 0 || line > file.line_count())
    return byte_column;
  uint32_t start = file.line_starts[line - 1];
  uint32_t column = 1;
  for (uint32_t i = start; i < start + byte_column - 1 && i < file.text.size(); ++i)
    column += (static_cast<unsigned char>(file.text[i]) & 0xC0) != 0x80; // skip continuations
  return column;
}

namespace {

// FNV-1a, 64 bits: stable across platforms and releases, unlike std::hash.
uint64_t fnv1a(const std::string &data) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4)
    out[i] = digits[value & 0xF];
  return out;
}

} // namespace

std::vector<std::string> fingerprints(const std::vector<Finding> &findings) {
  std::map<std::tuple<std::string, std::string, std::string>, unsigned> seen;
  std::vector<std::string> out;
  for (const Finding &f : findings) {
    std::string site;
    for (char c : f.file->slice(f.range))
      if (!std::isspace(static_cast<unsigned char>(c)))
        site += c;
    std::string path = f.file->display_path;
    unsigned occurrence = seen[{f.code, path, site}]++;
    out.push_back(
        hex(fnv1a(f.code + '\0' + path + '\0' + site + '\0' + std::to_string(occurrence))));
  }
  return out;
}

nlohmann::json finding_json(const Finding &f, const std::string &fingerprint,
                            const RenderOptions &options) {
  auto location = [](uint32_t line, uint32_t column) {
    return nlohmann::json{{"row", line}, {"column", column}};
  };
  nlohmann::json origins = nlohmann::json::array();
  for (const RelatedLocation &r : f.origins)
    origins.push_back({{"filename", r.path},
                       {"location", location(r.range.line, r.range.column)},
                       {"end_location", location(r.range.end_line, r.range.end_column)},
                       {"message", r.message}});
  nlohmann::json fix = nullptr;
  if (f.fix) {
    nlohmann::json edits = nlohmann::json::array();
    for (const TextEdit &e : f.fix->edits) {
      LineColumn begin = position_at(*f.file, e.begin), end = position_at(*f.file, e.end);
      edits.push_back({{"content", e.replacement},
                       {"location", location(begin.line, begin.column)},
                       {"end_location", location(end.line, end.column)}});
    }
    static const char *const applicability[] = {"safe", "unsafe", "display-only"};
    fix = {{"applicability", applicability[static_cast<int>(f.fix->applicability)]},
           {"available", fix_available(f, options)},
           {"message", f.fix->title},
           {"edits", edits}};
  }
  return {
      {"code", f.code},
      {"rule", f.rule_name},
      {"message", f.message},
      {"filename", f.file->display_path},
      {"location", location(f.range.line, f.range.column)},
      {"end_location", location(f.range.end_line, f.range.end_column)},
      {"origins", origins},
      {"why", f.why},
      {"level", f.level == FindingLevel::Warning ? "warning" : "error"},
      {"placement", f.placement.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.placement)},
      {"fix", fix},
      {"no_fix_reason",
       f.no_fix_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.no_fix_reason)},
      {"url", options.docs_url.empty() ? nlohmann::json(nullptr)
                                       : nlohmann::json(rule_doc_url(f.code, options))},
      {"fingerprint", fingerprint}};
}

std::string diagnostic_fingerprint(const Diagnostic &d) {
  return hex(fnv1a(std::string(diagnostic_name(d)) + '\0' + d.path + '\0' + d.message));
}

nlohmann::json diagnostic_json(const Diagnostic &d) {
  nlohmann::json location = {{"row", d.line}, {"column", d.column}};
  return {{"code", nullptr},
          {"rule", diagnostic_name(d)},
          {"message", d.message},
          {"filename", d.path},
          {"location", location},
          {"end_location", location},
          {"origins", nlohmann::json::array()},
          {"why", ""},
          {"level", "error"},
          {"placement", nullptr},
          {"fix", nullptr},
          {"no_fix_reason", nullptr},
          {"url", nullptr},
          {"fingerprint", diagnostic_fingerprint(d)}};
}

} // namespace devlint
