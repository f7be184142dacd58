// What transformers' own PreTrainedModel classes declare, for packages that subclass them on a
// machine without transformers installed. Generated from a transformers source tree by
// tools/gen_transformers_summary.py; the facts it returns say which release they come from.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devlint {

struct TransformersModelFacts {
  const char *class_name;
  bool declares_no_split; // `_no_split_modules` is set (possibly to []) somewhere in its bases
  const char *no_split_modules; // comma-separated class names
  const char *skip_keys;        // comma-separated `_skip_keys_device_placement`
};

// A transformers cache class whose `__init__` allocates tensors once, on the device it is
// given, that every layer then reads (`MambaCache.ssm_states`).
struct TransformersHeldState {
  const char *class_name;
  const char *attributes; // comma-separated
  const char *methods;    // comma-separated: methods that return that state
};

// The release the built-in summary was generated from ("4.47.1").
extern const char *const kTransformersSummaryVersion;

// The facts for a transformers class name, or null when the summary does not know it.
const TransformersModelFacts *find_transformers_model(std::string_view class_name);

// The held state of a transformers cache class, or null.
const TransformersHeldState *find_transformers_held_state(std::string_view class_name);

// Splits one of the comma-separated fields.
inline std::vector<std::string> split_summary_names(std::string_view names) {
  std::vector<std::string> out;
  while (!names.empty()) {
    size_t comma = names.find(',');
    out.emplace_back(names.substr(0, comma));
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  return out;
}

} // namespace devlint
