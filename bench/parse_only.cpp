// Baseline for bench/run_bench.sh: tree-sitter parsing alone, on one thread, of the files named
// on the command line (or one path per line on stdin). Prints files, lines, bytes and seconds.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <tree_sitter/api.h>
#include <vector>

extern "C" const TSLanguage *tree_sitter_python(void);

int main(int argc, char **argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty())
    for (std::string line; std::getline(std::cin, line);)
      if (!line.empty())
        paths.push_back(line);
  // Read everything first: the baseline times parsing, not the disk.
  std::vector<std::string> texts;
  size_t bytes = 0, lines = 0;
  for (const std::string &path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "parse-only: cannot read %s\n", path.c_str());
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
    bytes += texts.back().size();
    for (char c : texts.back())
      lines += c == '\n';
  }
  TSParser *parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_python())) {
    std::fprintf(stderr, "parse-only: grammar ABI %u not supported by this tree-sitter library\n",
                 ts_language_version(tree_sitter_python()));
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  size_t nodes = 0;
  for (const std::string &text : texts) {
    TSTree *tree =
        ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
    if (!tree) {
      std::fprintf(stderr, "parse-only: tree-sitter returned no tree\n");
      return 2;
    }
    nodes += ts_node_child_count(ts_tree_root_node(tree));
    ts_tree_delete(tree);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ts_parser_delete(parser);
  std::printf("files=%zu lines=%zu bytes=%zu seconds=%.3f top_level_nodes=%zu\n", texts.size(),
              lines, bytes, seconds, nodes);
  return 0;
}
