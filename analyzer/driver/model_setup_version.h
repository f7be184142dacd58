// Which transformers release a model is loaded with: the one installed on the search path (its
// dist-info METADATA, read as text, never imported), else the newest release devlint's placement
// rules follow. Placement differs between releases (docs/DEVICE_MODEL.md, "transformers 5").
#pragma once

#include <string>
#include <vector>

namespace devlint {

// The newest transformers release whose placement rules devlint follows.
inline constexpr const char *kNewestKnownTransformers = "5.17.0";
// The newest release of transformers 4 it follows, for code that runs only there.
inline constexpr const char *kNewestKnownTransformers4 = "4.57.0";

struct SyntaxFile;

struct TransformersVersion {
  std::string version; // "4.47.1", "5.17.0"
  int major = 5;
  std::string source;     // the METADATA file read, or why the newest known release is assumed
  bool installed = false; // read from a METADATA file
};

// Looks in each directory of `paths`, in order, for `transformers-*.dist-info/METADATA` and reads
// its `Version:` line.
TransformersVersion find_transformers_version(const std::vector<std::string> &paths);

// The same over the search paths, then the Python environment's import paths when asked.
TransformersVersion installed_transformers_version(const std::vector<std::string> &search_paths,
                                                   bool search_python_environment);

// With no release installed, the release `files` were written for: code that imports from
// `transformers.modeling_utils` what only transformers 4 provided there (the pytorch_utils helpers
// it re-exported: `find_pruneable_heads_and_indices`, `prune_linear_layer`, ...) fails to import
// on transformers 5, so it runs on 4.x; otherwise `found` as it is.
TransformersVersion release_for_code(TransformersVersion found,
                                     const std::vector<const SyntaxFile *> &files);

} // namespace devlint
