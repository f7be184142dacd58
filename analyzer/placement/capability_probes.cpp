#include "placement/capability_probes.h"

namespace devlint {
namespace {

// Occurrences of the name `name` in `e`.
int count_name(const Expr *e, std::string_view name) {
  if (!e)
    return 0;
  int n = is_name(e, name) ? 1 : 0;
  for (const Expr *o : e->operands)
    n += count_name(o, name);
  for (const Keyword &k : e->keywords)
    n += count_name(k.value, name);
  return n;
}

// A statement whose value is dropped: `kernel(q)` alone, or `_ = kernel(q)`.
bool discards_result(const Stmt &s) {
  if (s.kind == StmtKind::Expr)
    return true;
  if (s.kind != StmtKind::Assign || s.targets.empty())
    return false;
  for (const Expr *t : s.targets)
    if (!is_name(t, "_"))
      return false;
  return true;
}

// How many times `name` is a whole argument of the call that is `s`'s dropped value.
int discarded_argument_uses(const Stmt &s, std::string_view name) {
  if (!discards_result(s) || !s.value || s.value->kind != ExprKind::Call)
    return 0;
  int n = 0;
  for (size_t i = 1; i < s.value->operands.size(); ++i)
    n += is_name(s.value->operands[i], name) ? 1 : 0;
  for (const Keyword &k : s.value->keywords)
    n += is_name(k.value, name) ? 1 : 0;
  return n;
}

// Whether every use of `name` in `body` (but `definition`'s target) is a discarded call's
// argument; `probes` counts those uses.
bool only_probed(const std::vector<Stmt *> &body, std::string_view name, const Stmt &definition,
                 int &probes) {
  for (const Stmt *s : body) {
    if (!s)
      continue;
    int uses = count_name(s->value, name);
    for (const Expr *e : s->items)
      uses += count_name(e, name);
    if (s != &definition)
      for (const Expr *e : s->targets)
        uses += count_name(e, name);
    if (uses != discarded_argument_uses(*s, name))
      return false;
    probes += uses;
    if (s->kind == StmtKind::FunctionDef || s->kind == StmtKind::ClassDef)
      continue; // a nested scope of its own
    for (const std::vector<Stmt *> *block : {&s->body, &s->orelse, &s->finalbody})
      if (!only_probed(*block, name, definition, probes))
        return false;
    for (const std::vector<Stmt *> &handler : s->handlers)
      if (!only_probed(handler, name, definition, probes))
        return false;
  }
  return true;
}

} // namespace

bool is_capability_probe(const FunctionDef &function, const Stmt &statement) {
  if (statement.kind != StmtKind::Assign || statement.targets.size() != 1 ||
      statement.targets[0]->kind != ExprKind::Name || !statement.value)
    return false;
  // A tensor never used is placed all the same (dead code, still a literal device): only one
  // tried on a kernel is a probe.
  int probes = 0;
  return only_probed(function.body, statement.targets[0]->text, statement, probes) && probes > 0;
}

} // namespace devlint
