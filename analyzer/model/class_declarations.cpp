// The package's classes: declarations, package bases, and which classes are nn.Modules or
// PreTrainedModels (directly or through bases).
#include <algorithm>
#include <memory>

#include "model/package_builder.h"
#include "model/text.h"
#include "model/torch_catalog.h"
#include "model/transformers_summary.h"

namespace devlint {
namespace {

// transformers' own PreTrainedModel subclasses that models derive from under another name
// (modeling_utils.py: `class PreTrainedAudioTokenizerBase(PreTrainedModel)`, the codecs' base).
bool is_transformers_pretrained_base(std::string_view leaf) {
  return leaf == "PreTrainedAudioTokenizerBase";
}

// A base class name that makes a class an nn.Module when the base is not in the package.
bool is_external_module_base(const Expr *base) {
  std::string dotted = dotted_name(base);
  std::string_view leaf = leaf_of(base);
  if (leaf.empty())
    return false;
  if (leaf == "Module" || ends_with(leaf, "PreTrainedModel") || ends_with(leaf, "Model") ||
      leaf.find("For") != std::string_view::npos || leaf == "ModelMixin" ||
      is_transformers_pretrained_base(leaf))
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

// A package class deriving from a torch norm layer that adds no parameters, children or passed
// modules of its own: built without affine weights (`FP32LayerNorm(d, elementwise_affine=False)`),
// it holds nothing.
bool holds_only_norm_weights(const ModuleClass &cls) {
  if (!cls.norm_layer_base || cls.calls_passed_module || !cls.all_parameters().empty())
    return false;
  for (const ChildDecl *c : cls.all_children())
    if (c->has_parameters)
      return false;
  return true;
}

} // namespace

bool is_norm_layer(std::string_view leaf) {
  return leaf == "LayerNorm" || leaf == "RMSNorm" || leaf == "GroupNorm";
}

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
    for (const FunctionDef *f : file->functions) {
      pkg_.function_by_name.emplace(f->name, f);
      pkg_.functions_of_file[file].emplace(f->name, f);
    }
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
  for (const SyntaxFile *file : pkg_.files) {
    if (auto own = pkg_.classes_of_file.find(file); own != pkg_.classes_of_file.end())
      pkg_.classes_of_module.emplace(module_stem(file->source->path), &own->second);
    if (auto own = pkg_.functions_of_file.find(file); own != pkg_.functions_of_file.end())
      pkg_.functions_of_module.emplace(module_stem(file->source->path), &own->second);
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
  bound_package_bases();
}

// Package bases as Python could have them: no cycle (`class A(B)` in one file, `class B(A)` in
// another made every lookup through the bases recurse without end) and a bounded walk: each
// lookup (find_child, all_children, ...) visits every path through the bases, so a chain of
// thousands, or diamonds stacked on diamonds, made the analysis quadratic or exponential in the
// classes. A base that closes a cycle or makes a walk through the bases visit more than
// kMaxInheritedWalk classes is dropped; real models stay far below (a handful). Iterative: a
// chain may be as long as the file allows.
void PackageBuilder::bound_package_bases() {
  constexpr size_t kMaxInheritedWalk = 64;
  enum class State { Active, Done };
  std::unordered_map<const ModuleClass *, State> state;
  std::unordered_map<const ModuleClass *, size_t> walk; // classes a walk through the bases visits
  struct Visit {
    ModuleClass *cls;
    size_t next = 0; // the base looked at
    std::vector<const ModuleClass *> kept;
    size_t walk = 0;
  };
  std::unordered_map<const ModuleClass *, ModuleClass *> owned;
  for (auto &cls : pkg_.classes)
    owned[cls.get()] = cls.get();
  for (auto &start : pkg_.classes) {
    if (state.count(start.get()))
      continue;
    std::vector<Visit> stack;
    stack.push_back({start.get(), 0, {}, 0});
    state[start.get()] = State::Active;
    while (!stack.empty()) {
      Visit &top = stack.back();
      if (top.next == top.cls->bases.size()) {
        top.cls->bases = std::move(top.kept);
        walk[top.cls] = top.walk;
        state[top.cls] = State::Done;
        stack.pop_back();
        continue;
      }
      const ModuleClass *base = top.cls->bases[top.next];
      auto seen = state.find(base);
      if (seen == state.end()) {
        state[base] = State::Active;
        stack.push_back({owned.at(base), 0, {}, 0}); // `top` is invalid from here on
        continue;
      }
      ++top.next;
      if (seen->second == State::Active || top.walk + 1 + walk[base] > kMaxInheritedWalk)
        continue; // closes a cycle, or too much to walk
      top.kept.push_back(base);
      top.walk += 1 + walk[base];
    }
  }
}

std::optional<ImportedClass> imported_class(const SyntaxFile &file, const Expr *base) {
  while (base && base->kind == ExprKind::Subscript) // Generic[...]
    base = base->operands.empty() ? nullptr : base->operands[0];
  if (!base)
    return std::nullopt;
  std::string dotted = dotted_name(base);
  if (dotted.empty())
    return std::nullopt;
  size_t dot = dotted.rfind('.');
  std::string prefix = dot == std::string::npos ? std::string() : dotted.substr(0, dot);
  std::string leaf = dot == std::string::npos ? dotted : dotted.substr(dot + 1);
  for (const ImportedName &imported : file.imports) {
    if (imported.module.empty() || imported.module[0] == '.')
      continue; // relative imports are the package's own files
    std::string module(imported.module);
    if (prefix.empty()) {
      // `from transformers import LlamaModel [as Base]`
      if (!imported.name.empty() && imported.local_name == leaf)
        return ImportedClass{module, std::string(imported.name)};
      continue;
    }
    if (imported.name.empty()) {
      // `import transformers.models.llama.modeling_llama as ml` + `ml.LlamaModel`, or
      // `import transformers` + `transformers.LlamaModel`.
      if (imported.local_name == prefix)
        return ImportedClass{module, leaf};
      if (imported.local_name == module && starts_with(prefix, module + "."))
        return ImportedClass{prefix, leaf};
      if (imported.local_name == module && prefix == module)
        return ImportedClass{module, leaf};
    } else if (imported.local_name == prefix) {
      // `from transformers import modeling_utils` + `modeling_utils.PreTrainedModel`
      return ImportedClass{module + "." + std::string(imported.name), leaf};
    }
  }
  return std::nullopt;
}

namespace {

// PyTorch's own classes are described by the catalog, never read from a search path.
bool is_torch_module(std::string_view module) {
  return module == "torch" || starts_with(module, "torch.");
}

// Merges what one more base declares into `into`, as Python's attribute lookup would find it:
// the first base that declares an attribute wins.
void merge_base_facts(ExternalModelFacts &into, bool &have_no_split, bool &have_skip_keys,
                      const ExternalModelFacts &base) {
  into.is_module |= base.is_module;
  into.is_pretrained_model |= base.is_pretrained_model;
  into.diffusers_model |= base.diffusers_model;
  into.list_unknown |= base.list_unknown;
  std::string_view source = base.source;
  if (!have_no_split && base.declares_no_split) {
    have_no_split = true;
    into.declares_no_split = true;
    into.no_split_modules = base.no_split_modules;
    into.source = std::string(source);
  }
  if (!have_skip_keys && !base.skip_keys.empty()) {
    have_skip_keys = true;
    into.skip_keys = base.skip_keys;
    if (into.source.empty())
      into.source = std::string(source);
  }
}

// A diffusers model imported from diffusers (`from diffusers import UNet2DConditionModel`, `from
// diffusers.models import AutoencoderKL`): diffusers names its ModelMixin classes `...Model` or
// `Autoencoder...`, its pipelines, schedulers, mixins and blocks otherwise.
bool is_diffusers_model_import(const ImportedClass &imported) {
  return (imported.module == "diffusers" || starts_with(imported.module, "diffusers.")) &&
         (ends_with(imported.name, "Model") || starts_with(imported.name, "Autoencoder"));
}

} // namespace

// The class of the same name in the modeling file generated from `cls`'s modular file, when the
// package holds both and `cls` declares no `_no_split_modules` of its own.
const ModuleClass *PackageBuilder::generated_counterpart(const ModuleClass &cls) const {
  std::string_view stem = module_stem(cls.file->source->path);
  constexpr std::string_view modular = "modular_";
  if (stem.substr(0, modular.size()) != modular || cls.declares_no_split)
    return nullptr;
  std::string generated_stem = "modeling_" + std::string(stem.substr(modular.size()));
  auto module = pkg_.classes_of_module.find(generated_stem);
  if (module == pkg_.classes_of_module.end())
    return nullptr;
  auto generated = module->second->find(cls.name);
  return generated == module->second->end() || generated->second == &cls ? nullptr
                                                                         : generated->second;
}

// What `cls` or a package base of it declares (`_no_split_modules`, or with `skip` the skip
// keys), the nearest declaration first; whether one was found.
bool PackageBuilder::declared_list(const ModuleClass &cls, bool skip,
                                   std::vector<std::string> &out) const {
  const ModuleClass *c = &cls;
  for (int depth = 0; c && depth < 16; ++depth) {
    if (skip ? c->declares_skip_keys : c->declares_no_split) {
      out = skip ? c->skip_keys : c->no_split_modules;
      return true;
    }
    c = c->bases.empty() ? nullptr : c->bases.front();
  }
  return false;
}

// transformers' modular files (`modular_dinov3_vit.py`) derive from other models' classes, and
// the modular converter writes the generated `modeling_dinov3_vit.py` from them, renaming what
// they inherit (Dinov2Layer becomes DINOv3ViTLayer). Where the generated file is beside it, its
// class of the same name says what the modular class declares, not the other model's base.
void PackageBuilder::adopt_generated_declarations() {
  for (auto &cls : pkg_.classes) {
    const ModuleClass *generated = generated_counterpart(*cls);
    if (!generated)
      continue;
    ExternalModelFacts facts;
    facts.base = std::string(generated->name);
    facts.source = std::string(generated->name) + " in " +
                   std::string(module_stem(generated->file->source->path)) +
                   ".py, generated from this modular file";
    facts.declares_no_split = declared_list(*generated, false, facts.no_split_modules);
    declared_list(*generated, true, facts.skip_keys);
    facts.is_module = generated->is_module;
    facts.is_pretrained_model = generated->is_pretrained_model;
    if (facts.declares_no_split || !facts.skip_keys.empty())
      cls->external = &pkg_.external_facts.emplace_back(std::move(facts));
  }
}

// Bases the package imports but does not define: what their source on a search path declares
// (driver/search_paths.h), else what transformers' own models declare in the built-in summary
// (tools/gen_transformers_summary.py).
void PackageBuilder::resolve_external_bases(ExternalClassResolver *resolver) {
  for (auto &cls : pkg_.classes) {
    ExternalModelFacts merged;
    merged.is_module = merged.is_pretrained_model = false;
    bool found = false, have_no_split = false, have_skip_keys = false;
    for (const Expr *b : cls->def->bases) {
      std::string_view leaf = leaf_of(b);
      if (leaf.empty() || pkg_.find_class(leaf))
        continue;
      std::optional<ImportedClass> imported = imported_class(*cls->file, b);
      if (imported && is_torch_module(imported->module))
        continue;
      const ExternalModelFacts *read =
          resolver && imported ? resolver->resolve(imported->module, imported->name) : nullptr;
      if (read) {
        merge_base_facts(merged, have_no_split, have_skip_keys, *read);
        found = true;
        continue;
      }
      if (imported && is_diffusers_model_import(*imported)) {
        // A ModelMixin whose `_no_split_modules` devlint cannot read: not one that declares none.
        ExternalModelFacts model;
        model.source = imported->name + " from " + imported->module;
        model.diffusers_model = model.list_unknown = true;
        merge_base_facts(merged, have_no_split, have_skip_keys, model);
        if (merged.source.empty())
          merged.source = model.source;
        found = true;
        continue;
      }
      const TransformersModelFacts *t = find_transformers_model(leaf);
      if (!t)
        continue;
      ExternalModelFacts summary;
      summary.source = std::string(leaf) + " in transformers " + kTransformersSummaryVersion +
                       ", devlint's built-in summary";
      summary.declares_no_split = t->declares_no_split;
      summary.no_split_modules = split_summary_names(t->no_split_modules);
      summary.skip_keys = split_summary_names(t->skip_keys);
      merge_base_facts(merged, have_no_split, have_skip_keys, summary);
      if (merged.source.empty())
        merged.source = summary.source;
      found = true;
    }
    if (!found)
      continue;
    merged.base = std::string(leaf_of(cls->def->bases.front()));
    cls->external = &pkg_.external_facts.emplace_back(std::move(merged));
  }
}

// `class DecoderLayer(GradientCheckpointingLayer)`: a base from outside the package that the
// name does not reveal. A class that defines `forward` on top of it is a module.
bool PackageBuilder::is_package_base(const ModuleClass &cls, const Expr *base) const {
  std::string_view leaf = leaf_of(base);
  auto resolved = std::find_if(cls.bases.begin(), cls.bases.end(),
                               [&](const ModuleClass *b) { return b->name == leaf; });
  if (leaf.empty() || resolved == cls.bases.end())
    return false;
  if ((*resolved)->file == cls.file)
    return true;
  // Imported by name from the module that defines it (`from .modelclass import Model`, `from
  // model.modelclass import Model`), not from another library's module that happens to share a
  // class name with the package.
  std::string_view stem = module_stem((*resolved)->file->source->path);
  for (const ImportedName &imported : cls.file->imports) {
    if (imported.local_name != leaf)
      continue;
    std::string_view module = imported.module;
    size_t dot = module.find_last_of('.');
    return (dot == std::string_view::npos ? module : module.substr(dot + 1)) == stem;
  }
  return false;
}

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
    if (cls->external) { // a base read from a search path or the built-in summary
      cls->is_module |= cls->external->is_module;
      cls->is_pretrained_model |= cls->external->is_pretrained_model;
      cls->diffusers_model |= cls->external->diffusers_model;
    }
    for (const Expr *b : cls->def->bases) {
      // A base the package defines is a module if it is one: `class Harness(Model)` with a
      // plain `class Model:` in a sibling file is no module, whatever its name suggests.
      if (!is_package_base(*cls, b) &&
          (is_external_module_base(b) || is_unknown_layer_base(*cls, b)))
        cls->is_module = true;
      if (has_builtin_params_base(b))
        cls->has_builtin_parameters = true;
      if (has_builtin_params_base(b) && is_norm_layer(leaf_of(b)))
        cls->norm_layer_base = true;
      // diffusers' ModelMixin loads like a PreTrainedModel: from_pretrained refuses string maps
      // for a model whose `_no_split_modules` is unset (ModelMixin._get_no_split_modules).
      if (ends_with(leaf_of(b), "PreTrainedModel") || leaf_of(b) == "ModelMixin" ||
          (!is_package_base(*cls, b) && is_transformers_pretrained_base(leaf_of(b))))
        cls->is_pretrained_model = true;
      if (leaf_of(b) == "ModelMixin")
        cls->diffusers_model = true;
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
        if (b->diffusers_model && !cls->diffusers_model)
          cls->diffusers_model = changed = true;
        if (b->has_builtin_parameters && !cls->has_builtin_parameters)
          cls->has_builtin_parameters = changed = true;
        if (b->norm_layer_base && !cls->norm_layer_base)
          cls->norm_layer_base = changed = true;
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
      c.appended_resolved.clear();
      for (const std::string &name : c.appended_classes) {
        const ModuleClass *appended = pkg_.find_class(name, cls->file);
        c.appended_resolved.push_back(appended == cls.get() ? nullptr : appended);
      }
    }
  }
  // has_parameters of package children depends on their own declarations: settle it once.
  for (size_t round = 0; round < 4; ++round)
    for (auto &cls : pkg_.classes)
      for (ChildDecl &c : cls->children)
        if (c.resolved && c.is_loss && c.resolved->has_parameters()) {
          // A loss module of the package that holds a parameter or a buffer (class weights
          // registered in its __init__) has a place in the map, and its hook moves every
          // argument to its device, as a layer's does: calling it is a module call, not a loss
          // site (docs/DEVICE_MODEL.md, "Map entries").
          c.is_loss = false;
          c.has_parameters = true;
        } else if (c.resolved && !c.is_loss) {
          c.has_parameters = c.resolved->has_parameters() &&
                             !(c.affine_off && holds_only_norm_weights(*c.resolved));
        }
}

} // namespace devlint
