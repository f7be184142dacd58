#include "model/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace devlint {
size_t edit_distance(std::string_view a, std::string_view b, bool ignore_case) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = ignore_case ? std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                    std::tolower(static_cast<unsigned char>(b[j - 1]))
                              : a[i - 1] == b[j - 1];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string> &candidates) {
  constexpr size_t kLongestCompared = 64; // a typo, not a pasted paragraph
  if (word.empty() || word.size() > kLongestCompared)
    return "";
  size_t allowed = std::max<size_t>(1, word.size() / 3), best = allowed + 1;
  std::string match;
  for (const std::string &candidate : candidates) {
    if (candidate.size() > kLongestCompared)
      continue;
    size_t distance = edit_distance(word, candidate, /*ignore_case=*/true);
    if (distance < best) {
      best = distance;
      match = candidate;
    }
  }
  return match;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates) {
  std::string match = closest_match(word, candidates);
  return match.empty() ? "" : "; did you mean `" + match + "`?";
}

} // namespace devlint
