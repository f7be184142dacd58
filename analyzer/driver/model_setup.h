// One model directory made ready for placement questions: the driver reads its files (the code,
// configuration_*.py, config.json) and lowers them; the simulation (simulation/simulated_model.h)
// builds the configuration, the class from_pretrained would build, its module tree and the
// no-split classes from them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnostics/finding.h"
#include "driver/model_setup_siblings.h"
#include "driver/model_setup_version.h"
#include "simulation/simulated_model.h"

namespace devlint {

struct ModelSetupOptions {
  std::string model_config; // --model-config: a config.json (empty: MODEL_DIR/config.json)
  std::string model_class;  // --model-class (empty: choose_root_class)
  std::string dtype;        // --dtype (empty: torch_dtype of the config, else bf16)
  std::vector<std::string> extra_no_split_modules;
  // Keyword arguments `from_pretrained(..., key=value)` hands the configuration class, over
  // config.json's values (an object; empty: none): the ranking builds a model with a setting
  // a line needs (placement_rank.cpp).
  nlohmann::json config_keywords = nlohmann::json::object();
  // Where base classes imported from outside the package are read (driver/search_paths.h), as
  // `devlint check` finds them.
  std::vector<std::string> search_paths;
  bool search_python_environment = false;
};

// The files a model's configuration is read from: configuration_*.py of `directory` (sorted) and
// config.json (`model_config` when given, else DIRECTORY/config.json, which may not exist). The
// result cache keys a check's results by the same files.
struct ModelInputPaths {
  std::vector<std::string> configuration_files;
  std::string config_json;
};
ModelInputPaths model_input_paths(const std::string &directory, const std::string &model_config);
// The other files of its source tree a model of `directory` is built from, which the placement
// ranking reads: inside transformers' own tree, the packages its configuration names and the
// tree's helper modules; elsewhere, the files its __init__s import relatively from outside the
// directory (model_setup_imports.h). The result cache keys a check's results by them too.
std::vector<std::string> source_tree_inputs(const std::string &directory);
// Whether a model of `package` (in `directory`) builds from such files: then load_model_setup
// reads what model_setup_for_package, which knows the package alone, cannot.
bool builds_from_source_tree(const Package &package, const std::string &directory);

// The simulated model with the files it was built from (the simulation refers to them).
struct ModelSetup : SimulatedModel {
  // Before the package: the package refers to what it resolved.
  std::unique_ptr<ExternalClassResolver> external_classes;
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  std::unique_ptr<Package> package;
  // In transformers' own tree: the packages of the models its sub-configurations name, and the
  // modeling files read from them (never the model from_pretrained builds); elsewhere, the files
  // of the source tree the package imports relatively (source_tree_inputs).
  SiblingModels siblings;
  // The transformers release the model is loaded with (load_model_setup: the one installed on
  // the search paths, else the newest devlint knows).
  TransformersVersion transformers;
  std::vector<const SyntaxFile *> library_files;
  std::vector<const SyntaxFile *> library_config_files; // the siblings' configuration files
  std::vector<Diagnostic> diagnostics; // files not read (warnings: the setup goes on without them)
  // config.json (or --model-config) that could not be read or parsed; `error` says so too.
  std::optional<Diagnostic> unusable_config;
};

// `directory`: the model package. Files are read with read_source_file's checks.
std::unique_ptr<ModelSetup> load_model_setup(const std::string &directory,
                                             const ModelSetupOptions &options);

// Another model of what load_model_setup read into `read` (which must outlive the result): its
// files and package are shared, not read again.
std::unique_ptr<ModelSetup> model_setup_like(const ModelSetup &read, const std::string &directory,
                                             const ModelSetupOptions &options);

// The same for files already read (devlint check's packages): `config_directory` is where
// config.json and configuration_*.py are looked for.
std::unique_ptr<ModelSetup> model_setup_for_package(const Package &package,
                                                    const std::string &config_directory,
                                                    const ModelSetupOptions &options);

// --device-map as JSON: the file `spec` names when it exists, else `spec` itself as JSON text;
// `origin` says which (the path, or "--device-map"). False, with `error`, for a file that is not
// a regular file or is over the size cap, for JSON that does not parse or is nested too deep, and
// for anything but an object.
bool read_device_map_json(const std::string &spec, nlohmann::json &map, std::string &origin,
                          std::string &error);

} // namespace devlint
