#include "fixes/unified_diff.h"

#include <algorithm>
#include <vector>

namespace devlint {
namespace {

// Lines with their terminators, so that `x` and `x\n` (a changed last line) differ.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

enum class LineOp : char { Keep = ' ', Remove = '-', Add = '+' };

struct ScriptLine {
  LineOp op;
  size_t before_index; // line index in `before` (Keep, Remove) or insertion point (Add)
  size_t after_index;  // line index in `after` (Keep, Add) or insertion point (Remove)
};

// Myers' O((N+M)D) shortest edit script. Fixes change few lines, so D is small; the snapshots of
// the frontier take O(D^2) memory.
std::vector<ScriptLine> edit_script(const std::vector<std::string_view> &a,
                                    const std::vector<std::string_view> &b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  // Common prefix and suffix need no search.
  long prefix = 0;
  while (prefix < n && prefix < m && a[prefix] == b[prefix])
    ++prefix;
  long suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix])
    ++suffix;
  const long an = n - prefix - suffix, bm = m - prefix - suffix;
  auto same = [&](long x, long y) { return a[prefix + x] == b[prefix + y]; };

  const long max = an + bm;
  std::vector<long> frontier(2 * max + 3, 0);
  const long offset = max + 1;
  std::vector<std::vector<long>> snapshots; // snapshots[d][k + d] = furthest x on diagonal k
  long found_d = -1;
  for (long d = 0; d <= max && found_d < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && frontier[offset + k - 1] < frontier[offset + k + 1]))
                   ? frontier[offset + k + 1]
                   : frontier[offset + k - 1] + 1;
      long y = x - k;
      while (x < an && y < bm && same(x, y))
        ++x, ++y;
      frontier[offset + k] = x;
      if (x >= an && y >= bm)
        found_d = d;
    }
    snapshots.emplace_back(frontier.begin() + offset - d, frontier.begin() + offset + d + 1);
  }

  // Walk back from the end, collecting the middle part in reverse.
  std::vector<ScriptLine> middle;
  long x = an, y = bm;
  for (long d = found_d; d > 0; --d) {
    const std::vector<long> &previous = snapshots[d - 1];
    auto at = [&](long k) { return previous[k + d - 1]; };
    long k = x - y;
    long previous_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    long previous_x = at(previous_k);
    long previous_y = previous_x - previous_k;
    while (x > previous_x && y > previous_y) {
      --x, --y;
      middle.push_back({LineOp::Keep, size_t(prefix + x), size_t(prefix + y)});
    }
    if (x == previous_x)
      middle.push_back({LineOp::Add, size_t(prefix + x), size_t(prefix + previous_y)});
    else
      middle.push_back({LineOp::Remove, size_t(prefix + previous_x), size_t(prefix + y)});
    x = previous_x;
    y = previous_y;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    middle.push_back({LineOp::Keep, size_t(prefix + x), size_t(prefix + y)});
  }

  std::vector<ScriptLine> script;
  script.reserve(static_cast<size_t>(n + m));
  for (long i = 0; i < prefix; ++i)
    script.push_back({LineOp::Keep, size_t(i), size_t(i)});
  script.insert(script.end(), middle.rbegin(), middle.rend());
  for (long i = 0; i < suffix; ++i)
    script.push_back({LineOp::Keep, size_t(n - suffix + i), size_t(m - suffix + i)});
  return script;
}

// `start,count` as unified diffs write it: an empty range names the line before it.
std::string hunk_range(size_t first_index, size_t count) {
  return std::to_string(count == 0 ? first_index : first_index + 1) + "," + std::to_string(count);
}

} // namespace

std::string unified_diff(std::string_view before, std::string_view after, const std::string &path,
                         int context) {
  if (before == after)
    return {};
  const std::vector<std::string_view> a = split_lines(before), b = split_lines(after);
  const std::vector<ScriptLine> script = edit_script(a, b);
  const size_t reach = static_cast<size_t>(std::max(context, 0));

  // GNU patch ends a file name at a tab; git writes one after names with spaces for it.
  const std::string name_end = path.find(' ') != std::string::npos ? "\t\n" : "\n";
  // A relative path gets git's a/ and b/ prefixes (patch -p1); an absolute one stands alone, as
  // `diff -u` writes it (patch -p0), never `a//abs`.
  const bool absolute = !path.empty() && path.front() == '/';
  const std::string old_name = absolute ? path : "a/" + path;
  const std::string new_name = absolute ? path : "b/" + path;
  std::string out = "--- " + old_name + name_end + "+++ " + new_name + name_end;
  size_t i = 0;
  while (i < script.size()) {
    if (script[i].op == LineOp::Keep) {
      ++i;
      continue;
    }
    // A hunk: this change, the changes within 2*context lines of it, and their context.
    size_t begin = i >= reach ? i - reach : 0;
    size_t end = i;
    for (size_t keeps = 0; end < script.size(); ++end) {
      keeps = script[end].op == LineOp::Keep ? keeps + 1 : 0;
      if (keeps > 2 * reach)
        break;
    }
    // Trim the trailing context to `context` lines.
    size_t last_change = end;
    while (last_change > begin && script[last_change - 1].op == LineOp::Keep)
      --last_change;
    end = std::min(script.size(), last_change + reach);

    size_t before_count = 0, after_count = 0;
    for (size_t j = begin; j < end; ++j) {
      before_count += script[j].op != LineOp::Add;
      after_count += script[j].op != LineOp::Remove;
    }
    out += "@@ -" + hunk_range(script[begin].before_index, before_count) + " +" +
           hunk_range(script[begin].after_index, after_count) + " @@\n";
    for (size_t j = begin; j < end; ++j) {
      std::string_view line =
          script[j].op == LineOp::Add ? b[script[j].after_index] : a[script[j].before_index];
      out += static_cast<char>(script[j].op);
      out.append(line.data(), line.size());
      if (line.empty() || line.back() != '\n')
        out += "\n\\ No newline at end of file\n";
    }
    i = end;
  }
  return out;
}

} // namespace devlint
