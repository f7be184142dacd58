// Helpers shared by the unit tests: lower and analyze Python text held in memory; read a file;
// read a fixture's inline annotations.
#pragma once

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
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

// Snippets of plain nn.Module classes that stand for the blocks of a model accelerate splits:
// checked as a hand-made map splits them (--hand-made-maps), since no from_pretrained loads a
// package without a PreTrainedModel.
inline std::vector<Finding> check_plain_modules(const std::string &text,
                                                CheckOptions options = {}) {
  options.overrides.hand_made_maps = true;
  return check_text(text, options);
}

inline std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fixture's expected findings, stated Semgrep-style in comments on the line before the site
// (`comment` is the language's comment marker, "#" or "//"):
//   # ruleid: DL001      a DL001 finding must start on the next code line
//   # ok: DL001          no DL001 finding may start there
//   # ruleid: DL002 (warning)   ... and the placement ranks it `warning` (or `(error)`)
struct Expectation {
  std::set<std::pair<uint32_t, std::string>> must;                 // (line, code)
  std::set<std::pair<uint32_t, std::string>> must_not;             // (line, code)
  std::map<std::pair<uint32_t, std::string>, FindingLevel> levels; // `(warning)`, `(error)`
};

inline Expectation parse_annotations(const SourceFile &file, std::string_view comment) {
  Expectation e;
  const std::string ruleid = std::string(comment) + " ruleid:";
  const std::string ok = std::string(comment) + " ok:";
  std::vector<std::pair<bool, std::string>> pending;
  for (uint32_t line = 1; line <= file.line_count(); ++line) {
    std::string_view text = file.line_text(line);
    size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos)
      continue;
    std::string_view body = text.substr(first);
    for (auto [marker, positive] :
         {std::pair{std::string_view(ruleid), true}, std::pair{std::string_view(ok), false}}) {
      if (body.substr(0, marker.size()) == marker) {
        std::stringstream codes{std::string(body.substr(marker.size()))};
        std::string code;
        while (std::getline(codes, code, ',')) {
          code.erase(0, code.find_first_not_of(' '));
          code.erase(code.find_last_not_of(' ') + 1);
          pending.emplace_back(positive, code);
        }
      }
    }
    if (body.substr(0, comment.size()) == comment)
      continue;
    for (auto &[positive, code] : pending) {
      // "DL002 (warning)": the code and the rank the placement must give it.
      size_t paren = code.find(" (");
      if (paren != std::string::npos) {
        std::string level = code.substr(paren + 2, code.size() - paren - 3);
        code.erase(paren);
        EXPECT_TRUE(level == "warning" || level == "error") << "line " << line << ": " << level;
        e.levels[{line, code}] = level == "warning" ? FindingLevel::Warning : FindingLevel::Error;
      }
      (positive ? e.must : e.must_not).insert({line, code});
    }
    pending.clear();
  }
  return e;
}

} // namespace devlint::testing
