// `gitlab`: a GitLab Code Quality report (a JSON array of issues), shown in merge requests when
// a job publishes it as `artifacts:reports:codequality`.
#include <algorithm>

#include "render/render_support.h"

namespace devlint {

void render_gitlab(std::ostream &out, const std::vector<Finding> &findings,
                   const RenderOptions &options) {
  std::vector<std::string> prints = fingerprints(findings);
  nlohmann::json issues = nlohmann::json::array();
  auto position = [](uint32_t line, uint32_t column) {
    return nlohmann::json{{"line", line}, {"column", column}};
  };
  for (const Diagnostic &d : options.diagnostics) {
    uint32_t line = std::max<uint32_t>(d.line, 1), column = std::max<uint32_t>(d.column, 1);
    // Code that does not parse, or was not checked at all: nothing else in it can be trusted.
    issues.push_back(
        {{"type", "issue"},
         {"check_name", diagnostic_name(d)},
         {"description", std::string(diagnostic_name(d)) + ": " + d.message},
         {"categories", {"Bug Risk"}},
         {"severity", "critical"},
         {"fingerprint", diagnostic_fingerprint(d)},
         {"location",
          {{"path", d.path},
           {"lines", {{"begin", line}, {"end", line}}},
           {"positions", {{"begin", position(line, column)}, {"end", position(line, column)}}}}}});
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding &f = findings[i];
    issues.push_back({{"type", "issue"},
                      {"check_name", f.code + " (" + f.rule_name + ")"},
                      {"description", f.code + ": " + f.message},
                      {"categories", {"Bug Risk"}},
                      // Code that crashes on a multi-GPU run, but not in every configuration.
                      // warning: no device_map="auto" placement is known to separate the operands.
                      {"severity", f.level == FindingLevel::Warning ? "minor" : "major"},
                      {"fingerprint", prints[i]},
                      {"location",
                       {{"path", f.file->display_path},
                        // `lines` is what GitLab's merge request widget reads; `positions` keeps
                        // the columns for other consumers.
                        {"lines", {{"begin", f.range.line}, {"end", f.range.end_line}}},
                        {"positions",
                         {{"begin", position(f.range.line, f.range.column)},
                          {"end", position(f.range.end_line, f.range.end_column)}}}}}});
  }
  out << issues.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace devlint
