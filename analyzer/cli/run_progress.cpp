#include "cli/run_progress.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace devlint {

RunProgress::RunProgress(bool bar, bool notes)
    : bar_(bar), notes_(notes), start_(std::chrono::steady_clock::now()), last_(start_) {
  if (const char *after = std::getenv("DEVLINT_PROGRESS_AFTER_MS"); after && *after)
    bar_after_ = std::chrono::milliseconds(std::strtol(after, nullptr, 10));
  if (bar_)
    ticker_ = std::thread([this] { tick(); });
}

RunProgress::~RunProgress() { finish(); }

void RunProgress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!finished_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    auto now = std::chrono::steady_clock::now();
    if (!finished_ && now - start_ >= bar_after_)
      draw_locked(now);
  }
}

void RunProgress::draw_locked(std::chrono::steady_clock::time_point now) {
  shown_ = true;
  last_ = now;
  constexpr size_t kWidth = 30;
  size_t filled = total_ ? done_ * kWidth / total_ : 0;
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1fs",
                std::chrono::duration<double>(now - start_).count());
  std::cerr << "\r[" << std::string(filled, '=') << std::string(kWidth - filled, ' ') << "] ";
  if (total_) // known once the first package is done
    std::cerr << done_ << "/" << total_ << " files, ";
  std::cerr << elapsed << std::flush;
}

void RunProgress::erase_locked() {
  if (!shown_)
    return;
  shown_ = false;
  std::cerr << "\r\x1b[2K" << std::flush;
}

void RunProgress::update(size_t done, size_t total) {
  if (!bar_)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = done;
  total_ = total;
  auto now = std::chrono::steady_clock::now();
  if (finished_ || (total < kMinimumFiles && now - start_ < bar_after_))
    return;
  if (shown_ && done < total && now - last_ < std::chrono::milliseconds(100))
    return;
  draw_locked(now);
}

void RunProgress::pch_build(PchBuild event, const std::string &pch_path) {
  if (!notes_)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  bool redraw = shown_;
  erase_locked();
  auto now = std::chrono::steady_clock::now();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s",
                std::chrono::duration<double>(now - pch_started_).count());
  switch (event) {
  case PchBuild::Started:
    pch_started_ = now;
    std::cerr << "devlint: building the precompiled LibTorch header, once (about a minute; later "
                 "runs reuse it): "
              << pch_path << "\n";
    break;
  case PchBuild::Finished:
    std::cerr << "devlint: precompiled LibTorch header ready after " << seconds << "\n";
    break;
  case PchBuild::Failed:
    std::cerr << "devlint: building the precompiled LibTorch header failed after " << seconds
              << "; C++ files are parsed without it (slower)\n";
    break;
  }
  std::cerr << std::flush;
  if (redraw && !finished_)
    draw_locked(now);
}

void RunProgress::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_) {
      finished_ = true;
      erase_locked();
    }
  }
  wake_.notify_all();
  if (ticker_.joinable())
    ticker_.join();
}

} // namespace devlint
