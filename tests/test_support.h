// Helpers shared by the unit tests: lower and analyze Python text held in memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "driver/check_run.h"
#include "model/source_file.h"

namespace devlint::testing {

inline std::unique_ptr<SourceFile> source(std::string text, std::string path = "test.py") {
  auto f = std::make_unique<SourceFile>();
  f->path = path;
  f->display_path = path;
  f->text = std::move(text);
  f->index_lines();
  return f;
}

inline std::vector<Finding> check_text(const std::string &text, CheckOptions options = {}) {
  auto f = source(text);
  return check_package({f.get()}, {f.get()}, options);
}

} // namespace devlint::testing
