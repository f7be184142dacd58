#include "driver/model_setup_version.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "driver/python_environment.h"
#include "model/file_input.h"
#include "model/syntax.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxMetadataBytes = 4u << 20;

// The `Version:` header of a core-metadata file (the headers end at the first empty line).
std::string version_header(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      break;
    if (line.rfind("Version:", 0) == 0) {
      std::string v = line.substr(8);
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t") + 1);
      return v;
    }
  }
  return "";
}

} // namespace

TransformersVersion find_transformers_version(const std::vector<std::string> &paths) {
  for (const std::string &dir : paths) {
    std::error_code ec;
    std::vector<fs::path> candidates;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.rfind("transformers-", 0) == 0 && it->path().extension() == ".dist-info")
        candidates.push_back(it->path() / "METADATA");
    }
    std::sort(candidates.begin(), candidates.end());
    for (const fs::path &metadata : candidates) {
      std::string why;
      std::optional<std::string> text =
          read_regular_file(metadata.string(), kMaxMetadataBytes, why);
      if (!text)
        continue;
      std::string version = version_header(*text);
      if (version.empty() || !std::isdigit(static_cast<unsigned char>(version[0])))
        continue;
      TransformersVersion found;
      found.version = version;
      std::string digits =
          version.substr(0, std::min<size_t>(version.find_first_not_of("0123456789"), 4));
      found.major = std::stoi(digits);
      found.source = metadata.string();
      found.installed = true;
      return found;
    }
  }
  TransformersVersion newest;
  newest.version = kNewestKnownTransformers;
  newest.major = 5;
  newest.source = "not installed on the search path: the newest release devlint knows";
  return newest;
}

TransformersVersion installed_transformers_version(const std::vector<std::string> &search_paths,
                                                   bool search_python_environment) {
  std::vector<std::string> paths = search_paths;
  if (search_python_environment)
    for (const std::string &p : python_environment_paths_once())
      paths.push_back(p);
  return find_transformers_version(paths);
}

TransformersVersion release_for_code(TransformersVersion found,
                                     const std::vector<const SyntaxFile *> &files) {
  if (found.installed)
    return found;
  // transformers 4.x's modeling_utils: `from .pytorch_utils import (  # noqa: F401 ...)`; 5.x
  // imports only id_tensor_storage from there.
  static constexpr std::string_view kRemovedIn5[] = {"Conv1D",
                                                     "apply_chunking_to_forward",
                                                     "find_pruneable_heads_and_indices",
                                                     "prune_conv1d_layer",
                                                     "prune_layer",
                                                     "prune_linear_layer",
                                                     "translate_to_torch_parallel_style"};
  for (const SyntaxFile *file : files)
    for (const ImportedName &imported : file->imports)
      if (imported.module == "transformers.modeling_utils" &&
          std::find(std::begin(kRemovedIn5), std::end(kRemovedIn5), imported.name) !=
              std::end(kRemovedIn5)) {
        TransformersVersion v4;
        v4.version = kNewestKnownTransformers4;
        v4.major = 4;
        v4.source = "not installed on the search path; the code imports `" +
                    std::string(imported.name) +
                    "` from transformers.modeling_utils, which transformers 5 removed: the newest "
                    "4.x release devlint knows";
        return v4;
      }
  return found;
}

} // namespace devlint
