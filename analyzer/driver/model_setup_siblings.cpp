#include "driver/model_setup_siblings.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

#include "model/file_input.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// Far more than any composite model names (BLIP-2: OPT; PaliGemma: Gemma and SigLIP), few
// enough that a hostile tree cannot make devmap read it all.
constexpr size_t kMaxSiblingPackages = 16;
constexpr uint64_t kMaxMappingFileBytes = 8u << 20;

std::string read_text(const fs::path &path) {
  std::string why;
  std::optional<std::string> text = read_regular_file(path.string(), kMaxMappingFileBytes, why);
  return text ? *text : std::string();
}

// The text of every block `NAME = OrderedDict(...)`, `NAME = {...}` or `NAME.update(...)`:
// from its opening bracket to the matching close, strings and comments skipped.
std::vector<std::string> blocks_of(const std::string &text, const std::string &name) {
  std::vector<std::string> out;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool line_start = at == 0 || text[at - 1] == '\n';
    size_t after = at + name.size();
    size_t open = text.find_first_of("({\n", after);
    if (!line_start || open == std::string::npos || text[open] == '\n')
      continue;
    std::string between = text.substr(after, open - after);
    if (between != " = OrderedDict" && between != ".update" && between != " = ")
      continue;
    int depth = 0;
    size_t i = open;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '#') {
        i = text.find('\n', i);
        if (i == std::string::npos)
          break;
      } else if (c == '"' || c == '\'') {
        size_t close = text.find(c, i + 1);
        if (close == std::string::npos)
          break;
        i = close;
      } else if (c == '(' || c == '{' || c == '[') {
        ++depth;
      } else if ((c == ')' || c == '}' || c == ']') && --depth == 0) {
        break;
      }
    }
    if (i == std::string::npos || i >= text.size())
      break;
    out.push_back(text.substr(open, i - open + 1));
    at = i;
  }
  return out;
}

// `("llama", "LlamaConfig")` and `"llama": "LlamaConfig"` pairs of a mapping's blocks; a value
// that is a tuple of classes (several per model_type) is not one pair and is left out.
std::map<std::string, std::string> mapping(const std::vector<std::string> &texts,
                                           const std::string &name) {
  static const std::regex pair_pattern(
      R"re(\(\s*"([^"\n]+)"\s*,\s*"([^"\n]+)"\s*\)|"([^"\n]+)"\s*:\s*"([^"\n]+)")re");
  std::map<std::string, std::string> out;
  for (const std::string &text : texts)
    for (const std::string &block : blocks_of(text, name))
      for (std::sregex_iterator it(block.begin(), block.end(), pair_pattern), end; it != end;
           ++it) {
        const std::smatch &m = *it;
        if (m[1].matched)
          out.emplace(m[1].str(), m[2].str());
        else
          out.emplace(m[3].str(), m[4].str());
      }
  return out;
}

// `class AutoModelForX(_BaseAutoModelClass): _model_mapping = MODEL_FOR_X_MAPPING` with
// `MODEL_FOR_X_MAPPING = _LazyAutoMapping(CONFIG_MAPPING_NAMES, MODEL_FOR_X_MAPPING_NAMES)`.
AutoModelClasses auto_model_classes(const std::vector<std::string> &texts) {
  static const std::regex class_pattern(
      R"re(class (Auto\w*)\(_BaseAuto(?:Model|Backbone)Class\):\s*\n\s*_model_mapping = (\w+))re");
  static const std::regex lazy_pattern(
      R"re((\w+) = _LazyAutoMapping\(\s*CONFIG_MAPPING_NAMES,\s*(\w+)\s*\))re");
  std::map<std::string, std::string> names_of_mapping;
  std::vector<std::pair<std::string, std::string>> classes;
  for (const std::string &text : texts) {
    for (std::sregex_iterator it(text.begin(), text.end(), lazy_pattern), end; it != end; ++it)
      names_of_mapping.emplace((*it)[1].str(), (*it)[2].str());
    for (std::sregex_iterator it(text.begin(), text.end(), class_pattern), end; it != end; ++it)
      classes.emplace_back((*it)[1].str(), (*it)[2].str());
  }
  AutoModelClasses out;
  for (const auto &[auto_class, lazy] : classes) {
    auto names = names_of_mapping.find(lazy);
    if (names != names_of_mapping.end())
      out.by_auto_class[auto_class] = mapping(texts, names->second);
  }
  for (const auto &[lazy, names] : names_of_mapping)
    out.by_mapping_name[names] = mapping(texts, names);
  return out;
}

// transformers' model_type_to_module_name (models/auto/configuration_auto.py).
std::string module_name(const std::string &model_type,
                        const std::map<std::string, std::string> &special) {
  auto it = special.find(model_type);
  if (it != special.end())
    return it->second;
  std::string name = model_type;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The model packages a file of models/<model>/ imports relatively, as Python resolves the dots:
// `from ..siglip import SiglipVisionConfig`, `from ..bert.modeling_bert import BertModel`
// (models/siglip, models/bert) and `from ...models.zamba2.modeling_zamba2 import X` (the tree's
// models/zamba2). `from ..auto import AutoModel` is the auto mappings, read apart.
std::vector<std::string> imported_model_packages(const std::string &text) {
  static const std::regex import_pattern(
      R"re((?:^|\n)[ \t]*from[ \t]+(?:\.\.|\.\.\.models\.)([A-Za-z_]\w*)[\w.]*[ \t]+import\b)re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), import_pattern), end; it != end; ++it)
    if ((*it)[1].str() != "auto")
      out.push_back((*it)[1].str());
  return out;
}

} // namespace

SiblingModels find_sibling_models(const std::string &directory,
                                  const std::vector<std::string> &configuration_texts,
                                  const std::vector<std::string> &modeling_texts) {
  SiblingModels out;
  std::error_code ec;
  fs::path own = fs::weakly_canonical(fs::path(directory), ec);
  if (ec)
    return out;
  fs::path models = own.parent_path();
  fs::path auto_dir = models / "auto";
  if (!fs::is_directory(auto_dir, ec) || own == auto_dir)
    return out;
  // One tree's auto tables serve every model of it: read once per run (a whole tree is checked
  // package by package).
  struct AutoTables {
    std::map<std::string, std::string> config_classes, special;
    AutoModelClasses auto_classes;
  };
  static std::mutex memo_mutex;
  static std::map<fs::path, std::shared_ptr<const AutoTables>> memo;
  std::shared_ptr<const AutoTables> tables;
  {
    std::lock_guard<std::mutex> lock(memo_mutex);
    auto found = memo.find(auto_dir);
    if (found != memo.end())
      tables = found->second;
  }
  if (!tables) {
    std::vector<std::string> texts;
    for (fs::directory_iterator it(auto_dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".py")
        texts.push_back(read_text(it->path()));
    auto read = std::make_shared<AutoTables>();
    read->config_classes = mapping(texts, "CONFIG_MAPPING_NAMES");
    read->special = mapping(texts, "SPECIAL_MODEL_TYPE_TO_MODULE_NAME");
    read->auto_classes = auto_model_classes(texts);
    std::lock_guard<std::mutex> lock(memo_mutex);
    tables = memo.emplace(auto_dir, std::move(read)).first->second;
  }
  const std::map<std::string, std::string> &config_classes = tables->config_classes;
  if (config_classes.empty())
    return out;
  out.in_transformers_tree = true;
  const std::map<std::string, std::string> &special = tables->special;
  out.auto_classes = tables->auto_classes;

  // Model types named by a string literal of a configuration file and model packages imported
  // relatively, followed breadth-first through the configuration files of each package found.
  static const std::regex literal(R"re("([A-Za-z0-9_\-]+)")re");
  std::set<fs::path> seen{own};
  std::vector<std::string> pending = configuration_texts;
  // Adds models/<package> when it is a directory not seen yet; false once the bound is reached.
  auto add = [&](const std::string &package) {
    fs::path sibling = models / package;
    if (seen.count(sibling) || !fs::is_directory(sibling, ec))
      return true;
    seen.insert(sibling);
    out.directories.push_back(sibling.string());
    if (out.directories.size() == kMaxSiblingPackages)
      return false;
    for (fs::directory_iterator file(sibling, ec), stop; !ec && file != stop; file.increment(ec)) {
      std::string name = file->path().filename().string();
      if (name.rfind("configuration_", 0) == 0 && file->path().extension() == ".py")
        pending.push_back(read_text(file->path()));
    }
    return true;
  };
  for (const std::string &text : modeling_texts)
    for (const std::string &package : imported_model_packages(text))
      if (!add(package))
        return out;
  for (size_t next = 0; next < pending.size(); ++next) {
    const std::string text = pending[next];
    for (const std::string &package : imported_model_packages(text))
      if (!add(package))
        return out;
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) {
      std::string model_type = (*it)[1].str();
      if (config_classes.count(model_type) && !add(module_name(model_type, special)))
        return out;
    }
  }
  return out;
}

} // namespace devlint
