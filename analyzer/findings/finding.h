// A finding: what a rule reports, with its origins and an optional fix. Renderers print these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/source_file.h"

namespace devlint {

struct TextEdit {
  uint32_t begin = 0; // byte offsets in the original text
  uint32_t end = 0;
  std::string replacement;
};

// As in Ruff: safe fixes are applied by --fix, unsafe ones only with --unsafe-fixes.
enum class Applicability { Safe, Unsafe, DisplayOnly };

struct Fix {
  Applicability applicability = Applicability::Safe;
  std::string title; // "Move `kv_cache` to `presents.device`"
  std::vector<TextEdit> edits;
};

// Where one operand's tensor came from: shown as a note and as a SARIF related location.
struct RelatedLocation {
  std::string path;
  SourceRange range;
  std::string message;
};

struct Finding {
  std::string code;      // "DL001"
  std::string rule_name; // "cross-device-concat"
  std::string message;
  const SourceFile *file = nullptr;
  SourceRange range;
  std::vector<RelatedLocation> origins;
  std::string why; // the placement fact that makes the site fail ("X is not in ...")
  std::optional<Fix> fix;
  std::string no_fix_reason; // when there is no fix: why not
};

enum class Severity { Warning, Error };

// A problem with the input itself (unreadable path, syntax error, binary file).
struct Diagnostic {
  Severity severity = Severity::Warning;
  std::string path;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;
};

} // namespace devlint
