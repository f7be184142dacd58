#include "frontend/cpp/clang_tool_run.h"

#include <csignal>
#include <mutex>

#include <clang/Basic/FileManager.h>
#include <clang/Basic/Stack.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/thread.h>

namespace devlint::cpp {
namespace {

// The texts given in memory over the disk; with `confined`, Clang reads the disk only there.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
overlay(const std::map<std::string, std::string> &files,
        llvm::IntrusiveRefCntPtr<ConfinedFileSystem> confined) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const auto &[path, text] : files)
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> disk = llvm::vfs::getRealFileSystem();
  if (confined)
    disk = confined;
  auto out = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(disk);
  out->pushOverlay(memory);
  return out;
}

// Clang 14 itself recurses without end on some malformed C++ (`clang++ -std=c++17 -fsyntax-only`
// crashes on fuzz/regressions/cpp_frontend/clang_parser_recursion.cpp too). LLVM's crash recovery
// turns such a crash into a failed run of this one file; its signal handler is moved onto an
// alternate stack, without which a stack overflow could not run it.
void enable_crash_recovery() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::CrashRecoveryContext::Enable();
    for (int signal : {SIGSEGV, SIGBUS}) {
      struct sigaction action;
      if (sigaction(signal, nullptr, &action) == 0) {
        action.sa_flags |= SA_ONSTACK;
        sigaction(signal, &action, nullptr);
      }
    }
  });
}

} // namespace

ToolRun run_tool(std::vector<std::string> args, std::unique_ptr<clang::FrontendAction> action,
                 const std::map<std::string, std::string> &files, clang::DiagnosticConsumer &diags,
                 llvm::IntrusiveRefCntPtr<ConfinedFileSystem> confined) {
  enable_crash_recovery();
  constexpr size_t kSignalStackSize = 1 << 16;
  std::unique_ptr<char[]> signal_stack(new char[kSignalStackSize]);
  bool succeeded = false;
  auto run = [&] {
    clang::noteBottomOfStack();
    auto *manager = new clang::FileManager(clang::FileSystemOptions(), overlay(files, confined));
    manager->Retain();
    auto *invocation =
        new clang::tooling::ToolInvocation(std::move(args), std::move(action), manager);
    invocation->setDiagnosticConsumer(&diags);
    succeeded = invocation->run();
    delete invocation;
    manager->Release();
  };
  bool recovered = true;
  auto on_thread = [&] {
    // A thread may already have one (AddressSanitizer gives every thread its own, and unmaps it
    // when the thread ends): only a thread without one gets ours.
    stack_t before{};
    bool own_stack = sigaltstack(nullptr, &before) == 0 && (before.ss_flags & SS_DISABLE);
    if (own_stack) {
      stack_t alternate{};
      alternate.ss_sp = signal_stack.get();
      alternate.ss_size = kSignalStackSize;
      sigaltstack(&alternate, nullptr);
    }
    llvm::CrashRecoveryContext recovery;
    recovered = recovery.RunSafely(run);
    // The thread leaves with the stack it came with, crash or not. LLVM puts a heap-allocated one
    // of its own on the thread that first registers its signal handlers (Clang does, while it
    // runs), and AddressSanitizer would unmap that one as its own when the thread ends.
    stack_t restore = before;
    if (own_stack) {
      restore = stack_t{};
      restore.ss_flags = SS_DISABLE;
    }
    sigaltstack(&restore, nullptr);
  };
  llvm::thread worker(llvm::Optional<unsigned>(clang::DesiredStackSize), on_thread);
  worker.join();
  if (!recovered)
    return ToolRun::Crashed;
  return succeeded ? ToolRun::Succeeded : ToolRun::Failed;
}

} // namespace devlint::cpp
