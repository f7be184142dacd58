// Builds the text edits of a device fix (docs/DEVICE_MODEL.md section 4): move an operand to the
// anchor operand's device at the site, or create a fresh tensor on it.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "diagnostics/finding.h"
#include "model/syntax.h"

namespace devlint {

// The plain expression whose `.device` names the anchor's device: `shift_logits` for
// `shift_logits.view(-1, n)`, `inputs_embeds` for `inputs_embeds[i, :k]`, `image` for
// `image[image_mask]` when `tensor_subscripts` (Site::tensor_subscripts) holds that subscript.
// Empty if the anchor has no such side-effect-free base (a call of a submodule, say).
std::string device_anchor_text(const SourceFile &file, const Expr *anchor,
                               const std::unordered_set<const Expr *> *tensor_subscripts = nullptr);

// `operand` -> `operand.to(<anchor>.device)`, parenthesized when needed. An operand that is
// already moved somewhere (`x.cuda()`, `x.to("cuda:0")`, `x.to(dtype)`) gets its own move
// redirected instead of a second `.to`.
TextEdit move_to_device_edit(const SourceFile &file, const Expr *operand,
                             const std::string &anchor);

// Why `operand` cannot take a `.to(...)` and stay valid code that moves a tensor, or nullopt if
// it can. Only expressions that may stand before `.to(` (names, attributes, calls, subscripts,
// operators, conditionals, parenthesized ones) are wrapped; a starred element, a slice, a
// keyword, a literal, a tuple or list, a comprehension or a lambda never is: `(*xs).to(d)` and
// `(a, b).to(d)` do not parse or are no tensor.
std::optional<std::string> unmovable_operand(const Expr *operand);

// The same with the target device written out (`torch::Device("cuda:1")`).
TextEdit move_to_device_text_edit(const SourceFile &file, const Expr *operand,
                                  const std::string &target);

// `a.device` (Python) or `a.device()` (C++).
std::string device_of(const SourceFile &file, const std::string &anchor);

// The expression of `function` (outside nested definitions) that spans exactly `range`.
const Expr *find_expr(const FunctionDef &function, const SourceRange &range);

// Whether `name` at `position` in `function` is bound to the value it keeps to the end of the
// function: it is a parameter or assigned before `position`, and never assigned again after.
bool final_binding_at(const FunctionDef &function, std::string_view name, uint32_t position);

// Whether `name` at `position` still holds the argument passed for parameter `name`: no
// assignment to it comes before `position` or repeats in a loop around `position`.
bool parameter_binding_at(const FunctionDef &function, std::string_view name, uint32_t position);

// Whether every line the edits change stays within `limit` characters (fix_line_limit).
bool fits_line_limit(const SourceFile &file, const std::vector<TextEdit> &edits, size_t limit);

// The move on a line of its own before `statement`, `labels = labels.to(logits.device)`, for an
// operand that is a local name or a device-keeping chain on one (`labels.view(-1)`). Only out of
// a simple statement that starts its line, and only for an operand evaluated every time the
// statement runs (never out of comprehensions, lambdas, conditional expressions or the right of
// `and`/`or`, where moving it first would change what runs), and only when the statement reads
// the name nowhere but in the operands the fix moves (`moved_together`, `operand` itself).
std::optional<TextEdit> hoisted_move_edit(const SourceFile &file, const Stmt &statement,
                                          const Expr *operand, const std::string &anchor,
                                          const std::vector<const Expr *> &moved_together = {});

// `torch.zeros(n)` -> `torch.zeros(n, device=<anchor>.device)`.
std::optional<TextEdit> create_on_device_edit(const SourceFile &file, const Expr *constructor,
                                              const std::string &anchor);

// The same with the device written out; C++'s from_blob gets `.to(device)` after it.
std::optional<TextEdit> create_on_device_text_edit(const SourceFile &file, const Expr *constructor,
                                                   const std::string &device_text);

} // namespace devlint
