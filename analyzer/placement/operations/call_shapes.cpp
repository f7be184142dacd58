#include "placement/operations/call_shapes.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <unordered_set>
#include <utility>

#include "model/text.h"
#include "model/torch_layers.h"

namespace devlint {

bool made_on_cpu_only(const Value &v) {
  return v.kind == Value::Kind::Tensor && v.has_origins() &&
         std::all_of(v.origins.begin(), v.origins.end(), made_on_cpu);
}

bool is_torch_layer_with_weights(const ChildDecl *child) {
  if (!child || !child->has_parameters || child->resolved)
    return false;
  return torch_layer_shape(child->class_name,
                           [](size_t, std::string_view) {
                             LayerArgument missing;
                             missing.kind = LayerArgument::Kind::Missing;
                             return missing;
                           })
      .known_layer;
}

bool is_full_reduction(std::string_view name) {
  static const std::unordered_set<std::string_view> s = {
      "sum", "mean", "prod", "max", "min",    "amax",      "amin",         "norm",
      "all", "any",  "std",  "var", "median", "logsumexp", "count_nonzero"};
  return s.count(name) > 0;
}

bool has_dim_argument(const Expr *call, size_t first_dim_position) {
  return call->operands.size() > first_dim_position || call->keyword("dim") ||
         call->keyword("axis");
}

bool all_on_cpu(const Value &v) {
  if (!v.has_origins())
    return false;
  for (const Origin *o : v.origins)
    if (o->kind != OriginKind::Fresh && o->kind != OriginKind::PlainTensor)
      return false;
  return true;
}

bool names_device(const Expr *e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::Attribute || e->kind == ExprKind::Name)
    return e->text.find("device") != std::string_view::npos;
  return e->kind == ExprKind::Call && callee_leaf(e) == "device";
}

bool builds_cuda_device_name(const Expr *e) {
  return e && e->kind == ExprKind::BinaryOp && e->text == "+" && e->operands.size() == 2 &&
         e->operands[0]->kind == ExprKind::String && starts_with(e->operands[0]->text, "cuda");
}

bool builds_list(const Expr *e) {
  if (!e || e->kind != ExprKind::BinaryOp || e->operands.size() != 2)
    return false;
  auto list = [](const Expr *operand) {
    return operand->kind == ExprKind::Tuple || operand->kind == ExprKind::Comprehension ||
           builds_list(operand);
  };
  return (e->text == "*" || e->text == "+") && (list(e->operands[0]) || list(e->operands[1]));
}

namespace {

// `self.shared_embedding = shared_patch_embedding` in `__init__`, straight from one of its
// parameters: an object the parent handed in.
bool assigned_from_parameter(const std::vector<Stmt *> &body, const FunctionDef &init,
                             std::string_view attr) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign && s->value && s->value->kind == ExprKind::Name)
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self") &&
            init.has_parameter(s->value->text))
          return true;
    if (s->kind == StmtKind::If && (assigned_from_parameter(s->body, init, attr) ||
                                    assigned_from_parameter(s->orelse, init, attr)))
      return true;
  }
  return false;
}

// What `__init__` assigns to `self.<attr>`, in any of its blocks: counts of `None` and of
// anything else.
void count_assignments(const std::vector<Stmt *> &body, std::string_view attr, int &none,
                       int &other) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign)
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self"))
          ++(s->kind == StmtKind::Assign && s->value && s->value->kind == ExprKind::NoneLiteral
                 ? none
                 : other);
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse, &s->finalbody})
      count_assignments(*nested, attr, none, other);
    for (const std::vector<Stmt *> &handler : s->handlers)
      count_assignments(handler, attr, none, other);
  }
}

} // namespace

bool left_for_parent(const Package &pkg, const ModuleClass &unit, std::string_view attr) {
  const FunctionDef *init = unit.find_method("__init__");
  int none = 0, other = 0;
  if (init)
    count_assignments(init->body, attr, none, other);
  if (none == 0 || other > 0)
    return false;
  // The parent's own `__init__` sets it on a submodule (`self.model.decoder.<attr> = ...`), so it
  // is built, and placed, with the model; one set later by a method (RAG's
  // `set_context_encoder_for_training`) is the user's module, placed wherever they put it.
  auto sets_on_submodule = [attr](const Stmt *s) {
    if (s->kind != StmtKind::Assign)
      return false;
    for (const Expr *t : s->targets)
      if (t->kind == ExprKind::Attribute && t->text == attr &&
          t->operands[0]->kind == ExprKind::Attribute &&
          dotted_name(t->operands[0]).rfind("self.", 0) == 0)
        return true;
    return false;
  };
  for (const auto &cls : pkg.classes)
    if (const FunctionDef *parent_init = cls->find_method("__init__"))
      if (cls.get() != &unit && find_statement(parent_init->body, sets_on_submodule))
        return true;
  return false;
}

bool handed_to_constructor(const ModuleClass &unit, std::string_view attr) {
  const FunctionDef *init = unit.find_method("__init__");
  return init && assigned_from_parameter(init->body, *init, attr);
}

bool imports_kernel(const SyntaxFile &file, const Expr *callee) {
  std::optional<ImportedClass> imported = imported_class(file, callee);
  if (!imported)
    return false;
  std::string_view module = imported->module;
  std::string_view top = module.substr(0, module.find('.'));
  // A class (PEP 8 names them in CapWords) builds an object holding what it is handed, as an
  // output dataclass does (`LDM3DPipelineOutput(rgb=rgb, depth=depth)`): it combines nothing.
  std::string_view name = callee->kind == ExprKind::Name ? callee->text : std::string_view{};
  if (!name.empty() && std::isupper(static_cast<unsigned char>(name[0])))
    return false;
  return top != "torch" && top != "transformers" && top != "typing" && top != "functools";
}

namespace {

// transformers' helpers devlint knows without their source: each computes where its tensor
// arguments are. `pytorch_utils.meshgrid` is `torch.meshgrid(*tensors, indexing=indexing)`;
// every function `activations` exports (`gelu = get_activation("gelu")`) is an activation module
// holding nothing (an empty name: any name of the module).
constexpr std::pair<std::string_view, std::string_view> kTransformersKnownHelpers[] = {
    {"pytorch_utils", "meshgrid"},
    {"activations", ""},
};

bool is_known_helper(std::string_view module, std::string_view name) {
  return std::any_of(std::begin(kTransformersKnownHelpers), std::end(kTransformersKnownHelpers),
                     [&](const auto &helper) {
                       const std::string_view leaf = helper.first;
                       return (helper.second.empty() || name == helper.second) &&
                              module.size() > leaf.size() &&
                              module.substr(module.size() - leaf.size()) == leaf &&
                              module[module.size() - leaf.size() - 1] == '.';
                     });
}

} // namespace

bool imports_unread_tree_function(const SyntaxFile &file, const Expr *callee) {
  if (callee->kind != ExprKind::Name)
    return false;
  // A class (CapWords) builds an object holding what it is handed (an output dataclass).
  if (!callee->text.empty() && std::isupper(static_cast<unsigned char>(callee->text[0])))
    return false;
  return std::any_of(file.imports.begin(), file.imports.end(), [&](const ImportedName &imported) {
    return imported.local_name == callee->text && !imported.name.empty() &&
           !imported.module.empty() && imported.module[0] == '.' &&
           !is_known_helper(imported.module, imported.name);
  });
}

const FunctionDef *handed_method(const Expr *call, const ModuleClass *unit) {
  if (!unit || call->operands.size() < 2)
    return nullptr;
  const Expr *first = call->operands[1];
  if (first->kind != ExprKind::Attribute || !is_name(first->operands[0], "self") ||
      unit->find_child(first->text))
    return nullptr;
  const FunctionDef *method = unit->find_method(first->text);
  return method && !method->is_staticmethod ? method : nullptr;
}

} // namespace devlint
