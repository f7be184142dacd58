// Files beside the code and the language server's framing are untrusted input (issue 23, items
// 5, 7 and 11): only regular files are read, within the size cap, never blocking; JSON is parsed
// with a depth limit; Content-Length is digits within the cap and never allocated before the
// body arrives; absurd configuration values are reported, never sized as 0 bytes silently; a
// device map's unknown keys are checked in linear time. Each test works in its own temporary
// directory.
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/python/python_frontend.h"
#include "model/file_input.h"
#include "server/lsp_framing.h"
#include "simulation/device_map_check.h"
#include "simulation/module_tree.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

class FileInputTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "devlint-file-input-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  std::string refusal(const std::string &file, uint64_t max_bytes = kMaxInputBytes) {
    std::string why;
    std::optional<std::string> text = read_regular_file(file, max_bytes, why);
    EXPECT_FALSE(text.has_value()) << file;
    return why;
  }
  fs::path dir_;
};

TEST_F(FileInputTest, ReadsARegularFileAndASymlinkToOne) {
  std::ofstream(path("config.json")) << "{\"a\": 1}";
  fs::create_symlink("config.json", path("link.json"));
  std::string why;
  EXPECT_EQ(read_regular_file(path("config.json"), kMaxInputBytes, why), "{\"a\": 1}");
  EXPECT_EQ(read_regular_file(path("link.json"), kMaxInputBytes, why), "{\"a\": 1}");
}

// A FIFO would block a reader forever; it is refused at once, without a writer.
TEST_F(FileInputTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(mkfifo(path("config.json").c_str(), 0600), 0);
  EXPECT_EQ(refusal(path("config.json")), "a FIFO, not a regular file");
}

// git stores symlinks: config.json -> /dev/zero grew without end.
TEST_F(FileInputTest, RefusesDevicesDirectlyAndThroughASymlink) {
  EXPECT_EQ(refusal("/dev/zero"), "a character device, not a regular file");
  fs::create_symlink("/dev/zero", path("config.json"));
  EXPECT_EQ(refusal(path("config.json")), "a character device, not a regular file");
}

TEST_F(FileInputTest, RefusesADirectoryAndAMissingFile) {
  fs::create_directory(path("pyproject.toml"));
  EXPECT_EQ(refusal(path("pyproject.toml")), "a directory");
  EXPECT_NE(refusal(path("absent.json")).find("cannot open"), std::string::npos);
}

TEST_F(FileInputTest, RefusesAFileOverTheCap) {
  std::ofstream(path("big.json")) << std::string(11, ' ');
  EXPECT_EQ(refusal(path("big.json"), 10), "file is 11 bytes, over the limit of 10 bytes (0 MiB)");
  std::string why;
  EXPECT_TRUE(read_regular_file(path("big.json"), 11, why).has_value());
}

// stdin: at most one byte past the cap is read, so the caller can tell it was over.
TEST_F(FileInputTest, ReadsAStreamUpToOneBytePastTheCap) {
  int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string why;
  std::optional<std::string> text = read_at_most(fd, 1000, why);
  close(fd);
  ASSERT_TRUE(text.has_value()) << why;
  EXPECT_EQ(text->size(), 1001u);
}

std::string nested_objects(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i)
    text += "{\"a\":";
  text += "1";
  text += std::string(static_cast<size_t>(depth), '}');
  return text;
}

TEST(JsonDepth, DeepDocumentsAreRefusedWithAMessage) {
  nlohmann::json out;
  std::string error;
  EXPECT_TRUE(parse_json_text(nested_objects(kMaxJsonDepth), out, error)) << error;
  EXPECT_FALSE(parse_json_text(nested_objects(kMaxJsonDepth + 1), out, error));
  EXPECT_EQ(error, "nested more than 100 levels deep");
  // The config.json (10,000 levels) and device map (100,000 levels, arrays).
  EXPECT_FALSE(parse_json_text(nested_objects(10000), out, error));
  std::string arrays = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(parse_json_text(arrays, out, error));
  EXPECT_EQ(error, "nested more than 100 levels deep");
}

// The text may come from any file a symlink names: an error never quotes it.
TEST(JsonDepth, SyntaxErrorsQuoteNoInput) {
  nlohmann::json out;
  std::string error;
  EXPECT_FALSE(parse_json_text("root:x:0:0:secret", out, error));
  EXPECT_EQ(error.find("root"), std::string::npos) << error;
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
}

TEST(TomlDepth, DottedKeysAreCounted) {
  uint32_t line = 0;
  EXPECT_EQ(deepest_dotted_key("a = 1.5\n[tool.devlint]\nx = 'a.b.c'\n", line), 1u);
  EXPECT_EQ(line, 2u);
}

Frame frame_of(const std::string &bytes, uint64_t max_body = kMaxMessageBytes) {
  std::istringstream in(bytes);
  return read_frame(in, max_body);
}

TEST(LspFraming, ReadsMessagesInTurn) {
  std::istringstream in("Content-Length: 2\r\n\r\n{}content-length:4\r\nContent-Type: x\r\n\r\n"
                        "[1,2]");
  Frame first = read_frame(in);
  EXPECT_EQ(first.status, FrameStatus::Message);
  EXPECT_EQ(first.body, "{}");
  Frame second = read_frame(in);
  EXPECT_EQ(second.status, FrameStatus::Message);
  EXPECT_EQ(second.body, "[1,2");
  EXPECT_EQ(read_frame(in).status, FrameStatus::EndOfInput); // "]" alone has no header
}

// These aborted the server (std::stoul outside the try block, a negative length).
TEST(LspFraming, ContentLengthMustBeDigits) {
  for (const char *value : {"abc", "", "-5", "+5", "5x", "0x10", "99999999999999999999999"}) {
    Frame frame = frame_of(std::string("Content-Length: ") + value + "\r\n\r\n{}");
    EXPECT_EQ(frame.status, FrameStatus::BadHeader) << value;
    EXPECT_NE(frame.error.find("Content-Length is not a number of bytes"), std::string::npos)
        << frame.error;
  }
  EXPECT_EQ(frame_of("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}").status,
            FrameStatus::BadHeader);
}

TEST(LspFraming, ControlBytesInAHeaderAreNotEchoed) {
  Frame frame = frame_of("Content-Length: \x1b]0;x\x07\r\n\r\n");
  EXPECT_EQ(frame.status, FrameStatus::BadHeader);
  EXPECT_EQ(frame.error.find('\x1b'), std::string::npos) << frame.error;
  EXPECT_NE(frame.error.find("\\x1b"), std::string::npos) << frame.error;
}

// 2^63 bytes announced: over the cap, skipped (the input ends), never allocated.
TEST(LspFraming, AnOversizedMessageIsSkippedNotAllocated) {
  Frame huge = frame_of("Content-Length: 9223372036854775808\r\n\r\n{}");
  EXPECT_EQ(huge.status, FrameStatus::TooLarge);
  EXPECT_NE(huge.error.find("over the limit"), std::string::npos) << huge.error;
  std::istringstream in("Content-Length: 5\r\n\r\n12345Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(read_frame(in, 4).status, FrameStatus::TooLarge);
  Frame next = read_frame(in, 4);
  EXPECT_EQ(next.status, FrameStatus::Message);
  EXPECT_EQ(next.body, "{}");
}

// A body announced larger than what arrives ends the input; the reading is in chunks, so the
// string holds only what came.
TEST(LspFraming, ATruncatedBodyEndsTheInput) {
  EXPECT_EQ(frame_of("Content-Length: 2000000\r\n\r\n{}").status, FrameStatus::EndOfInput);
}

TEST(LspFraming, AnEndlessHeaderLineIsRefused) {
  Frame frame = frame_of("Content-Length: 2" + std::string(1 << 20, ' '));
  EXPECT_EQ(frame.status, FrameStatus::BadHeader);
  EXPECT_NE(frame.error.find("header line longer than"), std::string::npos) << frame.error;
}

// Absurd configuration values (issue 23, item 11): hidden_size 1e30, 2^64-1, negative; a
// negative layer count. Each is reported, and no tensor is sized from it.
ModuleTree tree_for(const nlohmann::json &values) {
  static auto file = testing::source("import torch\nfrom torch import nn\n\n"
                                     "class M(nn.Module):\n"
                                     "    def __init__(self, config):\n"
                                     "        super().__init__()\n"
                                     "        self.layers = nn.ModuleList([nn.Linear(\n"
                                     "            config.hidden_size, config.hidden_size)\n"
                                     "            for _ in range(config.num_layers)])\n",
                                     "modeling_m.py");
  static auto syntax = lower_python(*file);
  static auto package = build_package({syntax.get()}, {});
  ModelConfig config;
  config.values = values;
  config.present = true;
  return build_module_tree(*package, *package->find_class("M"), config, "");
}

TEST(AbsurdConfiguration, ValuesThatMakeNoSizeAreReported) {
  EXPECT_TRUE(tree_for({{"hidden_size", 8}, {"num_layers", 2}}).complete());
  for (const nlohmann::json &hidden :
       {nlohmann::json(1e30), nlohmann::json(-3), nlohmann::json(uint64_t{18446744073709551615u}),
        nlohmann::json(int64_t{1} << 62)}) {
    ModuleTree tree = tree_for({{"hidden_size", hidden}, {"num_layers", 2}});
    EXPECT_FALSE(tree.complete()) << hidden.dump();
    bool unsized = false;
    for (const TreeUnknown &u : tree.unknowns)
      unsized |= u.what.find("of no known size") != std::string::npos;
    EXPECT_TRUE(unsized) << hidden.dump();
  }
  ModuleTree negative = tree_for({{"hidden_size", 8}, {"num_layers", -5}});
  ASSERT_FALSE(negative.unknowns.empty());
  EXPECT_NE(negative.unknowns[0].what.find("range(-5): a negative count"), std::string::npos)
      << negative.unknowns[0].what;
}

// 10^5 keys that match nothing: every one reported, suggestions only for the first few (each
// costs an edit distance against every path), and the checks index the map rather than scan it
// per module (what took minutes at 10^6 keys).
TEST(DeviceMapKeys, ManyUnknownKeysAreReportedWithBoundedSuggestions) {
  ModuleTree tree = tree_for({{"hidden_size", 8}, {"num_layers", 3}});
  DeviceMap map;
  map.entries.emplace_back("", "0");
  for (int i = 0; i < 100000; ++i)
    map.entries.emplace_back("layers." + std::to_string(i) + ".x", "0");
  std::vector<DeviceMapProblem> problems = check_device_map(tree, map, {"Linear"});
  size_t unknown = 0, suggested = 0;
  for (const DeviceMapProblem &p : problems)
    if (p.kind == DeviceMapProblemKind::UnknownKey) {
      ++unknown;
      suggested += !p.suggestion.empty();
    }
  EXPECT_EQ(unknown, 100000u);
  EXPECT_EQ(suggested, 50u);
  // The root key covers every parameter: nothing missing, and a Linear is on one device.
  for (const DeviceMapProblem &p : problems)
    EXPECT_EQ(p.kind, DeviceMapProblemKind::UnknownKey) << p.message;
}

// The index answers as DeviceMap does: the closest ancestor's entry, and every device below.
TEST(DeviceMapKeys, IndexedChecksFindCutsAndMissingTensors) {
  ModuleTree tree = tree_for({{"hidden_size", 8}, {"num_layers", 2}});
  DeviceMap map{{{"layers.0.weight", "0"}, {"layers.0.bias", "1"}, {"layers.10", "0"}}};
  std::vector<DeviceMapProblem> problems = check_device_map(tree, map, {"Linear"});
  std::vector<DeviceMapProblemKind> kinds;
  for (const DeviceMapProblem &p : problems)
    kinds.push_back(p.kind);
  EXPECT_EQ(kinds, (std::vector<DeviceMapProblemKind>{DeviceMapProblemKind::UnknownKey,
                                                      DeviceMapProblemKind::MissingParameters,
                                                      DeviceMapProblemKind::CutsNoSplitModule}));
  EXPECT_FALSE(problems[0].suggestion.empty());
  EXPECT_EQ(problems[1].names, (std::vector<std::string>{"layers.1.weight", "layers.1.bias"}));
  EXPECT_EQ(problems[2].key, "layers.0");
}

} // namespace
} // namespace devlint
