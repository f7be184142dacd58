// A backtracking matcher over a parsed pattern, with a step budget.
#include "simulation/python_regex.h"

#include <cctype>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace devlint::simulation {

namespace {

constexpr size_t kMaxPatternLength = 1000;
constexpr size_t kMaxTextLength = 1000;
constexpr long kStepBudget = 200000;

struct Alternation;

struct Atom {
  enum class Kind { Char, Any, Class, Group, LookAhead, NegativeLookAhead, Start, End };
  Kind kind = Kind::Char;
  char c = 0;
  std::vector<std::pair<unsigned char, unsigned char>> ranges; // Class
  bool negated = false;                                        // Class
  std::shared_ptr<Alternation> group;                          // Group, lookaheads
};

struct Piece {
  Atom atom;
  size_t min = 1, max = 1;
  bool greedy = true;
};

struct Alternation {
  std::vector<std::vector<Piece>> branches;
};

constexpr size_t kUnbounded = static_cast<size_t>(-1);

class Parser {
public:
  explicit Parser(std::string_view p) : p_(p) {}

  std::shared_ptr<Alternation> parse() {
    auto a = alternation();
    if (!a || at_ < p_.size())
      return nullptr;
    return a;
  }

private:
  std::string_view p_;
  size_t at_ = 0;
  int depth_ = 0;

  bool more() const { return at_ < p_.size(); }

  std::shared_ptr<Alternation> alternation() {
    if (++depth_ > 32)
      return nullptr;
    auto a = std::make_shared<Alternation>();
    a->branches.emplace_back();
    while (more() && p_[at_] != ')') {
      if (p_[at_] == '|') {
        ++at_;
        a->branches.emplace_back();
        continue;
      }
      std::optional<Piece> piece = parse_piece();
      if (!piece)
        return nullptr;
      a->branches.back().push_back(std::move(*piece));
    }
    --depth_;
    return a;
  }

  static void add_escape_class(char e, Atom &atom) {
    auto add = [&](unsigned char lo, unsigned char hi) { atom.ranges.emplace_back(lo, hi); };
    if (e == 'd' || e == 'D') {
      add('0', '9');
    } else if (e == 'w' || e == 'W') {
      add('0', '9');
      add('a', 'z');
      add('A', 'Z');
      add('_', '_');
    } else {
      for (char s : std::string(" \t\n\r\f\v"))
        add(static_cast<unsigned char>(s), static_cast<unsigned char>(s));
    }
  }

  // \d \w \s (and their negations) as a class; an escaped punctuation mark as itself.
  std::optional<Atom> escape() {
    if (!more())
      return std::nullopt;
    char e = p_[at_++];
    Atom atom;
    if (std::string_view("dDwWsS").find(e) != std::string_view::npos) {
      atom.kind = Atom::Kind::Class;
      add_escape_class(e, atom);
      atom.negated = std::isupper(static_cast<unsigned char>(e)) != 0;
      return atom;
    }
    if (std::isalnum(static_cast<unsigned char>(e)))
      return std::nullopt; // \b, \1, \A ...: not supported
    atom.c = e;
    return atom;
  }

  std::optional<Atom> char_class() {
    Atom atom;
    atom.kind = Atom::Kind::Class;
    if (more() && p_[at_] == '^') {
      atom.negated = true;
      ++at_;
    }
    bool first = true;
    while (more() && (p_[at_] != ']' || first)) {
      first = false;
      unsigned char lo = static_cast<unsigned char>(p_[at_++]);
      if (lo == '\\') {
        if (!more())
          return std::nullopt;
        char e = p_[at_++];
        if (std::string_view("dwsDWS").find(e) != std::string_view::npos) {
          if (std::isupper(static_cast<unsigned char>(e)))
            return std::nullopt;
          add_escape_class(e, atom);
          continue;
        }
        if (std::isalnum(static_cast<unsigned char>(e)))
          return std::nullopt;
        lo = static_cast<unsigned char>(e);
      }
      unsigned char hi = lo;
      if (at_ + 1 < p_.size() && p_[at_] == '-' && p_[at_ + 1] != ']') {
        hi = static_cast<unsigned char>(p_[at_ + 1]);
        at_ += 2;
        if (hi == '\\' || hi < lo)
          return std::nullopt;
      }
      atom.ranges.emplace_back(lo, hi);
    }
    if (!more())
      return std::nullopt;
    ++at_; // ]
    return atom;
  }

  std::optional<Atom> parse_atom() {
    char c = p_[at_++];
    Atom atom;
    switch (c) {
    case '.':
      atom.kind = Atom::Kind::Any;
      return atom;
    case '^':
      atom.kind = Atom::Kind::Start;
      return atom;
    case '$':
      atom.kind = Atom::Kind::End;
      return atom;
    case '\\':
      return escape();
    case '[':
      return char_class();
    case '(': {
      atom.kind = Atom::Kind::Group;
      if (p_.substr(at_, 2) == "?:") {
        at_ += 2;
      } else if (p_.substr(at_, 2) == "?=") {
        atom.kind = Atom::Kind::LookAhead;
        at_ += 2;
      } else if (p_.substr(at_, 2) == "?!") {
        atom.kind = Atom::Kind::NegativeLookAhead;
        at_ += 2;
      } else if (more() && p_[at_] == '?') {
        return std::nullopt; // named groups, flags, lookbehind: not supported
      }
      atom.group = alternation();
      if (!atom.group || !more() || p_[at_] != ')')
        return std::nullopt;
      ++at_;
      return atom;
    }
    case ')':
    case '*':
    case '+':
    case '?':
    case '{':
      return std::nullopt;
    default:
      atom.c = c;
      return atom;
    }
  }

  std::optional<size_t> number() {
    size_t start = at_, n = 0;
    while (more() && std::isdigit(static_cast<unsigned char>(p_[at_])) && at_ - start < 6)
      n = n * 10 + static_cast<size_t>(p_[at_++] - '0');
    return at_ > start ? std::optional<size_t>(n) : std::nullopt;
  }

  std::optional<Piece> parse_piece() {
    std::optional<Atom> atom = parse_atom();
    if (!atom)
      return std::nullopt;
    Piece piece;
    piece.atom = std::move(*atom);
    if (!more())
      return piece;
    char q = p_[at_];
    if (q == '*' || q == '+' || q == '?') {
      ++at_;
      piece.min = q == '+' ? 1 : 0;
      piece.max = q == '?' ? 1 : kUnbounded;
    } else if (q == '{') {
      ++at_;
      std::optional<size_t> lo = number();
      if (!lo)
        return std::nullopt;
      std::optional<size_t> hi = lo;
      if (more() && p_[at_] == ',') {
        ++at_;
        hi = number();
        if (!hi)
          hi = kUnbounded;
      }
      if (!more() || p_[at_] != '}' || *hi < *lo)
        return std::nullopt;
      ++at_;
      piece.min = *lo;
      piece.max = *hi;
    } else {
      return piece;
    }
    if (more() && p_[at_] == '?') {
      piece.greedy = false;
      ++at_;
    }
    if (piece.atom.kind == Atom::Kind::Start || piece.atom.kind == Atom::Kind::End)
      return std::nullopt;
    return piece;
  }
};

class Matcher {
public:
  explicit Matcher(std::string_view text) : text_(text) {}
  bool exhausted() const { return steps_ > kStepBudget; }

  using Next = std::function<bool(size_t)>;

  bool alternation(const Alternation &a, size_t pos, const Next &next) {
    for (const auto &branch : a.branches)
      if (sequence(branch, 0, pos, next))
        return true;
    return false;
  }

private:
  std::string_view text_;
  long steps_ = 0;

  bool sequence(const std::vector<Piece> &seq, size_t i, size_t pos, const Next &next) {
    if (++steps_ > kStepBudget)
      return false;
    if (i == seq.size())
      return next(pos);
    return repeat(seq, i, 0, pos, next);
  }

  // Piece `i` matched `count` times so far, ending at `pos`.
  bool repeat(const std::vector<Piece> &seq, size_t i, size_t count, size_t pos, const Next &next) {
    if (++steps_ > kStepBudget)
      return false;
    const Piece &piece = seq[i];
    auto more = [&]() {
      return count < piece.max && atom(piece.atom, pos, [&](size_t after) {
               // A repetition that matched nothing ends the loop (as Python's does).
               return (after != pos || count < piece.min) && repeat(seq, i, count + 1, after, next);
             });
    };
    auto done = [&]() { return count >= piece.min && sequence(seq, i + 1, pos, next); };
    return piece.greedy ? (more() || done()) : (done() || more());
  }

  bool atom(const Atom &a, size_t pos, const Next &next) {
    if (++steps_ > kStepBudget)
      return false;
    switch (a.kind) {
    case Atom::Kind::Char:
      return pos < text_.size() && text_[pos] == a.c && next(pos + 1);
    case Atom::Kind::Any:
      return pos < text_.size() && text_[pos] != '\n' && next(pos + 1);
    case Atom::Kind::Class: {
      if (pos >= text_.size())
        return false;
      auto c = static_cast<unsigned char>(text_[pos]);
      bool in = false;
      for (const auto &[lo, hi] : a.ranges)
        in = in || (c >= lo && c <= hi);
      return in != a.negated && next(pos + 1);
    }
    case Atom::Kind::Start:
      return pos == 0 && next(pos);
    case Atom::Kind::End:
      return (pos == text_.size() || (pos + 1 == text_.size() && text_[pos] == '\n')) && next(pos);
    case Atom::Kind::Group:
      return alternation(*a.group, pos, next);
    case Atom::Kind::LookAhead:
    case Atom::Kind::NegativeLookAhead: {
      bool found = alternation(*a.group, pos, [](size_t) { return true; });
      if (exhausted())
        return false;
      return found == (a.kind == Atom::Kind::LookAhead) && next(pos);
    }
    }
    return false;
  }
};

} // namespace

std::optional<bool> python_regex_search(std::string_view pattern, std::string_view text) {
  if (pattern.size() > kMaxPatternLength || text.size() > kMaxTextLength)
    return std::nullopt;
  std::shared_ptr<Alternation> parsed = Parser(pattern).parse();
  if (!parsed)
    return std::nullopt;
  Matcher matcher(text);
  for (size_t start = 0; start <= text.size(); ++start) {
    if (matcher.alternation(*parsed, start, [](size_t) { return true; }))
      return true;
    if (matcher.exhausted())
      return std::nullopt;
  }
  return false;
}

} // namespace devlint::simulation
