// `json`: one array of finding objects (render_support.cpp), as Ruff's `--output-format json`.
#include "render/render_support.h"

namespace devlint {

void render_json(std::ostream &out, const std::vector<Finding> &findings,
                 const RenderOptions &options) {
  std::vector<std::string> prints = fingerprints(findings);
  nlohmann::json all = nlohmann::json::array();
  for (const Diagnostic &d : options.diagnostics)
    all.push_back(diagnostic_json(d));
  for (size_t i = 0; i < findings.size(); ++i)
    all.push_back(finding_json(findings[i], prints[i], options));
  out << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

} // namespace devlint
