#include "driver/model_setup.h"

#include <algorithm>
#include <filesystem>

#include "driver/check_run.h"
#include "driver/model_setup_imports.h"
#include "driver/model_setup_siblings.h"
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

// Reads the configuration files `paths` lists that are not already in `setup`.
void read_config_files(ModelSetup &setup, const ModelInputPaths &paths,
                       std::vector<const SyntaxFile *> &config_files) {
  for (const std::string &path : paths.configuration_files) {
    Diagnostic d;
    auto source = read_source_file(path, kMaxInputBytes, d);
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

void finish(ModelSetup &setup, const Package &package, const std::string &directory,
            const ModelSetupOptions &options,
            const std::vector<const SyntaxFile *> &library_config_files = {}) {
  ModelInputPaths paths = model_input_paths(directory, options.model_config);
  std::vector<const SyntaxFile *> config_files;
  read_config_files(setup, paths, config_files);
  config_files.insert(config_files.end(), library_config_files.begin(), library_config_files.end());
  nlohmann::json json;
  bool have_json = false;
  std::error_code ec;
  if (!options.model_config.empty() || fs::exists(paths.config_json, ec)) {
    std::string error;
    if (!read_json(paths.config_json, json, error)) {
      setup.error = "`" + paths.config_json + "`: " + error;
      setup.unusable_config = Diagnostic{Severity::Warning, display_path(paths.config_json), 0, 0,
                                         "not used: " + error};
      return;
    }
    have_json = true;
  }
  if (options.config_keywords.is_object() && !options.config_keywords.empty()) {
    if (!have_json)
      json = nlohmann::json::object();
    for (const auto &[key, value] : options.config_keywords.items())
      json[key] = value;
    have_json = true;
  }
  ModelInputs inputs;
  inputs.configuration_files = std::move(config_files);
  inputs.config_json = have_json ? &json : nullptr;
  inputs.config_json_path = paths.config_json;
  inputs.library_files = setup.library_files;
  if (setup.siblings.in_transformers_tree)
    inputs.auto_classes = &setup.siblings.auto_classes;
  ModelRequest request{options.model_class, options.dtype, options.extra_no_split_modules};
  simulate_model(setup, package, inputs, request);
}

// transformers' own helper modules a model runs while it is built, read from the tree as
// library files when the package's text mentions their marker: the backbone helpers
// (`from ...backbone_utils import load_backbone`, BackboneMixin) and the rotary embeddings'
// initializers (`ROPE_INIT_FUNCTIONS[self.rope_type](config, device)` gives `inv_freq`).
constexpr const char *kTreeHelpers[][2] = {
    {"backbone_utils.py", "backbone_utils import"},
    {"modeling_rope_utils.py", "ROPE_INIT_FUNCTIONS"},
    // Time-series heads: DistributionOutput.get_parameter_projection builds their projection.
    {"time_series_utils.py", "time_series_utils import"},
};

// Reads `path` as a library file of `setup` (its classes build modules, none is the model); false
// when it cannot be read (what it defines is then listed as not built).
const SyntaxFile *read_library_file(ModelSetup &setup, const std::string &path) {
  Diagnostic d;
  auto source = read_source_file(path, kMaxInputBytes, d);
  if (!source)
    return nullptr;
  setup.sources.push_back(std::move(source));
  setup.syntax.push_back(lower_python(*setup.sources.back()));
  return setup.syntax.back().get();
}

// The modeling (PyTorch) and configuration files of a sibling package, sorted.
std::vector<fs::path> sibling_model_files(const std::string &sibling) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (fs::directory_iterator it(sibling, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool modeling = name.rfind("modeling_", 0) == 0 && name.rfind("modeling_tf_", 0) != 0 &&
                    name.rfind("modeling_flax_", 0) != 0;
    if (it->path().extension() == ".py" && (modeling || name.rfind("configuration_", 0) == 0))
      paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// TREE of TREE/models/<model> when that is transformers' own source tree (it has models/auto).
std::optional<fs::path> transformers_tree_of(const std::string &directory) {
  std::error_code ec;
  fs::path tree = fs::weakly_canonical(fs::path(directory.empty() ? "." : directory), ec)
                      .parent_path()
                      .parent_path();
  if (ec || !fs::is_directory(tree / "models" / "auto", ec))
    return std::nullopt;
  return tree;
}

// The text of the configuration_*.py files of `directory`, as model_setup reads them.
std::vector<std::string> configuration_texts(const std::string &directory) {
  std::vector<std::string> texts;
  for (const std::string &path : model_input_paths(directory, "").configuration_files) {
    std::string why;
    if (auto text = read_regular_file(path, kMaxInputBytes, why))
      texts.push_back(*text);
  }
  return texts;
}

// The text of the modeling_*.py files of `directory` (PyTorch ones; modular_*.py files import
// the models they were written from, which the model does not build).
std::vector<std::string> modeling_texts(const std::string &directory) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (fs::directory_iterator it(directory.empty() ? "." : directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("modeling_", 0) == 0 && name.rfind("modeling_tf_", 0) != 0 &&
        name.rfind("modeling_flax_", 0) != 0 && it->path().extension() == ".py")
      paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  for (const fs::path &path : paths) {
    std::string why;
    if (auto text = read_regular_file(path.string(), kMaxInputBytes, why))
      texts.push_back(*text);
  }
  return texts;
}

// Within transformers' own tree, the packages of the models the configuration names or the
// modeling files import: their
// modeling files become library files of the package, their configuration classes join the
// package's (model_setup_siblings.h). Returns the configuration files read.
std::vector<const SyntaxFile *> read_sibling_models(ModelSetup &setup,
                                                    const std::string &directory) {
  std::vector<std::string> texts = configuration_texts(directory);
  setup.siblings = find_sibling_models(directory, texts, modeling_texts(directory));
  std::optional<fs::path> tree = transformers_tree_of(directory);
  std::vector<const SyntaxFile *> config_files;
  // transformers' helper modules (kTreeHelpers), read as library files like the packages of the
  // sub-models the model builds.
  for (const auto &[file, marker] : kTreeHelpers) {
    auto mentions = [marker = std::string_view(marker)](std::string_view text) {
      return text.find(marker) != std::string_view::npos;
    };
    bool used = std::any_of(texts.begin(), texts.end(), mentions) ||
                std::any_of(setup.sources.begin(), setup.sources.end(),
                            [&](const auto &source) { return mentions(source->text); });
    if (!setup.siblings.in_transformers_tree || !tree || !used)
      continue;
    std::error_code ec;
    fs::path helpers = *tree / file;
    if (fs::is_regular_file(helpers, ec))
      if (const SyntaxFile *read = read_library_file(setup, helpers.string()))
        setup.library_files.push_back(read);
  }
  for (const std::string &sibling : setup.siblings.directories)
    for (const fs::path &p : sibling_model_files(sibling))
      if (const SyntaxFile *read = read_library_file(setup, p.string()))
        (p.filename().string().rfind("configuration_", 0) == 0 ? config_files : setup.library_files)
            .push_back(read);
  // Elsewhere, the files of the package's own source tree its __init__s import relatively
  // (diffusers' `from ..embeddings import ...`). transformers' own tree is read by the rules
  // above: its other helpers (PreTrainedModel, ACT2FN, Conv1D) are devlint's built-in summary.
  if (!tree)
    for (const std::string &path : relatively_imported_files(directory))
      if (const SyntaxFile *read = read_library_file(setup, path))
        setup.library_files.push_back(read);
  return config_files;
}

} // namespace

bool builds_from_source_tree(const Package &package, const std::string &directory) {
  if (!transformers_tree_of(directory))
    return !relatively_imported_files(directory).empty();
  for (const SyntaxFile *file : package.files)
    for (const auto &helper : kTreeHelpers)
      if (file->source && file->source->text.find(helper[1]) != std::string::npos)
        return true;
  return !find_sibling_models(directory, configuration_texts(directory), modeling_texts(directory))
              .directories.empty();
}

std::vector<std::string> source_tree_inputs(const std::string &directory) {
  std::vector<std::string> out;
  std::optional<fs::path> tree = transformers_tree_of(directory);
  if (!tree)
    return relatively_imported_files(directory);
  SiblingModels siblings =
      find_sibling_models(directory, configuration_texts(directory), modeling_texts(directory));
  if (!siblings.in_transformers_tree)
    return out;
  for (const std::string &sibling : siblings.directories)
    for (const fs::path &p : sibling_model_files(sibling))
      out.push_back(p.string());
  std::error_code ec;
  for (const auto &helper : kTreeHelpers)
    if (fs::is_regular_file(*tree / helper[0], ec))
      out.push_back((*tree / helper[0]).string());
  return out;
}

ModelInputPaths model_input_paths(const std::string &directory, const std::string &model_config) {
  ModelInputPaths paths;
  std::error_code ec;
  for (fs::directory_iterator it(directory.empty() ? "." : directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("configuration_", 0) == 0 && it->path().extension() == ".py")
      paths.configuration_files.push_back((fs::path(directory) / name).string());
  }
  std::sort(paths.configuration_files.begin(), paths.configuration_files.end());
  paths.config_json =
      model_config.empty() ? (fs::path(directory) / "config.json").string() : model_config;
  return paths;
}

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
  setup->library_config_files = read_sibling_models(*setup, directory);
  files.insert(files.end(), setup->library_files.begin(), setup->library_files.end());
  PackageOverrides overrides;
  overrides.extra_no_split_modules = options.extra_no_split_modules;
  if (!options.search_paths.empty() || options.search_python_environment) {
    setup->external_classes = std::make_unique<SearchPathResolver>(
        options.search_paths, options.search_python_environment);
    overrides.external_classes = setup->external_classes.get();
  }
  setup->transformers = release_for_code(
      installed_transformers_version(options.search_paths, options.search_python_environment),
      files);
  overrides.transformers_major = [major = setup->transformers.major] { return major; };
  setup->package = build_package(files, overrides);
  finish(*setup, *setup->package, directory, options, setup->library_config_files);
  return setup;
}

std::unique_ptr<ModelSetup> model_setup_like(const ModelSetup &read, const std::string &directory,
                                             const ModelSetupOptions &options) {
  auto setup = std::make_unique<ModelSetup>();
  if (!read.package) {
    setup->error = read.error;
    return setup;
  }
  setup->siblings = read.siblings;
  setup->transformers = read.transformers;
  setup->library_files = read.library_files;
  setup->library_config_files = read.library_config_files;
  finish(*setup, *read.package, directory, options, setup->library_config_files);
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
  finish(*setup, package, config_directory, options);
  return setup;
}

} // namespace devlint
