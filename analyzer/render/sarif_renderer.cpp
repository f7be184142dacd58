// `sarif`: SARIF 2.1.0 for code scanning (GitHub's upload-sarif, IDE viewers). Every rule is
// described with its help text and doc URL; each origin is a related location, each fix a
// `fixes` entry, and `partialFingerprints` keep a result's identity when lines move.
// tests/sarif_validate.sh checks this output with the SARIF Multitool.
#include <algorithm>
#include <filesystem>
#include <map>

#include "model/paths.h"
#include "render/render_support.h"
#include "rules/rule.h"

namespace devlint {
namespace {

using nlohmann::json;
constexpr const char *kSourceRoot = "SRCROOT";

// RFC 3986: keep unreserved characters and `/`, percent-encode the rest (bytes of UTF-8).
std::string encode_uri_path(const std::string &path) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
      out += static_cast<char>(c);
    else
      out += std::string("%") + digits[c >> 4] + digits[c & 0xF];
  }
  return out;
}

json artifact_location(const std::string &path) {
  if (!path.empty() && path.front() == '/')
    return {{"uri", "file://" + encode_uri_path(path)}};
  return {{"uri", encode_uri_path(std::filesystem::path(path).generic_string())},
          {"uriBaseId", kSourceRoot}};
}

// SARIF regions count columns in code points here (run.columnKind); devlint counts bytes. With
// the file at hand, the region carries its source text so viewers can show it without a checkout.
json region(const SourceFile *file, const SourceRange &range) {
  auto column = [&](uint32_t line, uint32_t byte_column) {
    return file ? code_point_column(*file, line, byte_column) : byte_column;
  };
  json r = {{"startLine", range.line},
            {"startColumn", column(range.line, range.column)},
            {"endLine", range.end_line},
            {"endColumn", column(range.end_line, range.end_column)}};
  if (file && range.end > range.begin)
    r["snippet"] = {{"text", std::string(file->slice(range))}};
  return r;
}

// The lines around a result (one before, one after), as SARIF's contextRegion.
json context_region(const SourceFile &file, const SourceRange &range) {
  uint32_t first = range.line > 1 ? range.line - 1 : range.line;
  uint32_t last = std::min(file.line_count(), std::max(range.line, range.end_line) + 1);
  std::string text;
  for (uint32_t line = first; line <= last; ++line)
    text += std::string(file.line_text(line)) + "\n";
  return {{"startLine", first}, {"endLine", last}, {"snippet", {{"text", text}}}};
}

// SARIF messages are sentences (the validator's SARIF2001).
json message(std::string text) {
  if (!text.empty() && text.back() != '.')
    text += '.';
  return {{"text", text}};
}

// PascalCase rule names, as SARIF asks of `reportingDescriptor.name`.
std::string pascal_case(std::string_view name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '-' || c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// GitHub code scanning renders help.markdown as the rule's help, so it carries the whole doc; a
// helpUri only when the team hosts the docs (`docs-url`).
json rule_descriptor(const RuleInfo &info, const RenderOptions &options) {
  json descriptor = {{"id", info.code},
                     {"name", pascal_case(info.name)},
                     {"shortDescription", message(std::string(info.summary))},
                     {"fullDescription", message(std::string(info.summary))},
                     {"help",
                      {{"text", std::string(info.summary) + "\n\n" + std::string(info.doc)},
                       {"markdown", rule_markdown(info)}}},
                     {"defaultConfiguration", {{"level", "error"}}},
                     {"properties", {{"tags", {"multi-gpu", "device-placement"}}}}};
  if (std::string url = rule_doc_url(std::string(info.code), options); !url.empty())
    descriptor["helpUri"] = url;
  return descriptor;
}

// SARIF message text treats `[text](n)` as a link to relatedLocations[id n]; literal brackets
// must then be escaped (SARIF 2.1.0, 3.11.6).
std::string escape_brackets(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

// The result's message with its origins linked, which is how GitHub code scanning shows related
// locations: "... Origins: [`kv_cache`](1), [`presents`](2)."
std::string message_with_origins(const Finding &f) {
  std::string text = escape_brackets(f.message);
  if (f.origins.empty())
    return text;
  if (!text.empty() && text.back() != '.')
    text += '.';
  text += f.origins.size() == 1 ? " Origin: " : " Origins: ";
  for (size_t k = 0; k < f.origins.size(); ++k) {
    std::string label = f.origins[k].message;
    // An origin message reads "`name`: where it comes from"; the name is the link text.
    if (size_t colon = label.find("`: "); label.rfind('`', 0) == 0 && colon != std::string::npos)
      label = label.substr(0, colon + 1);
    text += (k ? ", [" : "[") + escape_brackets(label) + "](" + std::to_string(k + 1) + ")";
  }
  if (!f.why.empty()) // the placement fact, kept out of the short first line
    text += ". " + escape_brackets(f.why);
  return text;
}

json sarif_fix(const Finding &f) {
  json replacements = json::array();
  for (const TextEdit &e : f.fix->edits) {
    LineColumn begin = position_at(*f.file, e.begin), end = position_at(*f.file, e.end);
    SourceRange r;
    r.line = begin.line;
    r.column = begin.column;
    r.end_line = end.line;
    r.end_column = end.column;
    replacements.push_back(
        {{"deletedRegion", region(f.file, r)}, {"insertedContent", {{"text", e.replacement}}}});
  }
  return {{"description", message(f.fix->title)},
          {"artifactChanges",
           {{{"artifactLocation", artifact_location(f.file->display_path)},
             {"replacements", replacements}}}}};
}

} // namespace

void render_sarif(std::ostream &out, const std::vector<Finding> &findings,
                  const RenderOptions &options) {
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  for (const Rule *rule : all_rules()) {
    rule_index[std::string(rule->info().code)] = rules.size();
    rules.push_back(rule_descriptor(rule->info(), options));
  }

  // Artifacts: every file with a result, in order of first appearance (findings are sorted).
  json artifacts = json::array();
  std::map<std::string, size_t> artifact_index;
  auto artifact = [&](const std::string &path) {
    auto [it, inserted] = artifact_index.emplace(path, artifacts.size());
    if (inserted)
      artifacts.push_back({{"location", artifact_location(path)}, {"sourceLanguage", "python"}});
    json location = artifact_location(path);
    location["index"] = it->second;
    return location;
  };

  std::vector<std::string> prints = fingerprints(findings);
  json results = json::array();
  // Input diagnostics belong to no rule (as Ruff's syntax errors): invalid syntax is a result
  // without a ruleId; an input that could not be checked is a notification of the invocation,
  // which then did not succeed.
  json notifications = json::array();
  for (const Diagnostic &d : options.diagnostics) {
    json location = {{"artifactLocation", artifact(d.path)}};
    if (d.line)
      location["region"] = {{"startLine", d.line},
                            {"startColumn", std::max<uint32_t>(d.column, 1)}};
    if (d.severity == Severity::InvalidSyntax)
      results.push_back(
          {{"kind", "fail"},
           {"level", "error"},
           {"message", message(std::string(diagnostic_name(d)) + ": " + d.message)},
           {"locations", {{{"physicalLocation", location}}}},
           {"partialFingerprints", {{"devlintInput/v1", diagnostic_fingerprint(d)}}}});
    else
      notifications.push_back({{"level", "error"},
                               {"message", message(d.message)},
                               {"descriptor", {{"id", diagnostic_name(d)}}},
                               {"locations", {{{"physicalLocation", location}}}}});
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding &f = findings[i];
    json result = {
        {"ruleId", f.code},
        {"level", f.level == FindingLevel::Warning ? "warning" : "error"},
        {"message", message(message_with_origins(f) +
                            (f.placement.empty() ? "" : "\nPlacement: " + f.placement))},
        {"locations",
         {{{"physicalLocation",
            {{"artifactLocation", artifact(f.file->display_path)},
             {"region", region(f.file, f.range)},
             {"contextRegion", context_region(*f.file, f.range)}}}}}},
        {"partialFingerprints", {{"devlintSite/v1", prints[i]}}},
    };
    if (auto it = rule_index.find(f.code); it != rule_index.end())
      result["ruleIndex"] = it->second;
    if (!f.origins.empty()) {
      json related = json::array();
      for (size_t k = 0; k < f.origins.size(); ++k) {
        const RelatedLocation &r = f.origins[k];
        const SourceFile *file = r.path == f.file->display_path ? f.file : nullptr;
        related.push_back(
            {{"id", k + 1},
             {"physicalLocation",
              {{"artifactLocation", artifact(r.path)}, {"region", region(file, r.range)}}},
             {"message", message(r.message)}});
      }
      result["relatedLocations"] = related;
    }
    if (f.fix)
      result["fixes"] = json::array({sarif_fix(f)}); // not `= {x}`: clang makes that x itself
    results.push_back(std::move(result));
  }

  std::string root =
      options.source_root.empty() ? current_directory().string() : options.source_root;
  if (root.empty() || root.back() != '/')
    root += '/';
  json driver = {{"name", "devlint"},
                 {"fullName", "devlint " + options.tool_version},
                 {"version", options.tool_version},
                 {"semanticVersion", options.tool_version},
                 {"rules", rules}};
  // The tool's page: the docs' base, up to the folder that holds the per-rule pages.
  if (size_t placeholder = options.docs_url.find('{'); !options.docs_url.empty()) {
    std::string base = options.docs_url.substr(0, placeholder);
    if (placeholder != std::string::npos)
      base = base.substr(0, base.rfind('/') + 1);
    driver["informationUri"] = base;
  }
  json run = {{"tool", {{"driver", driver}}},
              {"originalUriBaseIds", {{kSourceRoot, {{"uri", "file://" + encode_uri_path(root)}}}}},
              {"artifacts", artifacts},
              {"results", results},
              {"columnKind", "unicodeCodePoints"}};
  if (!notifications.empty() || options.run_failed)
    run["invocations"] = json::array(
        {{{"executionSuccessful", false}, {"toolExecutionNotifications", notifications}}});
  json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", {run}}};
  out << log.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace devlint
