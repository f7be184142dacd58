// The small, language-neutral program model every frontend lowers into: definitions, statements
// and expressions with source ranges. The placement analysis and the rules only ever see this.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/source_file.h"

namespace devlint {

enum class ExprKind : uint8_t {
  Name,        // text = identifier
  Attribute,   // operands[0] = object, text = attribute name
  Subscript,   // operands[0] = value, operands[1..] = indices
  Call,        // operands[0] = callee, operands[1..] = positional args; keywords
  BinaryOp,    // operands[0] op operands[1]; text = operator ("+", "@", ...)
  Compare,     // operands[0] op operands[1] (chains keep the first pair); text = operator
  UnaryOp,     // text = operator, operands[0]
  BoolOp,      // and/or/not: operands
  Conditional, // operands[0] if operands[1] else operands[2]
  Tuple,       // operands = elements (also lists and sets); text = "tuple", "list" or "set"
  Dict,        // operands = values; keywords[i].value = the key of operands[i] (name empty)
  Number,
  String, // text = the literal's content without quotes (best effort)
  NoneLiteral,
  Bool,
  Slice,   // operands = bounds that are present
  Starred, // operands[0]
  Lambda,
  Comprehension, // operands[0] = element, operands[1] = iterated expression; a dict's key in
                 // keywords[0] (text "dict")
  Other,
};

struct Expr;
struct Keyword {
  std::string_view name; // empty for **kwargs
  Expr *value = nullptr;
};

struct Expr {
  ExprKind kind = ExprKind::Other;
  SourceRange range;
  std::string_view text;
  std::vector<Expr *> operands;
  std::vector<Keyword> keywords; // Call: keyword arguments; Dict: the keys
  // `(name := value)` lowers to the value's expression, naming here the variable it binds.
  std::string_view binds;

  const Keyword *keyword(std::string_view name) const {
    for (const Keyword &k : keywords)
      if (k.name == name)
        return &k;
    return nullptr;
  }
};

enum class StmtKind : uint8_t {
  Expr,      // value
  Assign,    // targets = (a = b = value), value (may be null for bare annotations)
  AugAssign, // targets[0] op= value; text = operator without '='
  If,        // value = condition; body; orelse (elif is a nested If)
  For,       // targets[0] = loop target, value = iterable; body; orelse
  While,     // value = condition; body; orelse
  With,      // targets = `as` targets, items = context expressions; body
  Try,       // body; handlers; orelse; finalbody
  Return,    // value (may be null)
  FunctionDef,
  ClassDef,
  Delete,
  Raise,
  Other, // pass, assert, import, global, break, continue...
};

struct FunctionDef;
struct SyntaxFile;
struct ClassDef;

struct Stmt {
  StmtKind kind = StmtKind::Other;
  SourceRange range;
  std::string_view text;
  std::vector<Expr *> targets;
  std::vector<Expr *> items;
  Expr *value = nullptr;
  std::vector<Stmt *> body;
  std::vector<Stmt *> orelse;
  std::vector<std::vector<Stmt *>> handlers;
  // Try: each handler's exception type as written (`Exception`, `(ImportError, OSError)`), empty
  // for a bare `except:`.
  std::vector<std::string_view> handler_types;
  std::vector<Stmt *> finalbody;
  FunctionDef *function = nullptr;
  ClassDef *class_def = nullptr;
  std::string_view annotation; // Assign: `int` of `x: int = 1` as written, empty if none
};

struct Parameter {
  std::string_view name;
  SourceRange range;
  Expr *default_value = nullptr;
  std::string_view annotation; // as written, empty if none
  bool variadic = false;       // *args / **kwargs
};

struct FunctionDef {
  std::string_view name;
  SourceRange range;      // the whole definition
  SourceRange name_range; // the name only
  std::vector<Parameter> parameters;
  std::string_view returns; // the return annotation as written, empty if none
  std::vector<Stmt *> body;
  bool is_staticmethod = false;
  bool is_classmethod = false;    // its first parameter is the class: calling it builds an instance
  bool is_property = false;       // `@property`: reading the attribute calls it
  std::vector<Expr *> decorators; // `@register_to_config`, `@torch.no_grad()`: the expressions
  // Driver code outside any module, as at a Python script's top level (C++'s `main` and its
  // helpers): a model placed on a device there is called with tensors placed elsewhere.
  bool runs_as_script = false;
  // The file holding the body when it is not the file of its class (a C++ method defined out of
  // line, in a .cpp, for a class declared in a header).
  const SyntaxFile *body_file = nullptr;

  bool has_parameter(std::string_view parameter) const {
    for (const Parameter &p : parameters)
      if (p.name == parameter)
        return true;
    return false;
  }
};

struct ClassDef {
  std::string_view name;
  SourceRange range;
  std::vector<Expr *> bases;
  std::vector<Stmt *> body;
  std::vector<FunctionDef *> methods;
  std::vector<Expr *> decorators; // `@strict`, `@dataclass(frozen=True)`: the expressions
};

struct ImportedName {
  std::string_view local_name;
  std::string_view module; // e.g. ".visual" or "torch.nn"
  std::string_view name;   // imported name, empty for `import module`
};

// A place where the file is not valid Python 3, and what is wrong there.
struct SyntaxErrorNote {
  SourceRange range;
  std::string message; // "unexpected `)`", "Python 2 `print` statement: Python 3 calls print(...)"
};

// One lowered source file. Owns all nodes; everything points into `source->text`.
struct SyntaxFile {
  const SourceFile *source = nullptr;
  std::vector<Stmt *> body;
  // Top-level classes, and those of the branch a module-level `if is_<library>_available():`
  // takes on the machine devlint assumes (module_level_statements).
  std::vector<ClassDef *> classes;
  std::vector<FunctionDef *> functions; // top-level functions
  std::vector<ImportedName> imports;
  std::vector<SyntaxErrorNote> syntax_errors;
  // Code is placed only by explicit moves (LibTorch C++): no device map splits a module.
  bool explicit_placement = false;

  // Text a frontend synthesizes (a C++ device literal, a class name from a header): nodes may
  // point into it as into the source.
  std::string_view intern(std::string s) { return strings_.emplace_back(std::move(s)); }
  // Where nesting went deeper than the frontend follows (see python_frontend.cpp): the code
  // inside was not analyzed. Only the first such place is kept.
  std::vector<SourceRange> too_deep;

  template <class T> T *make() {
    if constexpr (std::is_same_v<T, Expr>)
      return &exprs.emplace_back();
    else if constexpr (std::is_same_v<T, Stmt>)
      return &stmts.emplace_back();
    else if constexpr (std::is_same_v<T, FunctionDef>)
      return &functions_storage.emplace_back();
    else
      return &classes_storage.emplace_back();
  }

private:
  std::deque<std::string> strings_;
  std::deque<Expr> exprs;
  std::deque<Stmt> stmts;
  std::deque<FunctionDef> functions_storage;
  std::deque<ClassDef> classes_storage;
};

// Helpers shared by every stage that reads expressions.
inline bool is_name(const Expr *e, std::string_view name) {
  return e && e->kind == ExprKind::Name && e->text == name;
}
// `self.<attribute>`.
inline bool is_self_attribute(const Expr *e, std::string_view attribute) {
  return e && e->kind == ExprKind::Attribute && e->text == attribute &&
         is_name(e->operands[0], "self");
}
// "self.layers.0" style dotted text for Name/Attribute chains; empty if not such a chain.
std::string dotted_name(const Expr *e);
// The callee's last attribute or name: `torch.nn.functional.linear` -> "linear".
std::string_view callee_leaf(const Expr *call);
// Whether `matches` holds for `e` or an expression under it (operands and keyword values);
// code nested deeper than `max_depth` counts as `too_deep`.
template <typename Predicate>
bool any_subexpression(const Expr *e, const Predicate &matches, int max_depth, bool too_deep,
                       int depth = 0) {
  if (!e)
    return false;
  if (depth > max_depth)
    return too_deep;
  if (matches(e))
    return true;
  for (const Expr *operand : e->operands)
    if (any_subexpression(operand, matches, max_depth, too_deep, depth + 1))
      return true;
  for (const Keyword &k : e->keywords)
    if (any_subexpression(k.value, matches, max_depth, too_deep, depth + 1))
      return true;
  return false;
}
// transformers' and diffusers' `is_<library>_available()` probes. devlint assumes the machine
// `device_map="auto"` needs (torch with CUDA, accelerate) and no optional library, so a model
// builds its own fallback: whether `library` counts as installed.
bool library_assumed_installed(std::string_view library);
// The library a function named `is_<library>_available` probes; empty for any other name.
std::string_view library_probed_by(std::string_view function_name);
// The library an `is_<library>_available()` call (no arguments) probes; empty for anything else.
std::string_view probed_library(const Expr *call);
// A file's module-level statements as Python runs them on that machine: the branch a top-level
// `if is_<library>_available(): ... else: ...` takes stands in place of the `if` (xLSTM defines
// its own blocks when the xlstm package is absent), every other statement as it is.
std::vector<const Stmt *> module_level_statements(const std::vector<Stmt *> &body);
// The first statement of `body`, or of the blocks nested in it (branches, loop and `with`
// bodies, `except` handlers, `finally`), for which `matches` holds; null when none does.
template <typename Predicate>
const Stmt *find_statement(const std::vector<Stmt *> &body, const Predicate &matches) {
  for (const Stmt *s : body) {
    if (matches(s))
      return s;
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse, &s->finalbody})
      if (const Stmt *found = find_statement(*nested, matches))
        return found;
    for (const std::vector<Stmt *> &handler : s->handlers)
      if (const Stmt *found = find_statement(handler, matches))
        return found;
  }
  return nullptr;
}

// Calls `visit` on each expression a statement holds itself: its value, its targets and its
// items (`with` contexts), not those of the statements nested in it.
template <typename Visit> void for_each_expression(const Stmt *s, const Visit &visit) {
  visit(s->value);
  for (const Expr *e : s->targets)
    visit(e);
  for (const Expr *e : s->items)
    visit(e);
}

// Whether `s` is an assignment, augmented assignment, loop or `with` whose targets mention `name`
// (`name = ...`, `a, name = ...`, and conservatively `name.x = ...`, `name[i] = ...`).
bool binds_name(const Stmt *s, std::string_view name);

// What `call` passes for the parameter at `index` (counting `self`) named `name`: the expression,
// or nullptr where the call leaves it to its default; nullopt where the call splats arguments
// anywhere (`*args`, `**kwargs`), which may pass anything.
std::optional<const Expr *> argument_passed(const Expr *call, size_t index, std::string_view name);

// Whether an assignment, augmented assignment, loop or `with` target in `function`'s body mentions
// `name` (`name = ...`, `a, name = ...`, and conservatively `name.x = ...`, `name[i] = ...`):
// then `name` may no longer hold the argument the function received.
bool assigns_to(const FunctionDef &function, std::string_view name);

} // namespace devlint
