#include "frontend/python/incremental_python.h"

#include <algorithm>

#include "frontend/python/python_frontend.h"
#include "frontend/python/python_lowering.h"

namespace devlint {

namespace {

// tree-sitter's point of a byte offset: row, and column in bytes.
TSPoint point_at(const std::string &text, size_t offset) {
  uint32_t row = static_cast<uint32_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  size_t line_start = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  size_t column = line_start == std::string::npos ? offset : offset - line_start - 1;
  return {row, static_cast<uint32_t>(column)};
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

} // namespace

IncrementalPythonParser::IncrementalPythonParser() : parser_(ts_parser_new()) {
  ts_parser_set_language(parser_, tree_sitter_python());
}

IncrementalPythonParser::~IncrementalPythonParser() {
  if (tree_)
    ts_tree_delete(tree_);
  ts_parser_delete(parser_);
}

std::unique_ptr<SyntaxFile> IncrementalPythonParser::lower(const SourceFile &source) {
  std::string storage;
  const std::string &text = *python_parse_text(source.text, storage);
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) { // parsed after the mark: the one-shot way
    if (tree_)
      ts_tree_delete(tree_);
    tree_ = nullptr;
    return lower_python(source);
  }
  if (tree_) {
    // The changed span, widened to whole UTF-8 characters.
    size_t common = std::min(text_.size(), text.size());
    size_t prefix = 0;
    while (prefix < common && text_[prefix] == text[prefix])
      ++prefix;
    while (prefix > 0 && prefix < text.size() && is_continuation_byte(text[prefix]))
      --prefix;
    size_t suffix = 0;
    while (suffix < common - prefix &&
           text_[text_.size() - 1 - suffix] == text[text.size() - 1 - suffix])
      ++suffix;
    while (suffix > 0 && is_continuation_byte(text[text.size() - suffix]))
      --suffix;
    if (prefix == text.size() && text.size() == text_.size()) {
      // The same text: the tree is still right.
    } else {
      TSInputEdit edit;
      edit.start_byte = static_cast<uint32_t>(prefix);
      edit.old_end_byte = static_cast<uint32_t>(text_.size() - suffix);
      edit.new_end_byte = static_cast<uint32_t>(text.size() - suffix);
      edit.start_point = point_at(text, prefix);
      edit.old_end_point = point_at(text_, edit.old_end_byte);
      edit.new_end_point = point_at(text, edit.new_end_byte);
      ts_tree_edit(tree_, &edit);
    }
  }
  TSTree *tree =
      ts_parser_parse_string(parser_, tree_, text.data(), static_cast<uint32_t>(text.size()));
  if (tree_)
    ts_tree_delete(tree_);
  tree_ = tree;
  text_ = text;
  return lower_parsed_python(source, tree_);
}

} // namespace devlint
