// `devlint devmap MODEL_DIR`: the device map accelerate would build for a model (device_map="auto"
// on N GPUs, or a given max_memory), from the source and the configuration alone; with
// `--device-map MAP`, checks a hand-written map instead (shared/seeds/001).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace devlint {

struct DevmapFlags {
  std::string model_dir;
  std::string model_config;
  std::string model_class;
  std::string dtype;
  int gpus = 2;
  std::string max_memory;
  std::string strategy = "balanced";
  std::string device_map;
  std::string output_format = "table";
  bool list_tensors = false;
  std::vector<std::string> no_split_modules;
  std::vector<std::string> search_paths;
  bool isolated = false; // no Python environment on the search paths
};

CLI::App *add_devmap_command(CLI::App &app, DevmapFlags &flags);

// Exit codes: 0 (a map, or a hand-written map without problems), 1 (problems in the map),
// 2 (bad input).
int run_devmap(const DevmapFlags &flags);

} // namespace devlint
