// Running Clang on one file: its frontend action on a thread of its own, under crash recovery,
// with files given in memory over a confined view of the disk, and its errors collected.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>

#include "frontend/cpp/confined_file_system.h"

namespace devlint::cpp {

class Consumer final : public clang::ASTConsumer {
public:
  explicit Consumer(std::function<void(clang::ASTContext &)> done) : done_(std::move(done)) {}
  void HandleTranslationUnit(clang::ASTContext &ctx) override { done_(ctx); }

private:
  std::function<void(clang::ASTContext &)> done_;
};

class LowerAction final : public clang::ASTFrontendAction {
public:
  explicit LowerAction(std::function<void(clang::ASTContext &)> done) : done_(std::move(done)) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &,
                                                        llvm::StringRef) override {
    return std::make_unique<Consumer>(done_);
  }

private:
  std::function<void(clang::ASTContext &)> done_;
};

// Collects Clang's errors for one summary warning (warnings are not devlint's business).
class CollectingDiagnostics final : public clang::DiagnosticConsumer {
public:
  struct Error {
    std::string file;
    unsigned line = 0, column = 0;
    std::string message;
    bool missing_header = false;
    std::string header; // a header not found or not opened, as the #include spells it
  };
  std::vector<Error> errors;

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error)
      return;
    Error e;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    e.message = text.str().str();
    e.missing_header = info.getID() == clang::diag::err_pp_file_not_found;
    bool not_opened = info.getID() == clang::diag::err_cannot_open_file;
    if ((e.missing_header || not_opened) && info.getNumArgs() > 0 &&
        info.getArgKind(0) == clang::DiagnosticsEngine::ak_std_string)
      e.header = info.getArgStdStr(0);
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      clang::PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (p.isValid()) {
        e.file = p.getFilename();
        e.line = p.getLine();
        e.column = p.getColumn();
      }
    }
    errors.push_back(std::move(e));
  }
};

enum class ToolRun { Succeeded, Failed, Crashed };

// Runs Clang on a thread of its own with Clang's preferred stack size and an alternate signal
// stack, under crash recovery. After a crash the objects of that run are leaked, not destroyed:
// their state is unknown.
ToolRun run_tool(std::vector<std::string> args, std::unique_ptr<clang::FrontendAction> action,
                 const std::map<std::string, std::string> &files, clang::DiagnosticConsumer &diags,
                 llvm::IntrusiveRefCntPtr<ConfinedFileSystem> confined = nullptr);

} // namespace devlint::cpp
