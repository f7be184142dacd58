// `gitlab`: a GitLab Code Quality report (a JSON array of issues), shown in merge requests when
// a job publishes it as `artifacts:reports:codequality`.
#include "render/render_support.h"

namespace devlint {

void render_gitlab(std::ostream &out, const std::vector<Finding> &findings, const RenderOptions &) {
  std::vector<std::string> prints = fingerprints(findings);
  nlohmann::json issues = nlohmann::json::array();
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding &f = findings[i];
    auto position = [](uint32_t line, uint32_t column) {
      return nlohmann::json{{"line", line}, {"column", column}};
    };
    issues.push_back({{"type", "issue"},
                      {"check_name", f.code + " (" + f.rule_name + ")"},
                      {"description", f.code + ": " + f.message},
                      {"categories", {"Bug Risk"}},
                      // Code that crashes on a multi-GPU run, but not in every configuration.
                      // warning: only a hand-made or unusual map separates the operands.
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
