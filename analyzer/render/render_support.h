// Helpers the machine-readable renderers share: positions of byte offsets, stable fingerprints,
// and the JSON object of one finding (json and json-lines).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnostics/finding.h"
#include "render/renderer.h"

namespace devlint {

struct LineColumn {
  uint32_t line = 0;   // 1-based
  uint32_t column = 0; // 1-based, in bytes
};
LineColumn position_at(const SourceFile &file, uint32_t offset);

// A column counted in Unicode code points instead of bytes (SARIF's columnKind).
uint32_t code_point_column(const SourceFile &file, uint32_t line, uint32_t byte_column);

// One stable fingerprint per finding, in the same order: a hash of the rule, the file, the
// finding's source text with whitespace removed and how many identical ones came before it in the
// file. Moving code up or down does not change it; editing the flagged expression does.
std::vector<std::string> fingerprints(const std::vector<Finding> &findings);

// The `json` / `json-lines` object of one finding.
nlohmann::json finding_json(const Finding &f, const std::string &fingerprint,
                            const RenderOptions &options);

// The `json` / `json-lines` object of a reported input diagnostic: the keys of a finding's, with
// `"code": null` (as Ruff reports a syntax error) and the diagnostic's name as the rule.
nlohmann::json diagnostic_json(const Diagnostic &d);

// A stable fingerprint for a reported input diagnostic (its name, path and message).
std::string diagnostic_fingerprint(const Diagnostic &d);

} // namespace devlint
