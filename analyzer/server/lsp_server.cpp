#include "server/lsp_server.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "config/config_resolver.h"
#include "driver/check_run.h"
#include "driver/session_cache.h"
#include "fixes/noqa_edit.h"
#include "render/renderer.h"
#include "rules/rule.h"
#include "server/lsp_framing.h"

namespace devlint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// JSON-RPC error codes the server uses.
constexpr int kParseError = -32700;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidRequest = -32600;
constexpr int kServerNotInitialized = -32002;

// file:// URIs <-> paths (RFC 3986 percent-encoding).
std::string uri_to_path(const std::string &uri) {
  std::string path = uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri;
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() &&
        std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
      out += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += path[i];
    }
  }
  return out;
}

std::string path_to_uri(const std::string &path) {
  static const char digits[] = "0123456789ABCDEF";
  std::string absolute = fs::absolute(path).lexically_normal().string();
  std::string out = "file://";
  for (unsigned char c : absolute) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
      out += static_cast<char>(c);
    else
      out += std::string("%") + digits[c >> 4] + digits[c & 0xF];
  }
  return out;
}

// LSP positions count UTF-16 code units from the start of a 0-based line; devlint's columns are
// 1-based bytes.
json position(const SourceFile &file, uint32_t line, uint32_t byte_column) {
  if (line == 0 || line > file.line_count())
    return {{"line", line ? line - 1 : 0}, {"character", 0}};
  uint32_t start = file.line_starts[line - 1];
  uint32_t units = 0;
  for (uint32_t i = start; i < start + byte_column - 1 && i < file.text.size();) {
    unsigned char c = static_cast<unsigned char>(file.text[i]);
    size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    units += length == 4 ? 2 : 1; // outside the BMP: a surrogate pair
    i += static_cast<uint32_t>(length);
  }
  return {{"line", line - 1}, {"character", units}};
}

json range_of(const SourceFile &file, const SourceRange &r) {
  return {{"start", position(file, r.line, r.column)},
          {"end", position(file, r.end_line, r.end_column)}};
}

json range_of_offsets(const SourceFile &file, uint32_t begin, uint32_t end) {
  auto at = [&](uint32_t offset) {
    uint32_t line = 0;
    uint32_t column = 0;
    file.position(offset, line, column);
    return position(file, line, column);
  };
  return {{"start", at(begin)}, {"end", at(end)}};
}

// The settings an editor may set over the configuration files.
struct EditorSettings {
  EditorSettings() { command_line.python_environment = true; } // as `devlint check`
  CommandLineSettings command_line;
  std::string configuration; // a configuration file for every document
  bool isolated = false;
  std::optional<bool> unsafe_fixes;
};

class Server {
public:
  Server(std::istream &in, std::ostream &out) : in_(in), out_(out) {}

  int run() {
    while (true) {
      Frame frame = read_frame(in_);
      if (frame.status == FrameStatus::EndOfInput)
        return shutdown_ ? 0 : 1; // the client went away
      if (frame.status == FrameStatus::BadHeader) {
        // The next message cannot be found: say why and stop, as the client went away.
        respond_error(nullptr, kParseError, "bad message header: " + frame.error);
        std::cerr << "devlint server: bad message header: " << frame.error << "\n";
        return 1;
      }
      if (frame.status == FrameStatus::TooLarge) { // skipped: the next one can be read
        respond_error(nullptr, kInvalidRequest, frame.error);
        std::cerr << "devlint server: skipped " << frame.error << "\n";
        continue;
      }
      json message;
      std::string error;
      if (!parse_json_text(frame.body, message, error) || !message.is_object()) {
        respond_error(nullptr, kParseError,
                      "the message is not a JSON object" + (error.empty() ? "" : ": " + error));
        continue;
      }
      std::string method = message.value("method", "");
      if (method == "exit")
        return shutdown_ ? 0 : 1;
      // A request is answered from the documents as the client last sent them.
      if (message.contains("id"))
        analyze_pending();
      try {
        dispatch(message, method);
      } catch (const std::exception &e) { // a malformed request: answer it, keep serving
        if (message.contains("id"))
          respond_error(message["id"], kInvalidRequest, e.what());
      }
      // Bursts (fast typing) are coalesced: while more messages wait, changes only update the
      // text; each changed document is analyzed once, at its latest version.
      if (!more_input_waiting())
        analyze_pending();
    }
  }

private:
  struct Document {
    std::string path;
    std::string text;
    json version;         // the client's version of `text` (null when it sent none)
    bool pending = false; // changed since the last analysis
    CheckResult result;   // the last analysis; its findings point into result.files
  };

  std::istream &in_;
  std::ostream &out_;
  bool initialized_ = false, shutdown_ = false;
  EditorSettings settings_;
  std::map<std::string, Document> documents_; // by URI
  // Kept between analyses: an edit re-lowers only the edited file (incrementally), and the
  // siblings it imports, the modules read from search paths and the simulated placements are
  // reused while they stay the same.
  SessionCache session_;

  // Whether a message has already arrived (buffered, or readable on the pipe: libstdc++'s
  // showmanyc asks the descriptor), so that analyzing now would analyze a stale text.
  bool more_input_waiting() { return in_.rdbuf()->in_avail() > 0; }

  void analyze_pending() {
    for (auto &[uri, doc] : documents_)
      if (doc.pending)
        analyze(uri);
  }

  void send(const json &message) {
    std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    out_ << "Content-Length: " << body.size() << "\r\n\r\n" << body;
    out_.flush();
  }
  void respond(const json &id, const json &result) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
  }
  void respond_error(const json &id, int code, const std::string &text) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", text}}}});
  }
  void notify(const std::string &method, const json &params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
  }
  void show_message(int type, const std::string &text) {
    notify("window/showMessage", {{"type", type}, {"message", "devlint: " + text}});
  }

  void dispatch(const json &message, const std::string &method) {
    const json params = message.value("params", json::object());
    bool request = message.contains("id");
    if (method == "initialize") {
      initialized_ = true;
      if (params.contains("initializationOptions"))
        apply_settings(params["initializationOptions"]);
      respond(message["id"],
              {{"capabilities",
                {{"textDocumentSync",
                  {{"openClose", true}, {"change", 1}, {"save", {{"includeText", false}}}}},
                 {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}}}},
               {"serverInfo", {{"name", "devlint"}, {"version", DEVLINT_VERSION}}}});
      return;
    }
    if (!initialized_) {
      if (request)
        respond_error(message["id"], kServerNotInitialized, "initialize first");
      return;
    }
    if (method == "shutdown") {
      shutdown_ = true;
      respond(message["id"], nullptr);
    } else if (method == "textDocument/didOpen") {
      const json &doc = params.at("textDocument");
      std::string uri = doc.at("uri");
      // Python documents only; an editor without filetype detection sends an empty languageId.
      std::string language = doc.value("languageId", "");
      if (language != "python" && fs::path(uri_to_path(uri)).extension() != ".py")
        return;
      documents_[uri] =
          Document{uri_to_path(uri), doc.at("text"), doc.value("version", json()), true, {}};
    } else if (method == "textDocument/didChange") {
      std::string uri = params.at("textDocument").at("uri");
      auto it = documents_.find(uri);
      if (it == documents_.end())
        return;
      for (const json &change : params.at("contentChanges"))
        if (!change.contains("range")) // full sync, as announced
          it->second.text = change.at("text");
      it->second.version = params.at("textDocument").value("version", json());
      it->second.pending = true;
    } else if (method == "textDocument/didSave") {
      std::string uri = params.at("textDocument").at("uri");
      session_.forget_outside_files(); // the saved file may be one a search path supplies
      if (params.contains("text") && documents_.count(uri))
        documents_[uri].text = params["text"];
      if (documents_.count(uri))
        documents_[uri].pending = true;
      else if (std::string path = uri_to_path(uri); is_config_file(path))
        reanalyze_all(); // a configuration file changed: every open document may change
    } else if (method == "textDocument/didClose") {
      std::string uri = params.at("textDocument").at("uri");
      documents_.erase(uri);
      session_.forget_document(uri_to_path(uri));
      notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
    } else if (method == "workspace/didChangeConfiguration") {
      const json &s = params.value("settings", json::object());
      apply_settings(s.contains("devlint") ? s["devlint"] : s);
      reanalyze_all();
    } else if (method == "textDocument/codeAction") {
      respond(message["id"], code_actions(params));
    } else if (request) {
      respond_error(message["id"], kMethodNotFound, "devlint does not handle " + method);
    }
  }

  static bool is_config_file(const std::string &path) {
    std::string name = fs::path(path).filename().string();
    return name == "pyproject.toml" || name == "devlint.toml" || name == ".devlint.toml";
  }

  void apply_settings(const json &options) {
    if (!options.is_object())
      return;
    EditorSettings s;
    auto selectors = [&](const char *key, std::vector<std::string> &into) {
      if (!options.contains(key))
        return true;
      for (const json &value : options[key]) {
        std::string resolved = value.is_string() ? resolve_selector(value.get<std::string>()) : "";
        if (resolved.empty()) {
          show_message(1, std::string("unknown rule selector in `") + key + "`: " + value.dump());
          return false;
        }
        into.push_back(resolved);
      }
      return true;
    };
    std::vector<std::string> select;
    bool ok = selectors("select", select) &&
              selectors("extendSelect", s.command_line.extend_select) &&
              selectors("ignore", s.command_line.ignore);
    if (!ok)
      return; // keep the previous settings rather than run with half of them
    if (options.contains("select"))
      s.command_line.select = select;
    for (const auto &[key, into] : {std::pair<const char *, std::vector<std::string> *>{
                                        "noSplitModules", &s.command_line.no_split_modules},
                                    {"skipKeys", &s.command_line.skip_keys},
                                    {"searchPaths", &s.command_line.search_paths}})
      if (options.contains(key))
        for (const json &value : options[key])
          if (value.is_string())
            into->push_back(value);
    s.configuration = options.value("configuration", "");
    s.isolated = options.value("isolated", false);
    s.command_line.python_environment = !s.isolated;
    if (options.contains("unsafeFixes") && options["unsafeFixes"].is_boolean())
      s.unsafe_fixes = options["unsafeFixes"].get<bool>();
    s.command_line.jobs = 1;
    settings_ = std::move(s);
    session_.forget_outside_files();
  }

  void reanalyze_all() {
    for (auto &[uri, doc] : documents_)
      doc.pending = true;
  }

  void analyze(const std::string &uri) {
    Document &doc = documents_[uri];
    doc.pending = false;
    SourceTexts texts;
    for (const auto &[other_uri, other] : documents_) // unsaved buffers win over the disk
      texts[other.path] = other.text;
    json diagnostics = json::array();
    try {
      ConfigDiscovery discovery = settings_.isolated                ? ConfigDiscovery::Isolated
                                  : settings_.configuration.empty() ? ConfigDiscovery::WalkUp
                                                                    : ConfigDiscovery::ExplicitFile;
      ConfigResolver resolver(settings_.command_line, discovery, settings_.configuration);
      CheckOptions run_options;
      run_options.jobs = 1;
      doc.result = check_paths({doc.path}, run_options, &resolver, &texts, {nullptr, &session_});
      RenderOptions render_options;
      if (const ConfigFile *config =
              resolver.config_for(fs::path(doc.path).parent_path().string())) {
        render_options.unsafe_fixes = config->unsafe_fixes.value_or(false);
        render_options.docs_url = config->docs_url.value_or("");
      }
      if (settings_.unsafe_fixes)
        render_options.unsafe_fixes = *settings_.unsafe_fixes;
      unsafe_fixes_ = render_options.unsafe_fixes;
      for (const Finding &f : doc.result.findings)
        diagnostics.push_back(diagnostic(f, render_options));
    } catch (const ConfigError &e) {
      doc.result = {};
      show_message(1, e.what());
    }
    json published = {{"uri", uri}, {"diagnostics", diagnostics}};
    if (doc.version.is_number_integer()) // the version these diagnostics were computed for
      published["version"] = doc.version;
    notify("textDocument/publishDiagnostics", published);
  }

  json diagnostic(const Finding &f, const RenderOptions &options) {
    json d = {{"range", range_of(*f.file, f.range)},
              {"severity", 2}, // Warning: a device mismatch under some placements
              {"code", f.code},
              {"source", "devlint"},
              {"message", f.message}};
    if (std::string url = rule_doc_url(f.code, options); !url.empty())
      d["codeDescription"] = {{"href", url}};
    json related = json::array();
    for (const RelatedLocation &r : f.origins) {
      // The origin's file: the finding's own, or a sibling the analysis read.
      const SourceFile *origin_file = nullptr;
      for (const auto &file : documents_for(f))
        if (file->display_path == r.path)
          origin_file = file.get();
      json range = origin_file ? range_of(*origin_file, r.range)
                               : json{{"start", {{"line", r.range.line - 1}, {"character", 0}}},
                                      {"end", {{"line", r.range.end_line - 1}, {"character", 0}}}};
      related.push_back(
          {{"location",
            {{"uri", path_to_uri(origin_file ? origin_file->path : r.path)}, {"range", range}}},
           {"message", r.message}});
    }
    if (!related.empty())
      d["relatedInformation"] = related;
    return d;
  }

  const std::vector<std::unique_ptr<SourceFile>> &documents_for(const Finding &f) {
    for (const auto &[uri, doc] : documents_)
      for (const auto &file : doc.result.files)
        if (file.get() == f.file)
          return doc.result.files;
    static const std::vector<std::unique_ptr<SourceFile>> none;
    return none;
  }

  bool unsafe_fixes_ = false;

  json code_actions(const json &params) {
    std::string uri = params.at("textDocument").at("uri");
    json actions = json::array();
    auto it = documents_.find(uri);
    if (it == documents_.end())
      return actions;
    uint32_t first = params.at("range").at("start").at("line").get<uint32_t>() + 1;
    uint32_t last = params.at("range").at("end").at("line").get<uint32_t>() + 1;
    RenderOptions options;
    options.unsafe_fixes = unsafe_fixes_;
    for (const Finding &f : it->second.result.findings) {
      if (f.range.end_line < first || f.range.line > last)
        continue;
      json diag = diagnostic(f, options);
      if (f.fix && f.fix->applicability != Applicability::DisplayOnly) {
        json edits = json::array();
        for (const TextEdit &e : f.fix->edits)
          edits.push_back(
              {{"range", range_of_offsets(*f.file, e.begin, e.end)}, {"newText", e.replacement}});
        bool safe = f.fix->applicability == Applicability::Safe;
        actions.push_back({{"title", f.code + ": " + f.fix->title + (safe ? "" : " (unsafe)")},
                           {"kind", "quickfix"},
                           {"diagnostics", {diag}},
                           {"isPreferred", safe},
                           {"edit", {{"changes", {{uri, edits}}}}}});
      }
      std::string why_not;
      uint32_t line = std::max(f.range.line, f.range.end_line);
      if (auto edit = noqa_edit(*f.file, line, {f.code}, why_not))
        actions.push_back({{"title", f.code + ": Disable for this line (`# noqa: " + f.code + "`)"},
                           {"kind", "quickfix"},
                           {"diagnostics", {diag}},
                           {"edit",
                            {{"changes",
                              {{uri,
                                {{{"range", range_of_offsets(*f.file, edit->begin, edit->end)},
                                  {"newText", edit->replacement}}}}}}}}});
    }
    return actions;
  }
};

} // namespace

int run_language_server(std::istream &in, std::ostream &out) { return Server(in, out).run(); }

} // namespace devlint
