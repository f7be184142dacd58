#include "driver/model_setup.h"

#include <algorithm>
#include <filesystem>

#include "driver/check_run.h"
#include "driver/search_paths.h"
#include "driver/source_reading.h"
#include "frontend/python/python_frontend.h"
#include "model/file_input.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// config.json, which must hold an object; `error` says why not (the caller names the file).
bool read_json(const std::string &path, nlohmann::json &out, std::string &error) {
  if (!read_json_file(path, out, error))
    return false;
  if (!out.is_object()) {
    error = "not a JSON object";
    return false;
  }
  return true;
}

void add_unique(std::vector<std::string> &v, const std::string &s) {
  if (std::find(v.begin(), v.end(), s) == v.end())
    v.push_back(s);
}

// Reads configuration_*.py files of `directory` that are not already in `setup`.
void read_config_files(ModelSetup &setup, const std::string &directory,
                       std::vector<const SyntaxFile *> &config_files) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto &entry : fs::directory_iterator(directory, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("configuration_", 0) == 0 && entry.path().extension() == ".py")
      found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  for (const fs::path &p : found) {
    Diagnostic d;
    auto source = read_source_file(p.string(), kMaxInputBytes, d);
    if (!source) { // sizes then come from config.json alone: say why the class was not read
      d.severity = Severity::Warning;
      setup.diagnostics.push_back(d);
      continue;
    }
    setup.sources.push_back(std::move(source));
    setup.syntax.push_back(lower_python(*setup.sources.back()));
    config_files.push_back(setup.syntax.back().get());
  }
}

// `config_class = XConfig` of the class or its nearest package base that says it.
std::string config_class_of(const ModuleClass &cls, int depth = 0) {
  for (const Stmt *st : cls.def->body)
    if (st->kind == StmtKind::Assign && st->value && !st->targets.empty() &&
        st->targets[0]->kind == ExprKind::Name && st->targets[0]->text == "config_class" &&
        st->value->kind == ExprKind::Name)
      return std::string(st->value->text);
  for (const ModuleClass *base : cls.bases)
    if (depth < 16)
      if (std::string name = config_class_of(*base, depth + 1); !name.empty())
        return name;
  return "";
}

// Every PreTrainedModel class of the package that from_pretrained could build, in file order.
std::vector<std::string> model_classes(const Package &package) {
  std::vector<std::string> names;
  for (const auto &cls : package.classes)
    if (cls->is_module && cls->is_pretrained_model && cls->find_method("__init__"))
      add_unique(names, std::string(cls->name));
  return names;
}

bool json_names(const nlohmann::json &values, const char *key, const std::string &name) {
  if (!values.contains(key))
    return false;
  const nlohmann::json &v = values[key];
  auto matches = [&](const nlohmann::json &item) {
    if (!item.is_string())
      return false;
    std::string text = item.get<std::string>();
    return text == name ||
           (text.size() > name.size() &&
            text.compare(text.size() - name.size() - 1, std::string::npos, "." + name) == 0);
  };
  if (v.is_array())
    return std::any_of(v.begin(), v.end(), matches);
  if (v.is_object())
    return std::any_of(v.begin(), v.end(), matches);
  return false;
}

// Why choose_root_class picked `root` (its order: --model-class, auto_map, architectures, names).
std::string root_reason(const ModelConfig &config, const ModuleClass &root,
                        const ModelSetupOptions &options) {
  std::string name(root.name);
  if (!options.model_class.empty())
    return "--model-class";
  if (json_names(config.values, "auto_map", name))
    return "the config's auto_map";
  if (json_names(config.values, "architectures", name))
    return "the config's architectures";
  return "no config names one: ...ForCausalLM first, then ...ForConditionalGeneration, then "
         "other ...For... PreTrainedModel classes";
}

void finish(ModelSetup &setup, const Package &package, const std::string &directory,
            const ModelSetupOptions &options, std::vector<const SyntaxFile *> config_files) {
  read_config_files(setup, directory, config_files);
  nlohmann::json json;
  std::string json_path = options.model_config.empty()
                              ? (fs::path(directory) / "config.json").string()
                              : options.model_config;
  bool have_json = false;
  std::error_code ec;
  if (!options.model_config.empty() || fs::exists(json_path, ec)) {
    std::string error;
    if (!read_json(json_path, json, error)) {
      setup.error = "`" + json_path + "`: " + error;
      setup.unusable_config =
          Diagnostic{Severity::Warning, display_path(json_path), 0, 0, "not used: " + error};
      return;
    }
    have_json = true;
  }
  setup.config = build_model_config(package, config_files, "", have_json ? &json : nullptr);
  if (have_json)
    setup.config.source =
        json_path + (setup.config.source == "config.json" ? "" : " (" + setup.config.source + ")");
  setup.root = choose_root_class(package, setup.config, options.model_class);
  std::vector<std::string> candidates = model_classes(package);
  if (!setup.root) {
    std::string listed;
    for (const std::string &c : candidates)
      listed += (listed.empty() ? "" : ", ") + c;
    setup.error = options.model_class.empty()
                      ? "no nn.Module class with an __init__ in the package"
                      : "no class `" + options.model_class + "` in the package" +
                            (listed.empty() ? "" : " (model classes: " + listed + ")");
    return;
  }
  setup.root_reason = root_reason(setup.config, *setup.root, options);
  for (const std::string &c : candidates)
    if (c != setup.root->name)
      setup.other_model_classes.push_back(c);
  // A directory with several models (data2vec's text, audio and vision) has several
  // configuration classes: the one the root names is what from_pretrained builds.
  std::string wanted = config_class_of(*setup.root);
  if (!wanted.empty() && setup.config.present && wanted != setup.config.class_name) {
    ModelConfig own =
        build_model_config(package, config_files, wanted, have_json ? &json : nullptr);
    if (own.present && own.class_name == wanted) {
      if (have_json)
        own.source = json_path + (own.source == "config.json" ? "" : " (" + own.source + ")");
      setup.config = std::move(own);
    }
  }
  if (!options.dtype.empty() && options.dtype != "auto" && !dtype_bytes_from_name(options.dtype)) {
    setup.error = "unknown dtype `" + options.dtype + "` (bf16, fp16, fp32, int8, fp8)";
    return;
  }
  setup.tree = build_module_tree(package, *setup.root, setup.config, options.dtype);
  for (const std::string &u : setup.config.unknowns)
    setup.tree.unknowns.push_back({"", "configuration: " + u, ""});
  if (!setup.config.present)
    setup.tree.unknowns.push_back(
        {"", "no configuration: no config.json, and no PretrainedConfig subclass found", ""});
  if (setup.root->scope) {
    setup.no_split_modules = setup.root->scope->no_split_modules;
    setup.supports_string_maps = !setup.root->scope->refuses_string_maps;
  }
  for (const std::string &c : options.extra_no_split_modules)
    add_unique(setup.no_split_modules, c);
}

} // namespace

std::unique_ptr<ModelSetup> load_model_setup(const std::string &directory,
                                             const ModelSetupOptions &options) {
  auto setup = std::make_unique<ModelSetup>();
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    setup->error = "`" + directory + "` is not a directory";
    return setup;
  }
  std::vector<fs::path> paths;
  for (const auto &entry : fs::directory_iterator(directory, ec))
    if (entry.path().extension() == ".py" &&
        entry.path().filename().string().rfind("configuration_", 0) != 0)
      paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<const SyntaxFile *> files;
  for (const fs::path &p : paths) {
    Diagnostic d;
    auto source = read_source_file(p.string(), kMaxInputBytes, d);
    if (!source) {
      setup->diagnostics.push_back(d);
      continue;
    }
    setup->sources.push_back(std::move(source));
    setup->syntax.push_back(lower_python(*setup->sources.back()));
    files.push_back(setup->syntax.back().get());
  }
  if (files.empty()) {
    setup->error = "no Python files in `" + directory + "`";
    return setup;
  }
  PackageOverrides overrides;
  overrides.extra_no_split_modules = options.extra_no_split_modules;
  if (!options.search_paths.empty() || options.search_python_environment) {
    setup->external_classes = std::make_unique<SearchPathResolver>(
        options.search_paths, options.search_python_environment);
    overrides.external_classes = setup->external_classes.get();
  }
  setup->package = build_package(files, overrides);
  finish(*setup, *setup->package, directory, options, {});
  return setup;
}

bool read_device_map_json(const std::string &spec, nlohmann::json &map, std::string &origin,
                          std::string &error) {
  std::error_code ec;
  if (fs::exists(spec, ec)) {
    origin = spec;
    if (!read_json_file(spec, map, error)) {
      error = "--device-map `" + spec + "`: " + error;
      return false;
    }
  } else {
    origin = "--device-map";
    if (!parse_json_text(spec, map, error)) {
      error = "--device-map: not a JSON dict, a .json file or a .py file (" + error + ")";
      return false;
    }
  }
  if (!map.is_object()) {
    error = "--device-map: the map must be a JSON object of module path -> device";
    return false;
  }
  return true;
}

std::unique_ptr<ModelSetup> model_setup_for_package(const Package &package,
                                                    const std::string &config_directory,
                                                    const ModelSetupOptions &options) {
  auto setup = std::make_unique<ModelSetup>();
  finish(*setup, package, config_directory, options, {});
  return setup;
}

} // namespace devlint
