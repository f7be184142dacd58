#include "cli/devmap_command.h"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "driver/check_run.h"
#include "driver/model_setup.h"
#include "frontend/python/python_frontend.h"
#include "model/file_input.h"
#include "model/text.h"
#include "render/renderer.h"
#include "simulation/device_map_check.h"
#include "simulation/device_map_simulation.h"

namespace devlint {

namespace {

constexpr int kExitClean = 0;
constexpr int kExitProblems = 1;
constexpr int kExitError = 2;

nlohmann::json device_json(const DeviceName &d) {
  if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos)
    return std::stoi(d);
  return d;
}

void print_unknowns(const ModuleTree &tree, std::ostream &out) {
  if (tree.unknowns.empty())
    return;
  out << "\nNot evaluated (" << tree.unknowns.size()
      << "); sizes below count these as 0 bytes, so the split may differ:\n";
  size_t shown = 0;
  for (const TreeUnknown &u : tree.unknowns) {
    if (++shown > 20) {
      out << "  ... and " << tree.unknowns.size() - 20 << " more\n";
      break;
    }
    out << "  " << (u.location.empty() ? "" : u.location + ": ")
        << (u.module_path.empty() ? "" : "in `" + u.module_path + "`: ") << u.what << "\n";
  }
}

std::string device_label(const DeviceName &d) {
  if (d == "cpu" || d == "disk" || d == "meta" || d == "mps")
    return d;
  return "cuda:" + d;
}

// Which class the map is for and why, and the others --model-class may pick.
std::string model_class_line(const ModelSetup &setup) {
  std::string line =
      "model class: " + std::string(setup.root->name) + " (" + setup.root_reason + ")";
  if (!setup.other_model_classes.empty()) {
    line += "; other model classes:";
    for (size_t i = 0; i < setup.other_model_classes.size(); ++i)
      line += (i ? ", " : " ") + setup.other_model_classes[i];
    line += " (pick one with --model-class NAME)";
  }
  return line;
}

void print_table(const ModelSetup &setup, const SimulationRequest &request,
                 const SimulationResult &result, std::ostream &out) {
  auto sizes = compute_module_sizes(setup.tree);
  out << "model: " << setup.root->name << " (" << setup.root->file->source->display_path << ")\n"
      << model_class_line(setup) << "\n"
      << "configuration: " << (setup.config.present ? setup.config.source : "none") << "\n"
      << "dtype: " << setup.tree.dtype_name << " (" << setup.tree.dtype_source << ")\n"
      << "total size: "
      // What could not be evaluated counts 0 bytes: the total is then only a lower bound.
      << (setup.tree.unknowns.empty() ? "" : "at least ") << format_bytes(result.total_size)
      << (setup.tree.unknowns.empty() ? "" : " (parts not evaluated, listed below)") << "\n"
      << "no-split classes: ";
  for (size_t i = 0; i < setup.no_split_modules.size(); ++i)
    out << (i ? ", " : "") << setup.no_split_modules[i];
  out << (setup.no_split_modules.empty() ? "(none)" : "") << "\n"
      << "transformers: " << setup.transformers.version << " ("
      << printable(setup.transformers.source) << ")\n"
      << "placement: "
      << (request.transformers_major >= 5
              ? "transformers' integrations/accelerate.py"
              : "accelerate " + std::string(kSimulatedAccelerateVersion))
      << " "
      << (request.strategy == PlacementStrategy::Balanced
              ? "get_balanced_memory + infer_auto_device_map (device_map=\"auto\")"
              : "infer_auto_device_map (device_map=\"sequential\")")
      << "\nmax_memory:";
  for (const auto &[d, bytes] : result.budgets)
    out << " " << d << "=" << (bytes >= (int64_t{1} << 50) ? "unlimited" : format_bytes(bytes));
  out << "\n";
  if (!setup.supports_string_maps)
    out << "note: a PreTrainedModel of this model has no _no_split_modules, so from_pretrained "
           "refuses device_map=\"auto\"; this is the map accelerate's infer_auto_device_map "
           "builds (hand-written maps split it the same way)\n";
  for (const auto &group : setup.tree.tied_parameters) {
    out << "tied:";
    for (const std::string &n : group)
      out << " " << n;
    out << "\n";
  }
  print_unknowns(setup.tree, out);
  size_t width = 6;
  for (const auto &[k, d] : result.map.entries)
    width = std::max(width, k.size());
  out << "\n"
      << std::left << std::setw(static_cast<int>(width)) << "module"
      << "  " << std::right << std::setw(12) << "size"
      << "  device\n";
  for (const auto &[k, d] : result.map.entries) {
    auto it = sizes.find(k);
    out << std::left << std::setw(static_cast<int>(width)) << (k.empty() ? "(root)" : k) << "  "
        << std::right << std::setw(12) << format_bytes(it == sizes.end() ? 0 : it->second) << "  "
        << device_label(d) << "\n";
  }
  out << "\n";
  for (const auto &[d, bytes] : result.used)
    out << device_label(d) << ": " << format_bytes(bytes) << "\n";
  if (!result.offloaded.empty()) {
    out << "offloaded (does not fit the GPUs in max_memory):";
    for (const std::string &o : result.offloaded)
      out << " " << o;
    out << "\n";
  }
}

std::string dot_id(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

// The picture reads top to bottom, each device a box whose modules wrap in rows of
// kDotNodesPerRow (left to right, in map order): a model of 40 layers is a page, not a strip.
// Invisible edges between the first modules of consecutive rows keep the rows (and the device
// boxes) aligned on the left; the map's own edges that run from one row to the next do not
// position anything.
constexpr size_t kDotNodesPerRow = 4;

void print_dot(const ModelSetup &setup, const DeviceMap &map, std::ostream &out) {
  auto sizes = compute_module_sizes(setup.tree);
  out << "digraph device_map {\n  rankdir=TB;\n  newrank=true;\n"
      << "  node [shape=box, fontname=\"monospace\"];\n"
      << "  label="
      << dot_id(std::string(setup.root->name) + ", accelerate " + kSimulatedAccelerateVersion)
      << ";\n";
  std::vector<DeviceName> devices;
  for (const auto &[k, d] : map.entries)
    if (std::find(devices.begin(), devices.end(), d) == devices.end())
      devices.push_back(d);
  std::vector<std::vector<std::string>> rows; // every device's rows, in device order
  std::map<std::string, size_t> row_of;
  for (const DeviceName &d : devices) {
    out << "  subgraph " << dot_id("cluster_" + d) << " {\n    label=" << dot_id(device_label(d))
        << ";\n";
    size_t first_row = rows.size();
    for (const auto &[k, dev] : map.entries)
      if (dev == d) {
        auto it = sizes.find(k);
        // The label: the quoted name, dot's line break (`\n`), the size.
        std::string name = dot_id(k.empty() ? "(root)" : k);
        out << "    " << dot_id(k) << " [label=" << name.substr(0, name.size() - 1) << "\\n"
            << format_bytes(it == sizes.end() ? 0 : it->second) << "\"];\n";
        if (rows.size() == first_row || rows.back().size() == kDotNodesPerRow)
          rows.emplace_back();
        rows.back().push_back(k);
        row_of[k] = rows.size() - 1;
      }
    for (size_t r = first_row; r < rows.size(); ++r)
      if (rows[r].size() > 1) {
        out << "    { rank=same;";
        for (const std::string &k : rows[r])
          out << " " << dot_id(k);
        out << " }\n";
      }
    out << "  }\n";
  }
  for (size_t i = 1; i < map.entries.size(); ++i) {
    const auto &[from, from_device] = map.entries[i - 1];
    const auto &[to, to_device] = map.entries[i];
    std::vector<std::string> attributes;
    if (from_device != to_device)
      attributes = {"color=red", "penwidth=2"};
    if (row_of[from] != row_of[to])
      attributes.push_back("constraint=false");
    out << "  " << dot_id(from) << " -> " << dot_id(to);
    for (size_t a = 0; a < attributes.size(); ++a)
      out << (a ? ", " : " [") << attributes[a] << (a + 1 == attributes.size() ? "]" : "");
    out << ";\n";
  }
  for (size_t r = 1; r < rows.size(); ++r)
    out << "  " << dot_id(rows[r - 1].front()) << " -> " << dot_id(rows[r].front())
        << " [style=invis, weight=10];\n";
  out << "}\n";
}

// --device-map: a JSON dict (inline or a .json file), or a Python file (FILE.py[:FUNCTION]).
bool load_map(const std::string &spec, const ModelSetup &setup, int gpus, DeviceMap &map,
              std::vector<std::string> &unknowns, std::string &origin, std::string &error) {
  std::string path = spec, function;
  size_t colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find(".py:") != std::string::npos) {
    path = spec.substr(0, colon);
    function = spec.substr(colon + 1);
  }
  bool is_python = path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0;
  if (is_python) {
    Diagnostic d;
    auto source = read_source_file(path, kMaxInputBytes, d);
    if (!source) {
      error = "`" + path + "`: " + d.message;
      return false;
    }
    auto syntax = lower_python(*source);
    EvaluatedDeviceMap evaluated =
        evaluate_python_device_map(*setup.package, *syntax, setup.config, gpus, function);
    if (!evaluated.error.empty()) {
      error = evaluated.error;
      return false;
    }
    map.entries = evaluated.entries;
    unknowns = evaluated.unknowns;
    origin = path + ": " + evaluated.origin;
    return true;
  }
  nlohmann::json json;
  if (!read_device_map_json(spec, json, origin, error))
    return false;
  for (const auto &[k, v] : json.items()) {
    std::string device = normalize_device(v);
    if (device.empty()) {
      error = "--device-map: `" + k + "` has no device accelerate knows (" + v.dump() + ")";
      return false;
    }
    map.entries.emplace_back(k, device);
  }
  return true;
}

const char *problem_title(DeviceMapProblemKind kind) {
  switch (kind) {
  case DeviceMapProblemKind::MissingParameters:
    return "parameters without a device";
  case DeviceMapProblemKind::UnknownKey:
    return "unknown key";
  case DeviceMapProblemKind::CutsNoSplitModule:
    return "no-split module cut";
  case DeviceMapProblemKind::TiedWeightsSplit:
    return "tied weights split";
  }
  return "";
}

// The model's code checked under the map, as `devlint check --device-map MAP` does. Models that
// refuse string maps are split by such maps too, so their classes are checked as splittable.
CheckResult check_code_under_map(const DevmapFlags &flags) {
  CheckOptions options;
  options.placement.device_map = flags.device_map;
  options.placement.gpus = flags.gpus;
  options.placement.model_config = flags.model_config;
  options.placement.dtype = flags.dtype;
  options.overrides.hand_made_maps = true;
  options.overrides.extra_no_split_modules = flags.no_split_modules;
  options.search_paths = flags.search_paths;
  options.search_python_environment = !flags.isolated;
  return check_paths({flags.model_dir}, options);
}

int check_hand_written_map(const DevmapFlags &flags, const ModelSetup &setup) {
  DeviceMap map;
  std::vector<std::string> unknowns;
  std::string origin, error;
  if (!load_map(flags.device_map, setup, flags.gpus, map, unknowns, origin, error)) {
    std::cerr << "devlint: error: " << error << "\n";
    return kExitError;
  }
  auto problems = check_device_map(setup.tree, map, setup.no_split_modules);
  // Parameters without a device: from_pretrained raises before any forward runs.
  bool loads = std::none_of(problems.begin(), problems.end(), [](const DeviceMapProblem &p) {
    return p.kind == DeviceMapProblemKind::MissingParameters;
  });
  CheckResult code;
  if (loads)
    code = check_code_under_map(flags);
  for (const Diagnostic &d : code.diagnostics)
    std::cerr << (d.severity == Severity::Error ? "error: " : "warning: ") << printable(d.path)
              << ": " << printable(d.message) << "\n";
  RenderOptions render_options;
  if (flags.output_format == "json") {
    nlohmann::json out;
    out["map"] = nlohmann::json::object();
    for (const auto &[k, d] : map.entries)
      out["map"][k] = device_json(d);
    out["origin"] = origin;
    out["not_evaluated"] = unknowns;
    out["problems"] = nlohmann::json::array();
    for (const DeviceMapProblem &p : problems)
      out["problems"].push_back({{"kind", problem_title(p.kind)},
                                 {"key", p.key},
                                 {"suggestion", p.suggestion},
                                 {"names", p.names},
                                 {"message", p.message}});
    std::ostringstream findings;
    render(OutputFormat::Json, findings, code.findings, render_options);
    out["code_checked"] = loads;
    out["findings"] = nlohmann::json::parse(findings.str());
    std::cout << out.dump(2) << "\n";
  } else if (flags.output_format == "dot") {
    print_dot(setup, map, std::cout);
  } else {
    std::cout << "model: " << setup.root->name << "\n"
              << model_class_line(setup) << "\nmap: " << origin << " (" << map.entries.size()
              << " entries)\n";
    for (const std::string &u : unknowns)
      std::cout << "not evaluated: " << u << "\n";
    print_unknowns(setup.tree, std::cout);
    for (const DeviceMapProblem &p : problems) {
      std::cout << "\nerror: " << problem_title(p.kind) << ": " << p.message << "\n";
      if (p.kind == DeviceMapProblemKind::MissingParameters) {
        size_t shown = 0;
        for (const std::string &n : p.names) {
          if (++shown > 12) {
            std::cout << "  ... and " << p.names.size() - 12 << " more\n";
            break;
          }
          std::cout << "  " << n << "\n";
        }
      }
    }
    std::cout << "\n"
              << (problems.empty() ? "the map covers every parameter; no problems found"
                                   : std::to_string(problems.size()) + " problem(s)")
              << "\n";
    if (!loads) {
      std::cout << "code not checked under this map: from_pretrained stops at the parameters "
                   "without a device\n";
    } else {
      std::cout << "\ncode under this map: ";
      if (code.findings.empty())
        std::cout << "no site combines tensors on different devices\n";
      else {
        std::cout << code.findings.size() << " site(s) combine tensors on different devices\n";
        render(OutputFormat::Full, std::cout, code.findings, render_options);
      }
    }
  }
  bool clean = problems.empty() && unknowns.empty() && code.findings.empty() && !code.had_error;
  return clean ? kExitClean : kExitProblems;
}

} // namespace

CLI::App *add_devmap_command(CLI::App &app, DevmapFlags &flags) {
  auto *cmd = app.add_subcommand(
      "devmap", "Show the device map accelerate would build for a model, or check a map");
  cmd->add_option("model_dir", flags.model_dir, "The model's directory (modeling_*.py files)")
      ->required();
  cmd->add_option("--model-config", flags.model_config,
                  "The model's config.json (default: MODEL_DIR/config.json, else the defaults "
                  "of its configuration class)");
  cmd->add_option("--model-class", flags.model_class,
                  "The class from_pretrained builds (default: architectures[0] of the config, "
                  "else the ...ForCausalLM / ...ForConditionalGeneration class; the output says "
                  "which it picked and lists the others)");
  cmd->add_option("--dtype", flags.dtype,
                  "bf16, fp16, fp32, int8, fp8 (default: the config's torch_dtype, else bf16)");
  cmd->add_option("--gpus", flags.gpus, "Number of GPUs (default 2)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-memory", flags.max_memory,
                  "Memory per device, e.g. 0=20GiB,1=24GiB,cpu=64GiB (what does not fit is "
                  "offloaded, as accelerate does)");
  cmd->add_option("--strategy", flags.strategy, "balanced (device_map=\"auto\") or sequential")
      ->check(CLI::IsMember({"balanced", "sequential"}))
      ->capture_default_str();
  cmd->add_option("--device-map", flags.device_map,
                  "Check this map instead: a JSON dict, a .json file, or a .py file building "
                  "one (FILE.py or FILE.py:FUNCTION)");
  cmd->add_option("--output-format", flags.output_format, "table, json (hf_device_map), dot")
      ->check(CLI::IsMember({"table", "json", "dot"}))
      ->capture_default_str();
  cmd->add_flag("--tensors", flags.list_tensors,
                "List every parameter and buffer with its element count (table output)");
  cmd->add_option("--no-split-module", flags.no_split_modules,
                  "Treat this class as listed in _no_split_modules (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--search-path", flags.search_paths,
                  "Also look for imported base classes here, before the Python environment's "
                  "paths (repeatable; as `devlint check --search-path`)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--isolated", flags.isolated,
                "Do not ask the Python environment for its import paths");
  return cmd;
}

int run_devmap(const DevmapFlags &flags) {
  ModelSetupOptions options;
  options.model_config = flags.model_config;
  options.model_class = flags.model_class;
  options.dtype = flags.dtype;
  options.extra_no_split_modules = flags.no_split_modules;
  options.search_paths = flags.search_paths;
  options.search_python_environment = !flags.isolated;
  auto setup = load_model_setup(flags.model_dir, options);
  for (const Diagnostic &d : setup->diagnostics)
    std::cerr << "warning: " << printable(d.path) << ": " << printable(d.message) << "\n";
  if (!setup->error.empty()) {
    std::cerr << "devlint: error: " << setup->error << "\n";
    return kExitError;
  }
  // Machine-readable output keeps stdout for the map: the choice of class is said on stderr
  // when there was one to make.
  if (flags.output_format != "table" && flags.model_class.empty() &&
      !setup->other_model_classes.empty())
    std::cerr << "note: " << model_class_line(*setup) << "\n";
  if (!flags.device_map.empty())
    return check_hand_written_map(flags, *setup);

  SimulationRequest request;
  request.strategy =
      flags.strategy == "sequential" ? PlacementStrategy::Sequential : PlacementStrategy::Balanced;
  request.gpus = flags.gpus;
  request.no_split_module_classes = setup->no_split_modules;
  request.transformers_major = setup->transformers.major;
  if (!flags.max_memory.empty()) {
    try {
      request.max_memory = parse_max_memory(flags.max_memory);
    } catch (const std::invalid_argument &e) {
      std::cerr << "devlint: error: --max-memory: " << e.what() << "\n";
      return kExitError;
    }
  }
  SimulationResult result = simulate_device_map(setup->tree, request);
  if (flags.output_format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto &[k, d] : result.map.entries)
      out[k] = device_json(d);
    std::cout << out.dump(2) << "\n";
  } else if (flags.output_format == "dot") {
    print_dot(*setup, result.map, std::cout);
  } else {
    print_table(*setup, request, result, std::cout);
    if (flags.list_tensors) {
      std::cout << "\n";
      for (const NamedTensor &t : named_tensors(setup->tree, false))
        std::cout << t.name << "  "
                  << (t.tensor->numel ? std::to_string(*t.tensor->numel) : std::string("?"))
                  << (t.tensor->is_buffer ? "  buffer" : "")
                  << (t.tensor->is_buffer && !t.tensor->persistent ? " (not persistent)" : "")
                  << "\n";
    }
  }
  for (const std::string &o : result.offloaded)
    std::cerr << "note: `" << o << "` is offloaded to " << result.map.device_of(o).value_or("?")
              << ": it does not fit the GPUs of --max-memory\n";
  return kExitClean;
}

} // namespace devlint
