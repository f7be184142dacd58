// The package's classes: declarations, package bases, and which classes are nn.Modules or
// PreTrainedModels (directly or through bases).
#include <memory>

#include "model/package_builder.h"
#include "model/text.h"
#include "model/torch_catalog.h"
#include "model/transformers_summary.h"

namespace devlint {
namespace {

// A base class name that makes a class an nn.Module when the base is not in the package.
bool is_external_module_base(const Expr *base) {
  std::string dotted = dotted_name(base);
  std::string_view leaf = leaf_of(base);
  if (leaf.empty())
    return false;
  if (leaf == "Module" || ends_with(leaf, "PreTrainedModel") || ends_with(leaf, "Model") ||
      leaf.find("For") != std::string_view::npos || leaf == "ModelMixin")
    return leaf != "GenerationMixin";
  return starts_with(dotted, "nn.") || starts_with(dotted, "torch.nn.");
}

bool has_builtin_params_base(const Expr *base) {
  std::string dotted = dotted_name(base);
  std::string_view leaf = leaf_of(base);
  if (!(starts_with(dotted, "nn.") || starts_with(dotted, "torch.nn.")))
    return false;
  return leaf != "Module" && !torch_catalog::is_module_container(leaf) &&
         !torch_catalog::is_parameterless_module(leaf);
}

} // namespace

std::string_view leaf_of(const Expr *e) {
  if (!e)
    return {};
  if (e->kind == ExprKind::Name || e->kind == ExprKind::Attribute)
    return e->text;
  if (e->kind == ExprKind::Subscript) // Generic[...] bases
    return leaf_of(e->operands[0]);
  return {};
}

void PackageBuilder::collect_declarations() {
  for (const SyntaxFile *file : pkg_.files) {
    for (const ClassDef *c : file->classes) {
      auto cls = std::make_unique<ModuleClass>();
      cls->name = c->name;
      cls->def = c;
      cls->file = file;
      for (const Expr *b : c->bases)
        cls->base_names.emplace_back(leaf_of(b));
      pkg_.class_by_name.emplace(cls->name, cls.get());
      pkg_.classes_of_file[file].emplace(cls->name, cls.get());
      pkg_.classes.push_back(std::move(cls));
    }
    for (const FunctionDef *f : file->functions)
      pkg_.function_by_name.emplace(f->name, f);
    for (const Stmt *st : file->body) {
      if (st->kind != StmtKind::Assign || !st->value || st->value->kind != ExprKind::Dict ||
          st->targets.empty() || st->targets[0]->kind != ExprKind::Name)
        continue;
      std::vector<std::string_view> names;
      for (const Expr *v : st->value->operands)
        if (v->kind == ExprKind::Name)
          names.push_back(v->text);
      if (!names.empty())
        pkg_.class_dicts[st->targets[0]->text] = std::move(names);
    }
  }
  for (auto &cls : pkg_.classes) {
    for (const std::string &b : cls->base_names) {
      // `class LlamaAttention(LlamaAttention)` names another file's class, not itself.
      const ModuleClass *base = pkg_.find_class(b, cls->file);
      if (base == cls.get())
        base = pkg_.find_class(b);
      if (base && base != cls.get())
        cls->bases.push_back(base);
    }
  }
}

// Bases the package imports but does not define: what transformers' own models declare, from
// the built-in summary (tools/gen_transformers_summary.py).
void PackageBuilder::resolve_external_bases() {
  for (auto &cls : pkg_.classes) {
    for (const Expr *b : cls->def->bases) {
      std::string_view leaf = leaf_of(b);
      if (leaf.empty() || pkg_.find_class(leaf))
        continue;
      const TransformersModelFacts *t = find_transformers_model(leaf);
      if (!t)
        continue;
      ExternalModelFacts &facts = pkg_.external_facts.emplace_back();
      facts.base = std::string(leaf);
      facts.source = std::string(leaf) + " in transformers " + kTransformersSummaryVersion +
                     ", devlint's built-in summary";
      facts.declares_no_split = t->declares_no_split;
      facts.no_split_modules = split_summary_names(t->no_split_modules);
      facts.skip_keys = split_summary_names(t->skip_keys);
      cls->external = &facts;
      break;
    }
  }
}

// `class DecoderLayer(GradientCheckpointingLayer)`: a base from outside the package that the
// name does not reveal. A class that defines `forward` on top of it is a module.
bool PackageBuilder::is_unknown_layer_base(const ModuleClass &cls, const Expr *base) const {
  std::string_view leaf = leaf_of(base);
  if (leaf.empty() || pkg_.find_class(leaf) || leaf == "object" || leaf == "ABC" ||
      leaf == "Enum" || leaf == "NamedTuple" || leaf == "Generic" || leaf == "Protocol" ||
      ends_with(leaf, "Mixin") || ends_with(leaf, "Config") || ends_with(leaf, "Output") ||
      ends_with(leaf, "Exception") || ends_with(leaf, "Error"))
    return false;
  for (const FunctionDef *m : cls.def->methods)
    if (m->name == "forward")
      return true;
  return false;
}

void PackageBuilder::classify() {
  // is_module / is_pretrained propagate through package bases; iterate to a fixpoint (the
  // inheritance graph is small and acyclic in practice; the bound guards against cycles).
  for (auto &cls : pkg_.classes) {
    if (cls->external)
      cls->is_module = cls->is_pretrained_model = true; // a transformers PreTrainedModel
    for (const Expr *b : cls->def->bases) {
      if (is_external_module_base(b) || is_unknown_layer_base(*cls, b))
        cls->is_module = true;
      if (has_builtin_params_base(b))
        cls->has_builtin_parameters = true;
      if (ends_with(leaf_of(b), "PreTrainedModel") || leaf_of(b) == "PreTrainedModel")
        cls->is_pretrained_model = true;
    }
  }
  for (size_t round = 0; round < pkg_.classes.size() + 1; ++round) {
    bool changed = false;
    for (auto &cls : pkg_.classes) {
      for (const ModuleClass *b : cls->bases) {
        if (b->is_module && !cls->is_module)
          cls->is_module = changed = true;
        if (b->is_pretrained_model && !cls->is_pretrained_model)
          cls->is_pretrained_model = changed = true;
        if (b->has_builtin_parameters && !cls->has_builtin_parameters)
          cls->has_builtin_parameters = changed = true;
      }
    }
    if (!changed)
      break;
  }
}

void PackageBuilder::resolve_children() {
  for (auto &cls : pkg_.classes) {
    for (ChildDecl &c : cls->children) {
      c.resolved = pkg_.find_class(c.class_name, cls->file);
      if (c.resolved == cls.get())
        c.resolved = nullptr;
    }
  }
  // has_parameters of package children depends on their own declarations: settle it once.
  for (size_t round = 0; round < 4; ++round)
    for (auto &cls : pkg_.classes)
      for (ChildDecl &c : cls->children)
        if (c.resolved && !c.is_loss)
          c.has_parameters = c.resolved->has_parameters();
}

} // namespace devlint
