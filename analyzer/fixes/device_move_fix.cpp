#include "fixes/device_move_fix.h"

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

// `torch.ones(..., device=x.device)`: the keyword names the device.
std::string device_keyword_anchor(const SourceFile &file, const Expr *call) {
  const Keyword *device = call->keyword("device");
  if (device && device->value->kind == ExprKind::Attribute && device->value->text == "device" &&
      is_plain_chain(device->value->operands[0]))
    return std::string(file.slice(device->value->operands[0]->range));
  return {};
}

} // namespace

std::string device_anchor_text(const SourceFile &file, const Expr *anchor) {
  for (int depth = 0; anchor && depth < 32; ++depth) {
    if (is_plain_chain(anchor))
      return std::string(file.slice(anchor->range));
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

TextEdit move_to_device_edit(const SourceFile &file, const Expr *operand,
                             const std::string &anchor) {
  std::string text(file.slice(operand->range));
  bool atomic = operand->kind == ExprKind::Name || operand->kind == ExprKind::Attribute ||
                operand->kind == ExprKind::Call || operand->kind == ExprKind::Subscript;
  // A parenthesized operand keeps its parentheses in the range only when tree-sitter included
  // them; wrap anything that is not atomic.
  if (!atomic)
    text = "(" + text + ")";
  return TextEdit{operand->range.begin, operand->range.end, text + ".to(" + anchor + ".device)"};
}

std::optional<TextEdit> create_on_device_edit(const SourceFile &file, const Expr *constructor,
                                              const std::string &anchor) {
  if (!constructor || constructor->kind != ExprKind::Call || constructor->keyword("device"))
    return std::nullopt;
  std::string_view text = file.slice(constructor->range);
  if (text.empty() || text.back() != ')')
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
  insert += "device=" + anchor + ".device";
  return TextEdit{cursor, cursor, insert};
}

} // namespace devlint
