// The module tree built by evaluating the root class's __init__ with the configuration, its tied
// parameters, and its modules and tensors by name.
#include "simulation/module_tree.h"

#include <algorithm>
#include <functional>

#include "simulation/evaluator.h"
#include "simulation/python_regex.h"

namespace devlint {

using simulation::Evaluator;
using simulation::from_json;
using simulation::Kind;
using simulation::python_regex_search;
using simulation::Value;

namespace {

// The parameter `path` names ("lm_head.weight", "model.layers.0.mlp.up.bias") below `root`, or
// null.
TreeTensor *parameter_at(ModuleNode *root, std::string_view path) {
  ModuleNode *node = root;
  for (size_t dot = path.find('.'); node && dot != std::string_view::npos; dot = path.find('.')) {
    node = node->child(std::string(path.substr(0, dot)));
    path.remove_prefix(dot + 1);
  }
  if (node)
    for (TreeTensor &t : node->parameters)
      if (t.name == path)
        return &t;
  return nullptr;
}

// get_parameter_or_buffer(path) below `root`, or null.
TreeTensor *tensor_at(ModuleNode *root, std::string_view path) {
  if (TreeTensor *t = parameter_at(root, path))
    return t;
  ModuleNode *node = root;
  for (size_t dot = path.find('.'); node && dot != std::string_view::npos; dot = path.find('.')) {
    node = node->child(std::string(path.substr(0, dot)));
    path.remove_prefix(dot + 1);
  }
  if (node)
    for (TreeTensor &t : node->buffers)
      if (t.name == path)
        return &t;
  return nullptr;
}

// PreTrainedModel.get_expanded_tied_weights_keys (transformers 5): a mapping whose keys and
// values all name parameters (`^[A-Za-z0-9_\.]+(weight)|(bias)$` matches them) is used as it
// is; otherwise each key and value is a pattern (`re.search("^" + key, name)`) over the model's
// parameter and buffer names, the sorted targets tied in turn to the sorted sources (cycled),
// a source that is itself a target replaced by its own source. A pattern that matches nothing,
// or targets that are no multiple of the sources, make from_pretrained raise: the pair is
// listed. So is a pattern devlint's matcher cannot run.
std::vector<std::pair<std::string, std::string>>
expanded_tied_keys(ModuleNode *owner, const Value &keys, const std::string &prefix,
                   std::vector<TreeUnknown> &unknowns) {
  std::vector<std::pair<std::string, std::string>> pairs, expanded;
  for (const auto &[target, source] : *keys.dict)
    if (target.is(Kind::Str) && source.is(Kind::Str))
      pairs.emplace_back(target.text, source.text);
  auto names_parameter = [](const std::string &name) {
    return python_regex_search(R"(^[A-Za-z0-9_\.]+(weight)|^(bias)$)", name).value_or(false);
  };
  if (std::all_of(pairs.begin(), pairs.end(), [&](const auto &pair) {
        return names_parameter(pair.first) && names_parameter(pair.second);
      }))
    return pairs;
  // named_parameters(remove_duplicate=False) and named_buffers(...): a module registered
  // under two names (`self.model.decoder.class_embed = self.class_embed`) lists its tensors
  // under both.
  std::vector<std::string> names;
  std::vector<const ModuleNode *> path;
  std::function<void(const ModuleNode *, const std::string &)> walk = [&](const ModuleNode *node,
                                                                          const std::string &at) {
    if (path.size() > 64 || std::find(path.begin(), path.end(), node) != path.end() ||
        names.size() > 100000)
      return;
    path.push_back(node);
    for (const auto *list : {&node->parameters, &node->buffers})
      for (const TreeTensor &t : *list)
        names.push_back(at + t.name);
    for (const auto &[name, child] : node->children)
      walk(child, at + name + ".");
    path.pop_back();
  };
  walk(owner, "");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  auto matching = [&](const std::string &pattern) -> std::optional<std::vector<std::string>> {
    std::vector<std::string> out;
    for (const std::string &name : names) {
      std::optional<bool> found = python_regex_search("^" + pattern, name);
      if (!found)
        return std::nullopt;
      if (*found)
        out.push_back(name);
    }
    return out;
  };
  for (const auto &[target, source] : pairs) {
    auto targets = matching(target), sources = matching(source);
    if (!targets || !sources || sources->empty() || targets->empty() ||
        targets->size() % sources->size() != 0) {
      unknowns.push_back(
          {prefix,
           "_tied_weights_keys: `" + target + "` -> `" + source + "` " +
               (!targets || !sources ? "is a pattern devlint cannot match" : "names no parameter") +
               "; not tied",
           ""});
      continue;
    }
    for (size_t i = 0; i < targets->size(); ++i) {
      std::string from = (*sources)[i % sources->size()];
      auto earlier = std::find_if(expanded.begin(), expanded.end(),
                                  [&](const auto &pair) { return pair.first == from; });
      if (earlier != expanded.end())
        from = earlier->second;
      auto same = std::find_if(expanded.begin(), expanded.end(),
                               [&](const auto &pair) { return pair.first == (*targets)[i]; });
      if (same != expanded.end())
        same->second = from;
      else
        expanded.emplace_back((*targets)[i], from);
    }
  }
  return expanded;
}

// Tying assigns the source Parameter to the target's attribute (`_tie_embedding_weights`,
// `tie_weights`): the target is then the source tensor, its shape included, even where a
// configuration's defaults gave the two different shapes.
void tie_to(TreeTensor &target, const TreeTensor &source) {
  std::string name = target.name;
  target = source;
  target.name = name;
}

// The sub-model a model class's own `tie_weights` hands the tying to: its body (a docstring
// aside) is `return self.X.tie_weights()` or `self.X.tie_weights()`, X a PreTrainedModel child.
// Null when the class keeps PreTrainedModel's or does anything else.
ModuleNode *tie_weights_delegate(Evaluator &evaluator, const simulation::ClassRef &cls,
                                 ModuleNode *node) {
  Value method = evaluator.class_attribute(cls, "tie_weights");
  if (!method.is(Kind::Function) || !method.function)
    return nullptr;
  std::vector<const Stmt *> body;
  for (const Stmt *stmt : method.function->body)
    if (!(stmt->kind == StmtKind::Expr && stmt->value && stmt->value->kind == ExprKind::String))
      body.push_back(stmt);
  if (body.size() != 1 || (body[0]->kind != StmtKind::Return && body[0]->kind != StmtKind::Expr) ||
      !body[0]->value)
    return nullptr;
  const Expr *call = body[0]->value;
  if (call->kind != ExprKind::Call || call->operands.size() != 1 || !call->keywords.empty())
    return nullptr;
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Attribute || callee->text != "tie_weights" ||
      callee->operands.empty())
    return nullptr;
  const Expr *owner = callee->operands[0];
  if (owner->kind != ExprKind::Attribute || owner->operands.empty() ||
      owner->operands[0]->kind != ExprKind::Name || owner->operands[0]->text != "self")
    return nullptr;
  ModuleNode *child = node->child(std::string(owner->text));
  return child && child->cls && child->cls->is_pretrained_model ? child : nullptr;
}

} // namespace

ModuleTree build_module_tree(const Package &package, const ModuleClass &root,
                             const ModelConfig &config, const std::string &dtype,
                             const std::vector<const SyntaxFile *> &config_files,
                             const AutoModelClasses *auto_classes) {
  ModuleTree tree;
  std::string canonical;
  if (!dtype.empty() && dtype != "auto") {
    tree.dtype_bytes = dtype_bytes_from_name(dtype, &canonical);
    tree.dtype_name = canonical;
    tree.dtype_source = "--dtype";
  } else if (config.values.contains("torch_dtype") && config.values["torch_dtype"].is_string() &&
             dtype_bytes_from_name(config.values["torch_dtype"].get<std::string>(), &canonical)) {
    tree.dtype_bytes =
        dtype_bytes_from_name(config.values["torch_dtype"].get<std::string>(), &canonical);
    tree.dtype_name = canonical;
    tree.dtype_source = "torch_dtype of the configuration";
  } else {
    tree.dtype_bytes = 2;
    tree.dtype_name = "bfloat16";
    tree.dtype_source = "default (no torch_dtype in the configuration)";
  }
  Evaluator evaluator(package, {}, &tree, nullptr);
  evaluator.add_files(config_files);
  evaluator.set_auto_classes(auto_classes);
  auto cls = evaluator.find_class(root.name);
  if (!cls)
    return tree;
  Value config_value = from_json(config.values, true);
  if (config_value.is(Kind::Object)) {
    // Attribute aliases already resolved into values; the object still answers getattr, with
    // its class's members too (`attention_bias = False` in a @strict class's body, methods).
    config_value.object->class_name = "config";
    if (std::optional<simulation::ClassRef> config_class = evaluator.find_class(config.class_name);
        config_class && !config.class_name.empty())
      config_value.object->class_def = config_class->def;
  }
  if (config.init_keywords) {
    std::vector<std::pair<std::string, Value>> keywords;
    for (const auto &[key, value] : config.values.items())
      keywords.emplace_back(key, from_json(value, false));
    tree.root = evaluator.instantiate_root_with_keywords(*cls, std::move(keywords));
  } else {
    tree.root = evaluator.instantiate_root(*cls, config_value);
  }
  if (!tree.root)
    return tree;
  evaluator.keep_plain_values();
  // transformers' tie_weights(): output embeddings share the input embeddings' weight when
  // config.tie_word_embeddings (PretrainedConfig's default: True).
  bool tie = !config.values.contains("tie_word_embeddings") ||
             !config.values["tie_word_embeddings"].is_boolean() ||
             config.values["tie_word_embeddings"].get<bool>();
  if (config.values.contains("tie_word_embeddings") &&
      !config.values["tie_word_embeddings"].is_boolean())
    tree.unknowns.push_back({"", "tie_word_embeddings is not a bool: taken as true", ""});
  Value tied_keys = evaluator.module_attribute(tree.root, "_tied_weights_keys");
  if (!tied_keys.is(Kind::Dict))
    tied_keys = evaluator.class_attribute(*cls, "_tied_weights_keys");
  // transformers 5's sub-models (PreTrainedModel children) with a `_tied_weights_keys` dict.
  struct SubModelKeys {
    std::string path;
    ModuleNode *node;
    Value keys;
  };
  std::vector<SubModelKeys> sub_models;
  for (const auto &[path, node] : named_modules(tree)) {
    if (path.empty() || !node->cls || !node->cls->is_pretrained_model)
      continue;
    std::optional<simulation::ClassRef> sub = evaluator.node_class(node);
    // An instance's own `self._tied_weights_keys = {...}` (set in __init__) first.
    Value keys = evaluator.module_attribute(const_cast<ModuleNode *>(node), "_tied_weights_keys");
    if (!keys.is(Kind::Dict))
      keys = sub ? evaluator.class_attribute(*sub, "_tied_weights_keys") : Value::none();
    if (keys.is(Kind::Dict))
      sub_models.push_back({path, const_cast<ModuleNode *>(node), keys});
  }
  bool dict_keys = tied_keys.is(Kind::Dict) || !sub_models.empty();
  if (dict_keys) {
    // transformers 5: `_tied_weights_keys = {target: source}` gives each target parameter its
    // source's storage when the model's own config.tie_word_embeddings is true
    // (get_expanded_tied_weights_keys checks `getattr(self.config, "tie_word_embeddings",
    // False)`; a 5.x configuration does not default it to true). post_init adds every
    // PreTrainedModel child's keys under its name, each judged by that child's configuration
    // (a BLIP-2's OPT language model ties its head by text_config while Blip2Config does not
    // tie), each sub-model's own first. Patterns are expanded as transformers does
    // (expanded_tied_keys), by a matcher whose work is bounded.
    bool root_ties = config.values.contains("tie_word_embeddings") &&
                     (!config.values["tie_word_embeddings"].is_boolean() ||
                      config.values["tie_word_embeddings"].get<bool>());
    auto tie_keys = [&](ModuleNode *owner, const std::string &prefix, const Value &keys,
                        bool ties) {
      if (!ties)
        return;
      for (const auto &[target_name, source_name] :
           expanded_tied_keys(owner, keys, prefix, tree.unknowns)) {
        TreeTensor *target = tensor_at(owner, target_name);
        TreeTensor *source = tensor_at(owner, source_name);
        if (target && source)
          tie_to(*target, *source);
        else
          tree.unknowns.push_back({prefix,
                                   "_tied_weights_keys: `" + target_name + "` -> `" + source_name +
                                       "` names no parameter; not tied",
                                   ""});
      }
    };
    for (const SubModelKeys &sub_model : sub_models) {
      ModuleNode *node = sub_model.node;
      Value sub_config = evaluator.module_attribute(node, "config");
      bool ties = root_ties;
      if (sub_config.is(Kind::Object)) {
        Value tie_value = evaluator.attribute(sub_config, "tie_word_embeddings");
        ties = tie_value.is(Kind::Bool) || tie_value.is(Kind::Int) ? tie_value.integer != 0
                                                                   : !tie_value.is(Kind::Unknown);
      }
      tie_keys(node, sub_model.path, sub_model.keys, ties);
    }
    if (tied_keys.is(Kind::Dict))
      tie_keys(tree.root, "", tied_keys, root_ties);
  } else {
    // transformers 4's tie_weights(): the output embeddings share the input embeddings' weight
    // when the model's config.tie_word_embeddings. A class that defines its own tie_weights
    // replaces it: `return self.language_model.tie_weights()` (LLaVA, PaliGemma) ties that
    // sub-model by its own configuration instead (its text_config may not tie).
    ModuleNode *model = tree.root;
    std::optional<simulation::ClassRef> model_class = *cls;
    bool ties = tie;
    for (int depth = 0; depth < 8 && model_class; ++depth) {
      ModuleNode *delegate = tie_weights_delegate(evaluator, *model_class, model);
      if (!delegate)
        break;
      model = delegate;
      model_class = evaluator.node_class(model);
      Value tie_value =
          evaluator.attribute(evaluator.module_attribute(model, "config"), "tie_word_embeddings");
      ties = !tie_value.is(Kind::Bool) || tie_value.integer != 0;
    }
    if (ties && model_class) {
      auto output = evaluator.call_module_method(model, "get_output_embeddings");
      std::optional<Value> input = evaluator.call_module_method(model, "get_input_embeddings");
      if (!input || !input->is(Kind::Module)) {
        Value prefix = evaluator.class_attribute(*model_class, "base_model_prefix");
        if (prefix.is(Kind::Str))
          if (ModuleNode *base = model->child(prefix.text))
            input = evaluator.call_module_method(base, "get_input_embeddings");
      }
      if (output && output->is(Kind::Module) && input && input->is(Kind::Module) &&
          output->module != input->module) {
        TreeTensor *in_weight = nullptr;
        for (TreeTensor &t : input->module->parameters)
          if (t.name == "weight")
            in_weight = &t;
        for (TreeTensor &t : output->module->parameters)
          if (t.name == "weight" && in_weight)
            tie_to(t, *in_weight);
      }
    }
  }
  Value keep_fp32 = evaluator.module_attribute(tree.root, "_keep_in_fp32_modules");
  if (!keep_fp32.is(Kind::List))
    keep_fp32 = evaluator.class_attribute(*cls, "_keep_in_fp32_modules");
  if (keep_fp32.is(Kind::List) && keep_fp32.list)
    for (const Value &fragment : *keep_fp32.list)
      if (fragment.is(Kind::Str))
        tree.keep_in_fp32_modules.push_back(fragment.text);
  // Tied groups by storage, names sorted (find_tied_parameters).
  std::map<int, std::vector<std::string>> by_storage;
  for (const NamedTensor &t : named_tensors(tree, false))
    if (!t.tensor->is_buffer)
      by_storage[t.tensor->storage].push_back(t.name);
  for (auto &[storage, names] : by_storage)
    if (names.size() > 1) {
      std::sort(names.begin(), names.end());
      tree.tied_parameters.push_back(names);
    }
  // A tensor whose size could not be computed (a dimension unknown, negative or over the element
  // cap, as from an absurd configuration) counts 0 bytes: never silently.
  size_t unsized = 0;
  std::string first_unsized;
  for (const NamedTensor &t : named_tensors(tree, false))
    if (!t.tensor->numel && ++unsized == 1)
      first_unsized = t.name;
  if (unsized)
    tree.unknowns.push_back({"",
                             std::to_string(unsized) + " parameter(s) and buffer(s) of no known " +
                                 "size (a dimension unknown, negative or too large), `" +
                                 first_unsized + "` first",
                             ""});
  return tree;
}

std::vector<std::pair<std::string, const ModuleNode *>> named_modules(const ModuleTree &tree) {
  std::vector<std::pair<std::string, const ModuleNode *>> out;
  if (!tree.root)
    return out;
  std::unordered_set<const ModuleNode *> seen;
  std::function<void(const std::string &, const ModuleNode *)> walk = [&](const std::string &path,
                                                                          const ModuleNode *node) {
    if (!seen.insert(node).second) // a module registered twice is listed once (torch)
      return;
    out.emplace_back(path, node);
    for (const auto &[name, child] : node->children)
      walk(path.empty() ? name : path + "." + name, child);
  };
  walk("", tree.root);
  return out;
}

std::vector<NamedTensor> named_tensors(const ModuleTree &tree, bool persistent_only) {
  std::vector<NamedTensor> out;
  auto modules = named_modules(tree);
  for (bool buffers : {false, true})
    for (const auto &[path, node] : modules)
      for (const TreeTensor &t : buffers ? node->buffers : node->parameters) {
        if (persistent_only && t.is_buffer && !t.persistent)
          continue;
        out.push_back({path.empty() ? t.name : path + "." + t.name, &t, node});
      }
  return out;
}

} // namespace devlint
