#include "fixes/device_move_fix.h"

#include <algorithm>

#include "fixes/line_length.h"
#include "model/torch_catalog.h"

namespace devlint {
namespace {

bool is_plain_chain(const Expr *e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::Name)
    return true;
  if (e->kind == ExprKind::Attribute)
    return is_plain_chain(e->operands[0]);
  return false;
}

// Tensor methods that keep the device: a chain of them still names the same device.
bool keeps_device(std::string_view method) {
  static const char *const methods[] = {
      "view",      "reshape", "contiguous",  "float",     "half",      "bfloat16",
      "double",    "long",    "int",         "bool",      "transpose", "permute",
      "unsqueeze", "squeeze", "flatten",     "expand",    "expand_as", "clone",
      "detach",    "t",       "repeat",      "narrow",    "select",    "chunk",
      "split",     "view_as", "reshape_as",  "mean",      "sum",       "softmax",
      "exp",       "abs",     "masked_fill", "unflatten", "movedim",   "repeat_interleave"};
  for (const char *m : methods)
    if (method == m)
      return true;
  return false;
}

// `torch.ones(...)`, `F.pad(...)`: a call of a module's function, not a tensor method chain.
bool is_module_function(const Expr *callee) {
  const Expr *root = callee;
  while (root && root->kind == ExprKind::Attribute)
    root = root->operands[0];
  return root && root != callee && root->kind == ExprKind::Name &&
         (root->text == "torch" || root->text == "F" || root->text == "nn" ||
          root->text == "functional" || root->text == "np" || root->text == "numpy" ||
          root->text == "math");
}

// Arguments of `.to(...)` that name a device: a string, `x.device`, `torch.device(...)`.
bool names_device(const Expr *e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::String || (e->kind == ExprKind::Attribute && e->text == "device"))
    return true;
  return e->kind == ExprKind::Call && dotted_name(e->operands[0]) == "torch.device";
}

// Arguments of `.to(...)` that name a dtype: `torch.float16`, `x.dtype`, `target_dtype`.
bool names_dtype(const Expr *e) {
  if (!e || (e->kind != ExprKind::Attribute && e->kind != ExprKind::Name))
    return false;
  std::string_view name = e->text;
  if (name.size() >= 5 && name.substr(name.size() - 5) == "dtype")
    return true;
  return e->kind == ExprKind::Attribute && dotted_name(e).rfind("torch.", 0) == 0;
}

bool is_number(const Expr *e) {
  return e && (e->kind == ExprKind::Number ||
               (e->kind == ExprKind::UnaryOp && e->operands[0]->kind == ExprKind::Number));
}

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether the operand sits directly in parentheses of its own in the source, `a * (1 - w)`, as
// opposed to the argument list of a call, `f(1 - w)`: the move can reuse them.
bool parenthesized(const SourceFile &file, const Expr *operand) {
  uint32_t open = operand->range.begin;
  while (open > 0 && (file.text[open - 1] == ' ' || file.text[open - 1] == '\t'))
    --open;
  uint32_t close = operand->range.end;
  while (close < file.text.size() && (file.text[close] == ' ' || file.text[close] == '\t'))
    ++close;
  if (open == 0 || file.text[open - 1] != '(' || close >= file.text.size() ||
      file.text[close] != ')')
    return false;
  uint32_t before = open - 1;
  while (before > 0 && (file.text[before - 1] == ' ' || file.text[before - 1] == '\t'))
    --before;
  if (before == 0)
    return true;
  char c = file.text[before - 1];
  return !identifier_char(c) && c != ')' && c != ']';
}

void collect_targets(const Expr *target, std::string_view name, bool &found) {
  if (!target)
    return;
  if (target->kind == ExprKind::Name && target->text == name)
    found = true;
  if (target->kind == ExprKind::Tuple || target->kind == ExprKind::Starred)
    for (const Expr *element : target->operands)
      collect_targets(element, name, found);
}

struct Assignment {
  SourceRange range;
  std::vector<SourceRange> loops; // loops around the assignment
};

void collect_assignments(const std::vector<Stmt *> &body, std::string_view name,
                         std::vector<SourceRange> &loops, std::vector<Assignment> &out) {
  for (const Stmt *stmt : body) {
    if (!stmt)
      continue;
    bool assigns = false;
    if (stmt->kind == StmtKind::Assign || stmt->kind == StmtKind::AugAssign ||
        stmt->kind == StmtKind::For || stmt->kind == StmtKind::With)
      for (const Expr *target : stmt->targets)
        collect_targets(target, name, assigns);
    if (stmt->kind == StmtKind::FunctionDef || stmt->kind == StmtKind::ClassDef) {
      // A nested definition binds its own name in this scope; its body has its own scope.
      std::string_view defined = stmt->function    ? stmt->function->name
                                 : stmt->class_def ? stmt->class_def->name
                                                   : std::string_view{};
      if (defined == name)
        out.push_back({stmt->range, loops});
      continue;
    }
    if (assigns)
      out.push_back({stmt->range, loops});
    bool loop = stmt->kind == StmtKind::For || stmt->kind == StmtKind::While;
    if (loop)
      loops.push_back(stmt->range);
    collect_assignments(stmt->body, name, loops, out);
    if (loop)
      loops.pop_back();
    collect_assignments(stmt->orelse, name, loops, out);
    for (const auto &handler : stmt->handlers)
      collect_assignments(handler, name, loops, out);
    collect_assignments(stmt->finalbody, name, loops, out);
  }
}

std::vector<Assignment> assignments(const FunctionDef &function, std::string_view name) {
  std::vector<SourceRange> loops;
  std::vector<Assignment> out;
  collect_assignments(function.body, name, loops, out);
  return out;
}

bool is_parameter(const FunctionDef &function, std::string_view name) {
  for (const Parameter &p : function.parameters)
    if (p.name == name && !p.variadic)
      return true;
  return false;
}

// `torch.ones(..., device=x.device)`: the keyword names the device.
std::string device_keyword_anchor(const SourceFile &file, const Expr *call) {
  const Keyword *device = call->keyword("device");
  if (device && device->value->kind == ExprKind::Attribute && device->value->text == "device" &&
      is_plain_chain(device->value->operands[0]))
    return std::string(file.slice(device->value->operands[0]->range));
  return {};
}

const Expr *find_in_expr(const Expr *e, const SourceRange &range) {
  if (!e || e->range.begin > range.begin || e->range.end < range.end)
    return nullptr;
  if (e->range.begin == range.begin && e->range.end == range.end && e->kind == ExprKind::Call)
    return e;
  for (const Expr *operand : e->operands)
    if (const Expr *found = find_in_expr(operand, range))
      return found;
  for (const Keyword &k : e->keywords)
    if (const Expr *found = find_in_expr(k.value, range))
      return found;
  if (e->range.begin == range.begin && e->range.end == range.end)
    return e;
  return nullptr;
}

const Expr *find_in_body(const std::vector<Stmt *> &body, const SourceRange &range) {
  for (const Stmt *stmt : body) {
    if (!stmt || stmt->range.begin > range.begin || stmt->range.end < range.end ||
        stmt->kind == StmtKind::FunctionDef || stmt->kind == StmtKind::ClassDef)
      continue;
    for (const std::vector<Expr *> *list : {&stmt->targets, &stmt->items})
      for (const Expr *e : *list)
        if (const Expr *found = find_in_expr(e, range))
          return found;
    if (const Expr *found = find_in_expr(stmt->value, range))
      return found;
    for (const std::vector<Stmt *> *nested : {&stmt->body, &stmt->orelse, &stmt->finalbody})
      if (const Expr *found = find_in_body(*nested, range))
        return found;
    for (const auto &handler : stmt->handlers)
      if (const Expr *found = find_in_body(handler, range))
        return found;
  }
  return nullptr;
}

} // namespace

const Expr *find_expr(const FunctionDef &function, const SourceRange &range) {
  return find_in_body(function.body, range);
}

bool final_binding_at(const FunctionDef &function, std::string_view name, uint32_t position) {
  std::vector<Assignment> found = assignments(function, name);
  if (found.empty() && !is_parameter(function, name))
    return false;
  for (const Assignment &a : found)
    if (a.range.end > position)
      return false;
  return true;
}

bool parameter_binding_at(const FunctionDef &function, std::string_view name, uint32_t position) {
  if (!is_parameter(function, name))
    return false;
  for (const Assignment &a : assignments(function, name)) {
    if (a.range.begin < position)
      return false;
    for (const SourceRange &loop : a.loops)
      if (loop.begin <= position && position < loop.end)
        return false;
  }
  return true;
}

std::string device_anchor_text(const SourceFile &file, const Expr *anchor,
                               const std::unordered_set<const Expr *> *tensor_subscripts) {
  for (int depth = 0; anchor && depth < 32; ++depth) {
    if (is_plain_chain(anchor))
      return std::string(file.slice(anchor->range));
    if (anchor->kind == ExprKind::Subscript && tensor_subscripts &&
        tensor_subscripts->count(anchor)) {
      // `image[image_mask]` reads a tensor on `image`'s device; writing the subscript again in
      // the anchor would index once more by an index the fix leaves where it is.
      anchor = anchor->operands[0];
      continue;
    }
    if (anchor->kind == ExprKind::Subscript) {
      // `past_key_value[0]` may index a tuple: keep the element (`past_key_value[0].device`).
      // Slicing (`x[..., :-1]`, `x[i, :k]`) only happens on tensors: the base names the device.
      bool slicing = anchor->operands.size() > 2;
      for (size_t i = 1; i < anchor->operands.size(); ++i)
        slicing |= anchor->operands[i]->kind == ExprKind::Slice ||
                   anchor->operands[i]->kind == ExprKind::Other;
      if (!slicing) {
        const Expr *index = anchor->operands.size() == 2 ? anchor->operands[1] : nullptr;
        bool simple_index = index && (index->kind == ExprKind::Number ||
                                      index->kind == ExprKind::Name || is_plain_chain(index));
        if (simple_index && is_plain_chain(anchor->operands[0]))
          return std::string(file.slice(anchor->range));
        return {};
      }
      anchor = anchor->operands[0];
      continue;
    }
    if (anchor->kind == ExprKind::Call) {
      std::string from_keyword = device_keyword_anchor(file, anchor);
      if (!from_keyword.empty())
        return from_keyword;
      // `torch.softmax(x)` is a module's function, not a method of a tensor named `torch`.
      if (is_module_function(anchor->operands[0]))
        return {};
    }
    if (anchor->kind == ExprKind::Call && anchor->operands[0]->kind == ExprKind::Attribute &&
        keeps_device(anchor->operands[0]->text)) {
      const Expr *receiver = anchor->operands[0]->operands[0];
      // `self.mlp(x)` is a submodule call, not a tensor method chain.
      if (is_name(receiver, "self") ||
          (receiver->kind == ExprKind::Attribute && is_name(receiver->operands[0], "self") &&
           anchor->operands[0]->text != "view"))
        return {};
      anchor = receiver;
      continue;
    }
    return {};
  }
  return {};
}

std::string device_of(const SourceFile &file, const std::string &anchor) {
  return anchor + (file.language == Language::Cpp ? ".device()" : ".device");
}

TextEdit move_to_device_edit(const SourceFile &file, const Expr *operand,
                             const std::string &anchor) {
  return move_to_device_text_edit(file, operand, device_of(file, anchor));
}

std::optional<std::string> unmovable_operand(const Expr *operand) {
  switch (operand->kind) {
  case ExprKind::Name:
  case ExprKind::Attribute:
  case ExprKind::Subscript:
  case ExprKind::Call:
  case ExprKind::UnaryOp:
  case ExprKind::Compare:
  case ExprKind::BoolOp:
  case ExprKind::Conditional:
    return std::nullopt;
  case ExprKind::BinaryOp:
    // `1 - w` moves `w`; otherwise the whole parenthesized result.
    if (is_number(operand->operands[0]) && !is_number(operand->operands[1]))
      return unmovable_operand(operand->operands[1]);
    if (is_number(operand->operands[1]) && !is_number(operand->operands[0]))
      return unmovable_operand(operand->operands[0]);
    return std::nullopt;
  case ExprKind::Starred:
    return std::string("is unpacked with `*` into its place, and a starred element cannot be "
                       "moved as one value");
  case ExprKind::Tuple:
  case ExprKind::Dict:
  case ExprKind::Comprehension:
    return std::string("is a container, which has no `.to()`");
  case ExprKind::Slice:
  case ExprKind::Lambda:
  case ExprKind::Number:
  case ExprKind::String:
  case ExprKind::NoneLiteral:
  case ExprKind::Bool:
  case ExprKind::Other:
    break;
  }
  return std::string("is not an expression a `.to()` can follow");
}

TextEdit move_to_device_text_edit(const SourceFile &file, const Expr *operand,
                                  const std::string &target) {
  // `0.5 * x`, `1 - w`: the number goes anywhere, move the tensor.
  if (operand->kind == ExprKind::BinaryOp && operand->text != "@") {
    if (is_number(operand->operands[0]) && !is_number(operand->operands[1]))
      return move_to_device_text_edit(file, operand->operands[1], target);
    if (is_number(operand->operands[1]) && !is_number(operand->operands[0]))
      return move_to_device_text_edit(file, operand->operands[0], target);
  }
  if (operand->kind == ExprKind::Call && operand->operands[0]->kind == ExprKind::Attribute &&
      !is_module_function(operand->operands[0])) {
    const Expr *method = operand->operands[0];
    const Expr *receiver = method->operands[0];
    std::string_view name = method->text;
    // `x.cuda()`, `x.cpu()`, `x.cuda(1)` -> `x.to(a.device)`.
    if ((name == "cuda" || name == "cpu") && operand->keywords.empty())
      return TextEdit{receiver->range.end, operand->range.end, ".to(" + target + ")"};
    if (name == "to" && operand->operands.size() >= 2) {
      const Expr *first = operand->operands[1];
      // `x.to("cuda:0")`, `x.to(y.device, dtype)` -> the device argument becomes a.device.
      if (names_device(first))
        return TextEdit{first->range.begin, first->range.end, target};
      // `x.to(torch.float16)` -> `x.to(a.device, torch.float16)`.
      if (names_dtype(first) && !operand->keyword("device"))
        return TextEdit{first->range.begin, first->range.begin, target + ", "};
    }
    if (name == "to") {
      if (const Keyword *device = operand->keyword("device"))
        return TextEdit{device->value->range.begin, device->value->range.end, target};
      // `x.to(dtype=torch.float16)` -> `x.to(a.device, dtype=torch.float16)`.
      if (operand->operands.size() == 1 && operand->keyword("dtype")) {
        uint32_t open = method->range.end;
        while (open < operand->range.end && file.text[open] != '(')
          ++open;
        if (open < operand->range.end)
          return TextEdit{open + 1, open + 1, target + ", "};
      }
    }
  }
  std::string text(file.slice(operand->range));
  bool atomic = operand->kind == ExprKind::Name || operand->kind == ExprKind::Attribute ||
                operand->kind == ExprKind::Call || operand->kind == ExprKind::Subscript;
  if (!atomic && parenthesized(file, operand)) {
    // `a * (1 - w)` -> `a * (1 - w).to(x.device)`: reuse the source's parentheses.
    uint32_t close = operand->range.end;
    while (file.text[close] != ')')
      ++close;
    return TextEdit{close + 1, close + 1, ".to(" + target + ")"};
  }
  if (!atomic)
    text = "(" + text + ")";
  return TextEdit{operand->range.begin, operand->range.end, text + ".to(" + target + ")"};
}

std::optional<TextEdit> create_on_device_edit(const SourceFile &file, const Expr *constructor,
                                              const std::string &anchor) {
  bool cpp = file.language == Language::Cpp;
  // Memory that from_blob wraps is where it is: only a move after it changes the device.
  if (cpp && constructor && constructor->text == "from_blob")
    return std::nullopt;
  return create_on_device_text_edit(file, constructor, device_of(file, anchor));
}

std::optional<TextEdit> create_on_device_text_edit(const SourceFile &file, const Expr *constructor,
                                                   const std::string &device_text) {
  if (!constructor || constructor->kind != ExprKind::Call || constructor->keyword("device"))
    return std::nullopt;
  bool cpp = file.language == Language::Cpp;
  if (cpp && constructor->text == "from_blob")
    return TextEdit{constructor->range.end, constructor->range.end, ".to(" + device_text + ")"};
  if (cpp)
    if (const Keyword *options = constructor->keyword("options")) {
      // The options argument carries the dtype: give it the device as well.
      std::string_view written = file.slice(options->value->range);
      std::string device = ".device(" + device_text + ")";
      if (written.rfind("torch::TensorOptions()", 0) == 0 ||
          written.rfind("at::TensorOptions()", 0) == 0 || written.rfind("torch::dtype(", 0) == 0)
        return TextEdit{options->value->range.end, options->value->range.end, device};
      return TextEdit{options->value->range.begin, options->value->range.end,
                      "torch::TensorOptions(" + std::string(written) + ")" + device};
    }
  std::string_view text = file.slice(constructor->range);
  if (text.empty() || text.back() != ')')
    return std::nullopt;
  // `torch.from_numpy(a, device=...)` is a TypeError: such a constructor is moved instead.
  if (torch_catalog::constructor_lacks_device_parameter(callee_leaf(constructor)) ||
      (!constructor->operands.empty() &&
       torch_catalog::is_distribution_class(file.slice(constructor->operands[0]->range))))
    return std::nullopt;
  // Insert before the closing parenthesis, after any trailing comma and whitespace.
  uint32_t close = constructor->range.end - 1;
  uint32_t cursor = close;
  while (cursor > constructor->range.begin &&
         (file.text[cursor - 1] == ' ' || file.text[cursor - 1] == '\n' ||
          file.text[cursor - 1] == '\t' || file.text[cursor - 1] == '\r'))
    --cursor;
  bool has_args = constructor->operands.size() > 1 || !constructor->keywords.empty();
  bool trailing_comma = cursor > constructor->range.begin && file.text[cursor - 1] == ',';
  std::string insert = has_args && !trailing_comma ? ", " : (trailing_comma ? " " : "");
  insert += cpp ? "torch::TensorOptions().device(" + device_text + ")" : "device=" + device_text;
  return TextEdit{cursor, cursor, insert};
}

} // namespace devlint

namespace devlint {
namespace {

// Where `target` sits in `e`: found, and whether reaching it is certain each time `e` runs (not
// inside a comprehension, lambda, conditional expression or a short-circuit operand).
bool locate(const Expr *e, const Expr *target, bool certain, bool &found_certain) {
  if (!e)
    return false;
  if (e == target) {
    found_certain = certain;
    return true;
  }
  bool inner_certain = certain && e->kind != ExprKind::Comprehension && e->kind != ExprKind::Lambda;
  for (size_t i = 0; i < e->operands.size(); ++i) {
    bool operand_certain = inner_certain;
    if (e->kind == ExprKind::Conditional && i != 1)
      operand_certain = false; // `a if c else b`: only `c` always runs
    if (e->kind == ExprKind::BoolOp && e->text != "not" && i > 0)
      operand_certain = false;
    if (locate(e->operands[i], target, operand_certain, found_certain))
      return true;
  }
  for (const Keyword &k : e->keywords)
    if (locate(k.value, target, inner_certain, found_certain))
      return true;
  return false;
}

// The local name whose move moves `operand`: `labels` for `labels`, `labels.view(-1)`,
// `labels[:, 1:]`.
const Expr *moved_base(const Expr *operand) {
  for (int depth = 0; operand && depth < 32; ++depth) {
    if (operand->kind == ExprKind::Name)
      return is_name(operand, "self") ? nullptr : operand;
    if (operand->kind == ExprKind::Subscript) {
      operand = operand->operands[0];
      continue;
    }
    if (operand->kind == ExprKind::Call && operand->operands[0]->kind == ExprKind::Attribute &&
        keeps_device(operand->operands[0]->text) && !is_module_function(operand->operands[0])) {
      operand = operand->operands[0]->operands[0];
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

// Reads of `name` in `e`, outside the expressions in `moved` (whose reads the move is for).
size_t reads_outside(const Expr *e, std::string_view name, const std::vector<const Expr *> &moved) {
  if (!e || std::find(moved.begin(), moved.end(), e) != moved.end())
    return 0;
  size_t reads = e->kind == ExprKind::Name && e->text == name ? 1 : 0;
  for (const Expr *operand : e->operands)
    reads += reads_outside(operand, name, moved);
  for (const Keyword &k : e->keywords)
    reads += reads_outside(k.value, name, moved);
  return reads;
}

// The same in an assignment's target: a name or a tuple of names is bound there, not read.
size_t target_reads_outside(const Expr *target, std::string_view name,
                            const std::vector<const Expr *> &moved) {
  if (!target || target->kind == ExprKind::Name)
    return 0;
  if (target->kind != ExprKind::Tuple && target->kind != ExprKind::Starred)
    return reads_outside(target, name, moved);
  size_t reads = 0;
  for (const Expr *element : target->operands)
    reads += target_reads_outside(element, name, moved);
  return reads;
}

} // namespace

bool fits_line_limit(const SourceFile &file, const std::vector<TextEdit> &edits, size_t limit) {
  if (edits.empty())
    return true;
  std::vector<TextEdit> sorted = edits;
  std::sort(sorted.begin(), sorted.end(),
            [](const TextEdit &a, const TextEdit &b) { return a.begin < b.begin; });
  uint32_t from = sorted.front().begin;
  while (from > 0 && file.text[from - 1] != '\n')
    --from;
  uint32_t to = sorted.back().end;
  while (to < file.text.size() && file.text[to] != '\n')
    ++to;
  std::string region;
  uint32_t cursor = from;
  for (const TextEdit &edit : sorted) {
    if (edit.begin < cursor)
      return false; // overlapping edits: not one fix
    region.append(file.text, cursor, edit.begin - cursor);
    region += edit.replacement;
    cursor = edit.end;
  }
  region.append(file.text, cursor, to - cursor);
  std::string_view original(file.text.data() + from, to - from);
  size_t start = 0;
  while (start <= region.size()) {
    size_t end = region.find('\n', start);
    if (end == std::string::npos)
      end = region.size();
    std::string_view line(region.data() + start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    // A line the fix did not touch may already be over a configured limit: only new lines count.
    if (display_width(line) > limit && original.find(line) == std::string_view::npos)
      return false;
    start = end + 1;
  }
  return true;
}

std::optional<TextEdit> hoisted_move_edit(const SourceFile &file, const Stmt &statement,
                                          const Expr *operand, const std::string &anchor,
                                          const std::vector<const Expr *> &moved_together) {
  if (statement.kind != StmtKind::Assign && statement.kind != StmtKind::AugAssign &&
      statement.kind != StmtKind::Expr && statement.kind != StmtKind::Return)
    return std::nullopt;
  // A C++ variable may be const or a reference to something shared: move it in place only.
  if (file.language == Language::Cpp)
    return std::nullopt;
  const Expr *base = moved_base(operand);
  if (!base)
    return std::nullopt;
  bool certain = false;
  bool found = locate(statement.value, operand, true, certain);
  for (const Expr *target : statement.targets)
    found = found || locate(target, operand, true, certain);
  if (!found || !certain)
    return std::nullopt;
  // The new line rebinds the name for the whole statement: a read of it elsewhere there
  // (`ce(a, targets) + ce(b, targets)`, the logits on two devices) would move with it and meet
  // the other operand's device instead.
  std::vector<const Expr *> moved = moved_together;
  moved.push_back(operand);
  size_t other_reads = reads_outside(statement.value, base->text, moved);
  for (const Expr *target : statement.targets)
    other_reads += statement.kind == StmtKind::AugAssign
                       ? reads_outside(target, base->text, moved)
                       : target_reads_outside(target, base->text, moved);
  if (other_reads > 0)
    return std::nullopt;
  // The statement must start its line: `if x: y = a + b` has no line of its own to precede.
  uint32_t line_start = statement.range.begin;
  while (line_start > 0 && file.text[line_start - 1] != '\n')
    --line_start;
  for (uint32_t i = line_start; i < statement.range.begin; ++i)
    if (file.text[i] != ' ' && file.text[i] != '\t')
      return std::nullopt;
  std::string indent = file.text.substr(line_start, statement.range.begin - line_start);
  std::string name(file.slice(base->range));
  size_t line_end = file.text.find('\n', statement.range.begin);
  bool crlf = line_end != std::string::npos && line_end > 0 && file.text[line_end - 1] == '\r';
  return TextEdit{line_start, line_start,
                  indent + name + " = " + name + ".to(" + anchor + ".device)" +
                      (crlf ? "\r\n" : "\n")};
}

} // namespace devlint
