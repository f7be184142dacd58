// A finding: what a rule reports, with its origins and an optional fix. Renderers print these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diagnostics/origin_kind.h"
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

// How sure the placement makes a finding (issue 12): `Error` when a device_map="auto" placement
// on 2 to 8 GPUs (or the map given) separates its operands, when they are apart on one GPU, or
// when there is no configuration to size from; `Warning` when only a hand-made or unusual map
// would, or when the model could not be sized or an operand placed.
enum class FindingLevel : uint8_t { Error, Warning };

// One operand's origin as the placement ranking reads it (driver/placement_rank).
struct OperandOrigin {
  OriginKind kind = OriginKind::Input;
  std::string label; // child path, list path, parameter name, device
  bool earlier_iteration = false;
  std::string text; // the operand as written
  // A child holding nothing the operand went through last (`self.dropout(h)`): its hook, where it
  // is a map entry, moved the operand to its device.
  std::string through_empty_child;
  // Cast by `.type_as(x)` to a CUDA type: a CPU tensor there goes to the current device.
  bool cast_to_cuda = false;
  // An index or mask: PyTorch accepts one on the CPU for a tensor on any device.
  bool index = false;
  // Input: an argument of a method other than `forward` (`decoder.denoise(context)`), which no
  // hook moves: it arrives where its caller computed it.
  bool method_argument = false;
};

// A test of the module's own settings on the path to a finding's line (`if self.rotary_value:`,
// `if self.config.num_labels > 0:`, `if self.pooler is None:`): the placement ranking reads it
// against what each instance's `__init__` kept, since a branch the configuration disables never
// runs in the model built from it.
struct RunCondition {
  std::string text;                   // as written: "self.config.num_aggregation_labels > 0"
  std::vector<std::string> attribute; // after `self`: {"config", "num_labels"}, {"rotary_value"}
  // `self.config.cls_token[self.stage]`: the plain attribute of `self` indexing the value read
  // ("stage"); empty when it is not indexed.
  std::string subscript;
  // The configuration attribute that decides it: `self.config.Y`, or `self.X` that `__init__`
  // assigns `config.Y` or builds under `if config.Y:` (a child); empty when none is seen.
  std::string config_key;
  // A child's test: the truth `config_key` needs for the test to go the line's way.
  std::optional<bool> config_truth;
  std::string comparison; // "" (its truth), "is", "is not", "==", "!=", "<", "<=", ">", ">="
  std::string literal;    // what it is compared with, as JSON ("0", "null", "\"gelu\"")
  bool holds = true;      // the line runs where the test holds (false: where it fails)
  // A test of the unit's own `forward` arguments instead (`if image_embeddings is not None:`):
  // the line runs only where the caller hands the module at least one of these (defaulting to
  // None) as a tensor; `attribute` is empty then.
  std::vector<std::string> arguments;
  // Where `forward` rebinds the argument to a setting when it is not passed (transformers'
  // `x = x if x is not None else self.config.x`): that setting, and whether the test asks that
  // the value is not None (else its truth). Without the argument the setting decides.
  std::string argument_fallback;
  bool fallback_tests_none = false;
  // A test that the method's primary input is None (`if input_ids is None:` beside an
  // `inputs_embeds` parameter): the line runs only for callers that hand embeddings instead.
  std::string embeddings_instead; // the embeddings parameter's name; empty otherwise
};

struct OperandAlternative;

struct Finding {
  std::string code;      // "DL001"
  std::string rule_name; // "cross-device-concat"
  std::string message;   // the whole first line: JSON, SARIF and the other data formats keep it
  // The short first line the human formats print (at most ~100 characters: what meets what);
  // the origins, why, placement and fix follow as notes. Empty: `message` is short already.
  std::string summary;
  const SourceFile *file = nullptr;
  SourceRange range;
  std::vector<RelatedLocation> origins;
  std::string why; // the placement fact that makes the site fail ("X is not in ...")
  std::optional<Fix> fix;
  std::string no_fix_reason; // when there is no fix: why not
  FindingLevel level = FindingLevel::Error;
  std::string placement;  // which devices meet under which map ("fails with 3 GPUs: ...")
  std::string unit_class; // the class whose method holds the site (empty: free code)
  std::vector<OperandOrigin> operand_origins; // moved operand first, then the anchor
  // Tests of the unit's settings that every path reaching the line passes.
  std::vector<RunCondition> run_conditions;
  std::vector<OperandAlternative> alternatives;
};

// The same site told through another origin of one operand (a value joined from a branch that
// builds another member, or one handed in): where the ranking finds the finding's own origin is a
// member the model does not build (its configuration takes the other branch), it reports this.
struct OperandAlternative {
  size_t operand = 0; // index into Finding::operand_origins
  Finding told;       // as the rule that claims the site so reports it
};

// What a diagnostic means for the run (README, "Exit codes"). Warning: printed on stderr only.
// Error: an input that could not be checked (wholly): in every report format, exit code 2.
// InvalidSyntax: code that does not parse: in every report format like a finding, exit code 1.
enum class Severity { Warning, Error, InvalidSyntax };

// A problem with the input itself (unreadable path, syntax error, binary file).
struct Diagnostic {
  Severity severity = Severity::Warning;
  std::string path;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;
};

} // namespace devlint
