// What a `devlint check` run says on stderr while it works (issue 27, item 9):
// - on a terminal (human output format, stdout and stderr both terminals), a one-line bar, files
//   done / total and elapsed time, once the run has taken more than 2 s
//   ($DEVLINT_PROGRESS_AFTER_MS, for tests) or has at least kMinimumFiles files; erased before the
//   report;
// - anywhere, CI logs included, a line when the shared precompiled LibTorch header is built
//   (about a minute, once) and one when it is ready: without them the first C++ run is a silent
//   minute. --quiet and --silent turn both off.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "frontend/cpp/cpp_frontend.h"

namespace devlint {

class RunProgress {
public:
  static constexpr size_t kMinimumFiles = 200;

  // `bar`: draw the bar (a terminal); `notes`: print the precompiled-header lines.
  RunProgress(bool bar, bool notes);
  ~RunProgress();
  RunProgress(const RunProgress &) = delete;
  RunProgress &operator=(const RunProgress &) = delete;

  // After each package (check_run's on_progress).
  void update(size_t done, size_t total);
  // The precompiled header's build (CppSettings::on_pch_build), from any thread.
  void pch_build(PchBuild event, const std::string &pch_path);
  // Erases the bar and stops drawing it: the report follows.
  void finish();

private:
  void draw_locked(std::chrono::steady_clock::time_point now);
  void erase_locked();
  void tick();

  const bool bar_, notes_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds bar_after_{2000};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool finished_ = false, shown_ = false;
  size_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point last_, pch_started_;
  std::thread ticker_; // redraws the bar while no package finishes (a long one, a PCH build)
};

} // namespace devlint
