// Patched forwards: a free function written as a method (`def forward(self, hidden_states)`) and
// bound to a module at run time runs as that module's method, with its submodules and weights.
#include "placement/installed_methods.h"

#include <functional>
#include <string>

#include "model/text.h"

namespace devlint {
namespace {

constexpr int kMaxDepth = 200; // as deep as the frontend lowers

bool self_first(const FunctionDef *f) {
  return !f->parameters.empty() && f->parameters[0].name == "self";
}

// The module name's last part: `pkg.monkeypatch.llama_patch` and `.llama_patch` give
// `llama_patch`.
std::string_view last_part(std::string_view module) {
  size_t dot = module.rfind('.');
  return dot == std::string_view::npos ? module : module.substr(dot + 1);
}

// The module-level function `name` among a file's definitions (Package::functions_of_file or
// functions_of_module), when its first parameter is `self`.
const FunctionDef *
method_like_in(const std::unordered_map<std::string_view, const FunctionDef *> &functions,
               std::string_view name) {
  auto it = functions.find(name);
  return it != functions.end() && self_first(it->second) ? it->second : nullptr;
}

// The function `e` names in `file`: its own, or one it imports from a sibling module, relatively
// or by its absolute name (`from pkg.llama_patch import forward as llama_forward`).
const FunctionDef *method_like(const Package &package, const SyntaxFile &file, const Expr *e) {
  if (!e || e->kind != ExprKind::Name)
    return nullptr;
  if (auto own = package.functions_of_file.find(&file); own != package.functions_of_file.end())
    if (const FunctionDef *f = method_like_in(own->second, e->text))
      return f;
  for (const ImportedName &imp : file.imports) {
    if (imp.local_name != e->text || imp.name.empty())
      continue;
    if (auto other = package.functions_of_module.find(last_part(imp.module));
        other != package.functions_of_module.end())
      if (const FunctionDef *f = method_like_in(*other->second, imp.name))
        return f;
  }
  return nullptr;
}

void collect_installed(const Package &package, const SyntaxFile &file,
                       std::unordered_map<const FunctionDef *, std::string_view> &out) {
  auto install = [&](const FunctionDef *f, const Expr *object) {
    if (f && object)
      out.emplace(f, file.source->slice(object->range));
  };
  auto method_like = [&](const Expr *e) { return devlint::method_like(package, file, e); };
  std::function<void(const Expr *, int)> visit_expr = [&](const Expr *e, int depth) {
    if (!e || depth > kMaxDepth)
      return;
    if (e->kind == ExprKind::Call) {
      const Expr *callee = e->operands[0];
      std::string_view leaf = callee->kind == ExprKind::Name || callee->kind == ExprKind::Attribute
                                  ? callee->text
                                  : std::string_view();
      // types.MethodType(f, obj), functools.partial(f, obj)
      if ((leaf == "MethodType" || leaf == "partial") && e->operands.size() >= 3)
        install(method_like(e->operands[1]), e->operands[2]);
      // f.__get__(obj) binds f to obj, as attribute lookup on obj would.
      if (leaf == "__get__" && callee->kind == ExprKind::Attribute && e->operands.size() >= 2)
        install(method_like(callee->operands[0]), e->operands[1]);
      // setattr(obj, "forward", f)
      if (leaf == "setattr" && callee->kind == ExprKind::Name && e->operands.size() == 4)
        install(method_like(e->operands[3]), e->operands[1]);
    }
    for (const Expr *o : e->operands)
      visit_expr(o, depth + 1);
    for (const Keyword &k : e->keywords)
      visit_expr(k.value, depth + 1);
  };
  std::function<void(const std::vector<Stmt *> &, int)> visit_body =
      [&](const std::vector<Stmt *> &body, int depth) {
        if (depth > kMaxDepth)
          return;
        for (const Stmt *s : body) {
          // obj.forward = f: the instance attribute shadows the class's method.
          if (s->kind == StmtKind::Assign && s->value)
            for (const Expr *t : s->targets)
              if (t->kind == ExprKind::Attribute)
                install(method_like(s->value), t->operands[0]);
          for (const Expr *t : s->targets)
            visit_expr(t, depth + 1);
          for (const Expr *i : s->items)
            visit_expr(i, depth + 1);
          visit_expr(s->value, depth + 1);
          visit_body(s->body, depth + 1);
          visit_body(s->orelse, depth + 1);
          for (const auto &h : s->handlers)
            visit_body(h, depth + 1);
          visit_body(s->finalbody, depth + 1);
          if (s->function)
            visit_body(s->function->body, depth + 1);
          if (s->class_def)
            for (const FunctionDef *m : s->class_def->methods)
              visit_body(m->body, depth + 1);
        }
      };
  visit_body(file.body, 0);
}

} // namespace

std::unordered_map<const FunctionDef *, std::string_view>
installed_methods(const Package &package) {
  std::unordered_map<const FunctionDef *, std::string_view> out;
  bool any = false;
  for (const SyntaxFile *file : package.files)
    for (const FunctionDef *f : file->functions)
      any = any || self_first(f);
  if (!any)
    return out;
  for (const SyntaxFile *file : package.files)
    collect_installed(package, *file, out);
  return out;
}

} // namespace devlint
