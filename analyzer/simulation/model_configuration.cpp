// A model's configuration (config.json evaluated by its configuration class, or the class's
// defaults), the class from_pretrained would build, and dtype names.
#include "simulation/evaluator.h"

#include <algorithm>
#include <cctype>

namespace devlint {

using simulation::ClassRef;
using simulation::Evaluator;
using simulation::from_json;
using simulation::Kind;
using simulation::leaf_name;
using simulation::to_json;
using simulation::Value;

namespace {

std::vector<const SyntaxFile *> all_files(const Package &package,
                                          const std::vector<const SyntaxFile *> &extra) {
  std::vector<const SyntaxFile *> files = extra;
  files.insert(files.end(), package.files.begin(), package.files.end());
  return files;
}

bool is_config_class(const ClassDef *c,
                     const std::unordered_map<std::string, const ClassDef *> &by_name,
                     int guard = 0) {
  if (guard > 16)
    return false;
  for (const Expr *b : c->bases) {
    std::string leaf(leaf_name(dotted_name(b)));
    if (leaf == "PretrainedConfig" || leaf == "PreTrainedConfig")
      return true;
    auto it = by_name.find(leaf);
    if (it != by_name.end() && it->second != c && is_config_class(it->second, by_name, guard + 1))
      return true;
  }
  return false;
}

bool is_identifier(std::string_view text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

} // namespace

// The order of PreTrainedModel.__init_subclass__ (modeling_utils.py, transformers 5.17).
std::string declared_config_class(const ModuleClass &cls, int depth) {
  std::string annotated;
  for (const Stmt *st : cls.def->body) {
    if (st->kind != StmtKind::Assign || st->targets.empty() ||
        st->targets[0]->kind != ExprKind::Name)
      continue;
    if (st->targets[0]->text == "config_class" && st->value && st->value->kind == ExprKind::Name)
      return std::string(st->value->text);
    if (st->targets[0]->text == "config" && !st->value && annotated.empty() &&
        is_identifier(st->annotation))
      annotated = std::string(st->annotation);
  }
  if (!annotated.empty())
    return annotated;
  for (const ModuleClass *base : cls.bases)
    if (depth < 16)
      if (std::string name = declared_config_class(*base, depth + 1); !name.empty())
        return name;
  return "";
}

int dtype_bytes_from_name(const std::string &raw, std::string *canonical) {
  std::string name = raw;
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  struct Entry {
    const char *alias;
    const char *canonical;
    int bytes;
  };
  static const Entry entries[] = {{"bf16", "bfloat16", 2},
                                  {"bfloat16", "bfloat16", 2},
                                  {"fp16", "float16", 2},
                                  {"float16", "float16", 2},
                                  {"half", "float16", 2},
                                  {"fp32", "float32", 4},
                                  {"float32", "float32", 4},
                                  {"float", "float32", 4},
                                  {"fp64", "float64", 8},
                                  {"float64", "float64", 8},
                                  {"int8", "int8", 1},
                                  {"fp8", "float8_e4m3fn", 1},
                                  {"float8_e4m3fn", "float8_e4m3fn", 1}};
  for (const Entry &e : entries)
    if (name == e.alias) {
      if (canonical)
        *canonical = e.canonical;
      return e.bytes;
    }
  return 0;
}

ModelConfig build_model_config(const Package &package,
                               const std::vector<const SyntaxFile *> &config_files,
                               const std::string &config_class, const nlohmann::json *json,
                               const AutoModelClasses *auto_classes) {
  ModelConfig config;
  std::vector<const SyntaxFile *> files = all_files(package, config_files);
  std::unordered_map<std::string, const ClassDef *> by_name;
  std::unordered_map<std::string, const SyntaxFile *> file_of;
  for (const SyntaxFile *f : files)
    for (const ClassDef *c : f->classes) {
      by_name.emplace(std::string(c->name), c);
      file_of.emplace(std::string(c->name), f);
    }
  std::string chosen = config_class;
  if (chosen.empty()) {
    // The first model's `config_class = XConfig` or `config: XConfig` (transformers 5).
    for (const auto &cls : package.classes) {
      std::string declared = declared_config_class(*cls);
      if (!declared.empty() && by_name.count(declared)) {
        chosen = declared;
        break;
      }
    }
  }
  if (chosen.empty()) {
    std::vector<std::string> candidates;
    for (const auto &[name, c] : by_name)
      if (is_config_class(c, by_name))
        candidates.push_back(name);
    if (candidates.size() == 1)
      chosen = candidates[0];
  }
  Evaluator evaluator(package, config_files, nullptr, &config.unknowns);
  evaluator.set_auto_classes(auto_classes);
  if (!chosen.empty() && by_name.count(chosen)) {
    Value kwargs = json ? from_json(*json, false) : Value::dict_of({});
    Value object = evaluator.build_config(ClassRef{by_name[chosen], file_of[chosen]}, kwargs);
    if (object.is(Kind::Object)) {
      // Keys the class does not consume still become attributes (PretrainedConfig's kwargs).
      if (json)
        for (const auto &[k, v] : json->items())
          if (!object.object->attrs.count(k))
            object.object->attrs[k] = from_json(v, false);
      add_pretrained_config_defaults(object.object->attrs,
                                     Evaluator::is_dataclass_config(by_name[chosen]));
      // The model reads them as attributes of the configuration it is given.
      evaluator.keep_configuration_attributes(object);
      bool complete = true;
      config.values = to_json(object, &complete);
      for (const auto &[k, v] : object.object->attrs)
        if (v.is(Kind::Unknown))
          config.unknowns.push_back("config." + k + ": " + v.text);
      config.present = true;
      config.class_name = chosen;
      config.source = json ? "config.json read by " + chosen : "defaults of " + chosen;
      return config;
    }
  }
  if (json) {
    config.values = *json;
    std::map<std::string, Value> defaults;
    add_pretrained_config_defaults(defaults);
    for (const auto &[k, v] : defaults)
      if (!config.values.contains(k))
        config.values[k] = to_json(v, nullptr);
    config.present = true;
    config.source = "config.json";
  }
  return config;
}

std::optional<std::vector<std::string>> registered_init_parameters(const ModuleClass &root) {
  const FunctionDef *init = root.find_method("__init__");
  if (!init || std::none_of(init->decorators.begin(), init->decorators.end(), [](const Expr *d) {
        return leaf_name(dotted_name(d)) == "register_to_config";
      }))
    return std::nullopt;
  std::vector<std::string> names;
  for (size_t i = 1; i < init->parameters.size(); ++i)
    if (!init->parameters[i].variadic && init->parameters[i].name.rfind('_', 0) != 0)
      names.emplace_back(init->parameters[i].name);
  return names;
}

const ModuleClass *choose_root_class(const Package &package, const ModelConfig &config,
                                     const std::string &requested,
                                     const std::vector<const SyntaxFile *> &library_files) {
  if (!requested.empty())
    return package.find_class(requested);
  // trust_remote_code models name their classes in auto_map ("modeling_chatglm.ChatGLMFor...").
  if (config.values.contains("auto_map") && config.values["auto_map"].is_object())
    for (const char *key : {"AutoModelForCausalLM", "AutoModelForSeq2SeqLM", "AutoModel"})
      if (config.values["auto_map"].contains(key) && config.values["auto_map"][key].is_string()) {
        std::string name = config.values["auto_map"][key].get<std::string>();
        if (const ModuleClass *c = package.find_class(std::string(leaf_name(name))))
          return c;
      }
  if (config.values.contains("architectures") && config.values["architectures"].is_array())
    for (const auto &a : config.values["architectures"])
      if (a.is_string())
        if (const ModuleClass *c = package.find_class(a.get<std::string>()))
          return c;
  std::unordered_set<std::string> used_as_child;
  for (const auto &cls : package.classes)
    for (const ChildDecl &child : cls->children)
      used_as_child.insert(child.class_name);
  // A directory may hold the TensorFlow and Flax ports beside the PyTorch model.
  auto imports_torch = [](const SyntaxFile *file) {
    for (const ImportedName &imp : file->imports)
      if (imp.module == "torch" || starts_with(imp.module, "torch."))
        return true;
    return false;
  };
  const ModuleClass *best = nullptr;
  int best_rank = -1;
  for (const auto &cls : package.classes) {
    if (!cls->is_module || !cls->find_method("__init__") ||
        std::find(library_files.begin(), library_files.end(), cls->file) != library_files.end())
      continue;
    std::string name(cls->name);
    int rank = imports_torch(cls->file) ? 10 : 0;
    int kind = 0;
    if (cls->is_pretrained_model)
      kind = 1;
    if (cls->is_pretrained_model && !used_as_child.count(name))
      kind = 2;
    if (name.find("For") != std::string::npos && cls->is_pretrained_model)
      kind = 3;
    if (name.find("ForConditionalGeneration") != std::string::npos && cls->is_pretrained_model)
      kind = 4;
    if (name.find("ForCausalLM") != std::string::npos && cls->is_pretrained_model)
      kind = 5;
    rank += kind;
    if (rank > best_rank) {
      best = cls.get();
      best_rank = rank;
    }
  }
  return best;
}

} // namespace devlint
