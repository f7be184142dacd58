#include "placement/never_built_classes.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "placement/condition_text.h"

namespace devlint {

namespace {

// A condition in force where an expression is evaluated: true in an `if`'s body, false in its
// else branch.
struct Guard {
  const Expr *condition;
  bool holds;
};

struct Candidate {
  const ModuleClass *cls = nullptr;
  std::vector<std::string> asserted; // condition_text of each top-level assert of __init__
  size_t constructions = 0;
  bool named_otherwise = false;
};

// Walks every statement and expression of the package with the guards in force, and checks each
// mention of a candidate's name.
class ConstructionScan {
public:
  ConstructionScan(std::unordered_map<std::string_view, Candidate> &candidates)
      : candidates_(candidates) {}

  void file(const SyntaxFile &f) {
    file_ = &f;
    // `from .x import X as Y`: built under another name.
    for (const ImportedName &imported : f.imports)
      if (imported.local_name != imported.name)
        if (auto it = candidates_.find(imported.name); it != candidates_.end())
          it->second.named_otherwise = true;
    block(f.body, 0);
  }

private:
  static constexpr int kMaxDepth = 64;

  void give_up() {
    for (auto &[name, candidate] : candidates_)
      candidate.named_otherwise = true;
  }

  void block(const std::vector<Stmt *> &body, int depth) {
    for (const Stmt *s : body)
      statement(s, depth);
  }

  void statement(const Stmt *s, int depth) {
    if (depth > kMaxDepth)
      return give_up();
    for (const Expr *t : s->targets)
      expr(t, depth + 1);
    for (const Expr *i : s->items)
      expr(i, depth + 1);
    expr(s->value, depth + 1);
    if (s->kind == StmtKind::If && s->value) {
      guards_.push_back({s->value, true});
      block(s->body, depth + 1);
      guards_.back().holds = false;
      block(s->orelse, depth + 1);
      guards_.pop_back();
    } else {
      block(s->body, depth + 1);
      block(s->orelse, depth + 1);
    }
    for (const auto &handler : s->handlers)
      block(handler, depth + 1);
    block(s->finalbody, depth + 1);
    if (s->function)
      block(s->function->body, depth + 1);
    if (s->class_def) {
      for (const Expr *base : s->class_def->bases)
        if (!mentioned(base)) // a subclass is a class of its own, judged by its own constructor
          expr(base, depth + 1);
      block(s->class_def->body, depth + 1);
    }
  }

  Candidate *mentioned(const Expr *e) {
    if (!e || (e->kind != ExprKind::Name && e->kind != ExprKind::Attribute))
      return nullptr;
    auto it = candidates_.find(e->text);
    return it == candidates_.end() ? nullptr : &it->second;
  }

  // Whether a guard in force says that the asserted condition is false there.
  bool contradicts(const std::string &asserted) const {
    for (const Guard &g : guards_) {
      if (g.condition->range.end - g.condition->range.begin > kMaxConditionText)
        continue;
      std::string here = condition_text(*file_, g.condition);
      if ((here == asserted && !g.holds) || (negates(here, asserted) && g.holds))
        return true;
    }
    return false;
  }

  void construction(Candidate &c) {
    ++c.constructions;
    bool refused = false;
    for (const std::string &asserted : c.asserted)
      refused = refused || contradicts(asserted);
    if (!refused)
      c.named_otherwise = true; // built where its assert may hold
  }

  void expr(const Expr *e, int depth) {
    if (!e)
      return;
    if (depth > kMaxDepth)
      return give_up();
    if (Candidate *c = mentioned(e)) {
      c->named_otherwise = true;
      return;
    }
    if (e->kind == ExprKind::Call && !e->operands.empty()) {
      std::string_view callee = callee_leaf(e);
      // `super(X, self)`, `isinstance(m, X)`: a mention that builds nothing.
      bool harmless = callee == "super" || callee == "isinstance" || callee == "issubclass";
      if (Candidate *c = mentioned(e->operands[0]))
        construction(*c);
      else
        expr(e->operands[0], depth + 1);
      for (size_t i = 1; i < e->operands.size(); ++i)
        if (!(harmless && mentioned(e->operands[i])))
          expr(e->operands[i], depth + 1);
      for (const Keyword &k : e->keywords)
        expr(k.value, depth + 1);
      return;
    }
    if (e->kind == ExprKind::Conditional && e->operands.size() == 3) {
      expr(e->operands[1], depth + 1);
      guards_.push_back({e->operands[1], true});
      expr(e->operands[0], depth + 1);
      guards_.back().holds = false;
      expr(e->operands[2], depth + 1);
      guards_.pop_back();
      return;
    }
    for (const Expr *o : e->operands)
      expr(o, depth + 1);
    for (const Keyword &k : e->keywords)
      expr(k.value, depth + 1);
  }

  std::unordered_map<std::string_view, Candidate> &candidates_;
  const SyntaxFile *file_ = nullptr;
  std::vector<Guard> guards_;
};

} // namespace

std::unordered_set<const ModuleClass *> never_built_classes(const Package &package) {
  std::unordered_map<std::string_view, Candidate> candidates;
  for (const auto &cls : package.classes) {
    if (!cls->is_module || !cls->def || !cls->file)
      continue;
    const FunctionDef *init = cls->find_method("__init__");
    if (!init)
      continue;
    // The file holding the constructor: a package base's may be another.
    const SyntaxFile *init_file = cls->file;
    for (const ModuleClass *owner = cls.get(); owner;) {
      const auto &methods = owner->def->methods;
      if (std::find(methods.begin(), methods.end(), init) != methods.end()) {
        init_file = owner->file;
        break;
      }
      const ModuleClass *next = nullptr;
      for (const ModuleClass *base : owner->bases)
        if (base->find_method("__init__") == init)
          next = base;
      owner = next;
    }
    std::vector<std::string> asserted;
    for (const Stmt *s : init->body) {
      std::string_view condition = asserted_condition(*init_file, s);
      if (!condition.empty() && condition.size() <= kMaxConditionText)
        asserted.push_back(condition_text(condition));
    }
    if (asserted.empty())
      continue;
    Candidate &c = candidates[cls->name];
    c.cls = cls.get();
    c.asserted = std::move(asserted);
  }
  // Two classes of one name: which one a call builds is not known here.
  std::unordered_map<std::string_view, int> defined;
  for (const auto &cls : package.classes)
    if (auto it = candidates.find(cls->name); it != candidates.end() && ++defined[cls->name] > 1)
      it->second.named_otherwise = true;
  if (candidates.empty())
    return {};
  ConstructionScan scan(candidates);
  for (const SyntaxFile *f : package.files)
    scan.file(*f);
  std::unordered_set<const ModuleClass *> out;
  for (const auto &[name, candidate] : candidates)
    if (!candidate.named_otherwise && candidate.constructions > 0)
      out.insert(candidate.cls);
  return out;
}

} // namespace devlint
