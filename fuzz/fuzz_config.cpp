// The configuration loader (config/config_file.h) on arbitrary TOML, as pyproject.toml (first
// byte odd) or devlint.toml, and the globs it accepts matched against a few paths: a bad file must
// end in a ConfigError, never a crash, a hang or another exception.
#include <cstdint>

#include "config/config_file.h"
#include "driver/path_patterns.h"
#include "fuzz/fuzz_support.h"

using namespace devlint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *name = (data[0] & 1) ? "fuzz_config/pyproject.toml" : "fuzz_config/devlint.toml";
  std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::optional<ConfigFile> config;
  try {
    config = load_config_text(text, name);
  } catch (const ConfigError &e) {
    DEVLINT_FUZZ_REQUIRE(std::string(e.what()).find(name) != std::string::npos, e.what());
    return 0;
  }
  if (!config)
    return 0;
  const char *paths[] = {"fuzz_config/models/glm/modeling_glm.py", "fuzz_config/tests/test_a.py",
                         "fuzz_config/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z.py"};
  for (const char *path : paths) {
    any_glob_matches(config->exclude.value_or(std::vector<std::string>{}), path, config->directory);
    any_glob_matches(config->extend_exclude, path, config->directory);
    any_glob_matches(config->include.value_or(std::vector<std::string>{}), path, config->directory);
    for (const PerFileIgnore &entry : config->per_file_ignores)
      glob_matches(entry.pattern, path, config->directory);
  }
  return 0;
}
