#include "rules/rule.h"
#include "rules/unused_suppression.h"

namespace devlint {
namespace {

// Not a placement rule: findings/suppressions.cpp reports it when asked to
// (`--report-unused-suppressions` or `report-unused-suppressions = true`).
class UnusedSuppressionRule final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL900", "unused-suppression",
                               "a suppression comment that silences no finding",
                               R"(## What it does
Reports `# noqa: DL00x`, `# devlint: ignore[...]`, file-level `# devlint: noqa` and
`// NOLINT(devlint-...)` comments that silence no finding, or that name a rule that is not enabled
or does not exist. Only reported with `--report-unused-suppressions` or
`report-unused-suppressions = true` in the configuration.

## Why is this bad?
A suppression outlives the bug it was written for: after a fix or a refactor it silently hides the
next real finding on that line. Bare `# noqa` and bare `NOLINT` are left alone, since other linters
read them too, and so are codes of other tools (`# noqa: E501`).

## Example
```python
hidden_states = hidden_states + residual  # noqa: DL002   (nothing is reported here any more)
```

## Fix
Remove the comment (or the unused codes):
```python
hidden_states = hidden_states + residual
```
)",
                               FixStrategy::None};
    return rule;
  }
};

} // namespace

const Rule &unused_suppression_rule() {
  static const UnusedSuppressionRule rule;
  return rule;
}

Finding report_unused_suppression(const UnusedSuppression &unused) {
  auto join = [](const std::vector<std::string> &codes) {
    std::string list;
    for (const std::string &c : codes)
      list += (list.empty() ? "`" : ", `") + c + "`";
    return list;
  };
  std::string detail = "(nothing to suppress here)";
  if (!unused.bare) {
    std::vector<std::string> parts;
    if (!unused.unused.empty())
      parts.push_back("unused: " + join(unused.unused));
    if (!unused.disabled.empty())
      parts.push_back("not enabled: " + join(unused.disabled));
    if (!unused.unknown.empty())
      parts.push_back("unknown: " + join(unused.unknown));
    detail = "(";
    for (size_t p = 0; p < parts.size(); ++p)
      detail += (p ? "; " : "") + parts[p];
    detail += ")";
  }
  const RuleInfo &info = unused_suppression_rule().info();
  Finding f;
  f.code = std::string(info.code);
  f.rule_name = std::string(info.name);
  f.message = "Unused suppression " + detail;
  f.file = unused.file;
  f.range = unused.comment.directive;
  f.why = "no finding of these rules starts on the lines this comment covers";
  // Only remove the whole directive when none of its codes is still doing something.
  if (unused.other_codes_in_use)
    f.no_fix_reason = "other codes in this directive are still in use";
  else
    f.fix = suppression_removal_fix(*unused.file, unused.comment);
  return f;
}

} // namespace devlint
