#include "rules/rule.h"

namespace devlint {
namespace {

// Not a placement rule: findings/suppressions.cpp reports it when asked to
// (`--report-unused-suppressions` or `report-unused-suppressions = true`).
class UnusedSuppression final : public Rule {
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
  static const UnusedSuppression rule;
  return rule;
}

} // namespace devlint
