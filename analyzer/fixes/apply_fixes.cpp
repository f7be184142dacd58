#include "fixes/apply_fixes.h"

#include <algorithm>

namespace devlint {

AppliedFixes apply_fixes(const std::string &text, const std::vector<const Finding *> &findings,
                         const std::function<bool(const Finding &)> &allowed) {
  struct Candidate {
    uint32_t begin, end;
    const Fix *fix;
    const Finding *finding;
  };
  std::vector<Candidate> candidates;
  for (const Finding *f : findings) {
    if (!f->fix || f->fix->edits.empty() || !allowed(*f))
      continue;
    uint32_t begin = UINT32_MAX, end = 0;
    for (const TextEdit &e : f->fix->edits) {
      begin = std::min(begin, e.begin);
      end = std::max(end, e.end);
    }
    if (end > text.size())
      continue;
    candidates.push_back({begin, end, &*f->fix, f});
  }
  // Deterministic: by position, then by the edit text.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate &a, const Candidate &b) {
                     if (std::tie(a.begin, a.end) != std::tie(b.begin, b.end))
                       return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
                     return a.fix->edits.front().replacement < b.fix->edits.front().replacement;
                   });
  AppliedFixes out;
  std::vector<TextEdit> edits;
  uint32_t last_end = 0;
  bool any = false;
  const Fix *previous = nullptr;
  for (const Candidate &c : candidates) {
    // Two findings may share one fix (one fresh tensor flowing into two sites): apply it once.
    if (previous && std::equal(c.fix->edits.begin(), c.fix->edits.end(), previous->edits.begin(),
                               previous->edits.end(), [](const TextEdit &a, const TextEdit &b) {
                                 return a.begin == b.begin && a.end == b.end &&
                                        a.replacement == b.replacement;
                               })) {
      ++out.applied;
      out.applied_findings.push_back(c.finding);
      continue;
    }
    // Touching or overlapping fixes go to the next pass: their edits may interact.
    if (any && c.begin <= last_end && !(c.begin == last_end && c.begin == c.end)) {
      ++out.skipped;
      continue;
    }
    for (const TextEdit &e : c.fix->edits)
      edits.push_back(e);
    last_end = std::max(last_end, c.end);
    any = true;
    previous = c.fix;
    ++out.applied;
    out.applied_findings.push_back(c.finding);
  }
  std::stable_sort(edits.begin(), edits.end(),
                   [](const TextEdit &a, const TextEdit &b) { return a.begin < b.begin; });
  out.text.reserve(text.size() + 64 * edits.size());
  uint32_t cursor = 0;
  for (const TextEdit &e : edits) {
    if (e.begin < cursor)
      continue; // an edit inside an applied one from the same fix; cannot happen for our fixes
    out.text.append(text, cursor, e.begin - cursor);
    out.text += e.replacement;
    cursor = e.end;
    out.edits.push_back(e);
  }
  out.text.append(text, cursor, std::string::npos);
  return out;
}

} // namespace devlint
