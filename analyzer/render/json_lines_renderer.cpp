// `json-lines`: one finding object per line, for streaming consumers and `jq -c`.
#include "render/render_support.h"

namespace devlint {

void render_json_lines(std::ostream &out, const std::vector<Finding> &findings,
                       const RenderOptions &options) {
  std::vector<std::string> prints = fingerprints(findings);
  for (const Diagnostic &d : options.diagnostics)
    out << diagnostic_json(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  for (size_t i = 0; i < findings.size(); ++i)
    out << finding_json(findings[i], prints[i], options)
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
}

} // namespace devlint
