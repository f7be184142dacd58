// Conditions compared as Python code spells them: a flag test under which a constructor builds
// something, the branch a method runs in, the condition a constructor asserts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostics/finding.h"
#include "model/module_model.h"
#include "model/syntax.h"

namespace devlint {

// Conditions longer than this are no flag tests: not compared (each site in a branch renders its
// conditions, so a huge one would be copied once per site).
constexpr size_t kMaxConditionText = 200;

// The condition's text without blanks and parentheses: `self.n > 0` and `(self.n>0)` are one
// condition.
std::string condition_text(std::string_view code);
std::string condition_text(const SyntaxFile &file, const Expr *e);

// Whether `a` is the negation of `b`, as Python code spells it: `not x`/`x`, `x is None`/`x is
// not None`, `x == y`/`x != y`, and a count compared with zero (`x > 0`/`x == 0`, `x <= 0`).
// Both as condition_text gives them.
bool negates(const std::string &a, const std::string &b);

// The condition of an `assert` statement as written (`assert cond, "message"` gives `cond`);
// empty when `s` is no assert.
std::string_view asserted_condition(const SyntaxFile &file, const Stmt *s);

// The value a condition always has, whatever runs: `False`, `x and False`, `not True`, `x or
// True` (Python's `and` is false when any operand is, `or` true when any is). nullopt when it
// depends on anything else.
std::optional<bool> constant_truth(const SyntaxFile &file, const Expr *e, int depth = 0);

// A literal as JSON text: numbers, None, True/False, strings; empty for anything else.
std::string literal_json(const SyntaxFile &file, const Expr *e);

// `self.a.b` as {"a", "b"}; empty when `e` is no attribute chain rooted at `self`.
std::vector<std::string> self_attribute_path(const Expr *e);

// The operator of a comparison of two operands (`is not`, `==`, `>`...; no chain, no `in`);
// empty for anything else.
std::string comparison_operator(const Expr *e);

// The test under which the class's `__init__` builds its child or parameter `member`, as a run
// condition of a line that needs it (`self.embedder is not None`): decided by the configuration
// attribute the constructor tests (`if config.num_static_categorical_features > 0:`). nullopt
// when it is built unconditionally, under no single setting, or assigned again later.
// `written`, when given, receives the test as the constructor spells it.
std::optional<RunCondition> member_built_by_setting(const ModuleClass &unit,
                                                    std::string_view member,
                                                    std::string *written = nullptr);

// Whether the `__init__` that declares the class's child or parameter `member` builds it only
// under an `if` (of a setting or of a constructor argument), or as `X if test else None`: an
// instance of the class may lack it.
bool member_built_conditionally(const ModuleClass &unit, std::string_view member);
// That test as the constructor spells it (`image_dim is not None`, `not (config.x)` for an else
// branch); empty where the member is built unconditionally.
std::string member_build_test(const ModuleClass &unit, std::string_view member);

// The tests of `self`'s attributes that must go one way for the code under `condition` to run
// (`holds`: its body; else its else branch): `self.flag`, `self.config.n > 0`, `self.child is
// None`, compared with a literal, through `not`, and each operand of an `and` that holds (of an
// `or` that fails). Appended to `out` without `config_key` (the caller knows the class).
void self_tests_required(const SyntaxFile &file, const Expr *condition, bool holds,
                         std::vector<RunCondition> &out, int depth = 0);

} // namespace devlint
