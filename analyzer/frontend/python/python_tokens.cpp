#include "frontend/python/python_tokens.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <tree_sitter/api.h>

extern "C" const TSLanguage *tree_sitter_python(void);

namespace devlint {
namespace {

struct ParserDeleter {
  void operator()(TSParser *p) const { ts_parser_delete(p); }
};

struct TreeDeleter {
  void operator()(TSTree *t) const { ts_tree_delete(t); }
};

void mark(std::vector<ByteClass> &classes, TSNode node, ByteClass cls) {
  uint32_t begin = std::min<uint32_t>(ts_node_start_byte(node), classes.size());
  uint32_t end = std::min<uint32_t>(ts_node_end_byte(node), classes.size());
  std::fill(classes.begin() + begin, classes.begin() + end, cls);
}

} // namespace

PythonTokens classify_python_bytes(std::string_view text) {
  PythonTokens out;
  out.classes.assign(text.size(), ByteClass::Code);
  std::vector<ByteClass> &classes = out.classes;
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser = [] {
    std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
    ts_parser_set_language(p.get(), tree_sitter_python());
    return p;
  }();
  std::unique_ptr<TSTree, TreeDeleter> tree(ts_parser_parse_string(
      parser.get(), nullptr, text.data(), static_cast<uint32_t>(text.size())));
  if (!tree) {
    out.syntax_errors = 1;
    return out;
  }
  // Iterative walk: a file may nest far deeper than the stack would allow recursion.
  TSTreeCursor cursor = ts_tree_cursor_new(ts_tree_root_node(tree.get()));
  for (;;) {
    TSNode node = ts_tree_cursor_current_node(&cursor);
    const char *type = ts_node_type(node);
    bool leaf = true;
    if (std::strcmp(type, "ERROR") == 0 || ts_node_is_missing(node))
      ++out.syntax_errors;
    if (std::strcmp(type, "comment") == 0)
      mark(classes, node, ByteClass::Comment);
    else if (std::strcmp(type, "string_start") == 0 || std::strcmp(type, "string_content") == 0 ||
             std::strcmp(type, "string_end") == 0)
      mark(classes, node, ByteClass::String);
    else
      leaf = !ts_tree_cursor_goto_first_child(&cursor);
    if (!leaf)
      continue;
    while (!ts_tree_cursor_goto_next_sibling(&cursor))
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        ts_tree_cursor_delete(&cursor);
        return out;
      }
  }
}

} // namespace devlint
