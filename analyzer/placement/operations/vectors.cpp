// 1-D CPU tensors and their 0-dim elements (docs/DEVICE_MODEL.md section 3): a Python int reading
// `offsets[i]` of a 1-D CPU tensor, or a loop (`for w in weights`, `zip(xs, weights)`) over one,
// gives a 0-dim CPU tensor, which PyTorch mixes with a tensor on any device in elementwise
// operations, as it does a Python number. A rank the analysis cannot follow (`.view`, `[None]`,
// `torch.stack`, an unknown function) ends the mark, so only reads of a tensor known to be 1-D are
// taken for 0-dim values.
#include "placement/interpreter.h"

#include <string>

#include "model/text.h"
#include "model/torch_catalog.h"

namespace devlint {

namespace {

// An element that is not itself a sequence: a number, a name, an attribute, a call.
bool is_flat_element(const Expr *e) {
  return e->kind != ExprKind::Tuple && e->kind != ExprKind::Comprehension &&
         e->kind != ExprKind::Starred && e->kind != ExprKind::Dict;
}

// `[1.0, 2.0]`, `[1 / n] * n`, `[w for w in weights]`: Python data for a 1-D tensor.
bool is_flat_list(const Expr *e) {
  if (!e)
    return false;
  switch (e->kind) {
  case ExprKind::Tuple:
    return std::all_of(e->operands.begin(), e->operands.end(), is_flat_element);
  case ExprKind::Comprehension:
    return !e->operands.empty() && is_flat_element(e->operands[0]);
  case ExprKind::BinaryOp:
    if (e->operands.size() != 2 || e->text != "*")
      return false;
    return (e->operands[0]->kind == ExprKind::Tuple && is_flat_list(e->operands[0])) ||
           (e->operands[1]->kind == ExprKind::Tuple && is_flat_list(e->operands[1]));
  default:
    return false;
  }
}

// `list[float]`, `Optional[List[int]]`, `list[float] | None`, `tuple[float, ...]`: a parameter
// annotated as a flat sequence of numbers.
bool annotates_number_list(std::string_view annotation) {
  std::string text;
  for (char c : annotation)
    if (c != ' ' && c != '"' && c != '\'')
      text += c;
  auto strip = [&](std::string_view prefix, std::string_view suffix) {
    if (text.size() > prefix.size() + suffix.size() &&
        text.compare(0, prefix.size(), prefix) == 0 &&
        text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0)
      text = text.substr(prefix.size(), text.size() - prefix.size() - suffix.size());
  };
  strip("Optional[", "]");
  strip("", "|None");
  strip("None|", "");
  for (std::string_view container : {"list[", "List[", "tuple[", "Tuple[", "Sequence["})
    for (std::string_view number : {"float", "int"})
      for (std::string_view rest : {"]", ",...]"})
        if (text == std::string(container) + std::string(number) + std::string(rest))
          return true;
  return false;
}

const Parameter *parameter_named(const FunctionDef *fn, std::string_view name) {
  if (!fn)
    return nullptr;
  for (const Parameter &p : fn->parameters)
    if (p.name == name)
      return &p;
  return nullptr;
}

bool is_minus_one(const Expr *e) {
  return (e->kind == ExprKind::Number && e->text == "-1") ||
         (e->kind == ExprKind::UnaryOp && e->text == "-" && e->operands.size() == 1 &&
          e->operands[0]->kind == ExprKind::Number && e->operands[0]->text == "1");
}

// `x.flatten()`, `torch.flatten(x)`, `x.view(-1)`, `x.reshape(-1)`: a 1-D tensor.
bool flattened(const Expr *e) {
  if (!e || e->kind != ExprKind::Call || !e->keywords.empty())
    return false;
  const size_t positional = e->operands.size() - 1;
  const Expr *callee = e->operands[0];
  if (callee->kind == ExprKind::Attribute && is_name(callee->operands[0], "torch"))
    return callee->text == "flatten" && positional == 1;
  if (callee->kind != ExprKind::Attribute)
    return false;
  if (callee->text == "flatten")
    return positional == 0;
  return (callee->text == "view" || callee->text == "reshape") && positional == 1 &&
         is_minus_one(e->operands[1]);
}

// The values `name` is assigned in these statements (not in nested functions or classes).
void assignments_of(const std::vector<Stmt *> &body, std::string_view name,
                    std::vector<const Expr *> &out) {
  for (const Stmt *st : body) {
    if (st->kind == StmtKind::FunctionDef || st->kind == StmtKind::ClassDef)
      continue;
    for (const Expr *t : st->targets)
      if (t->kind == ExprKind::Name && t->text == name)
        out.push_back(st->kind == StmtKind::Assign ? st->value : nullptr);
    assignments_of(st->body, name, out);
    assignments_of(st->orelse, name, out);
    for (const auto &handler : st->handlers)
      assignments_of(handler, name, out);
    assignments_of(st->finalbody, name, out);
  }
}

// `torch.zeros((n,))`, `torch.zeros([n])`, `torch.zeros(n)` with a number or `len(...)`: one
// dimension. So is the size of a 1-D tensor (`torch.empty(x.flatten().size())`, or of a name
// assigned once from a flattened tensor). A name alone may hold a shape tuple, so it is not one.
bool one_dimension_size(const Expr *size, const FunctionDef *function) {
  if (!size)
    return false;
  if (size->kind == ExprKind::Tuple)
    return size->operands.size() == 1 && size->operands[0]->kind != ExprKind::Starred;
  const Expr *sized = nullptr;
  if (size->kind == ExprKind::Attribute && size->text == "shape")
    sized = size->operands[0];
  else if (size->kind == ExprKind::Call && size->operands.size() == 1 &&
           size->operands[0]->kind == ExprKind::Attribute && size->operands[0]->text == "size")
    sized = size->operands[0]->operands[0];
  if (sized) {
    if (sized->kind == ExprKind::Name && function && !parameter_named(function, sized->text)) {
      std::vector<const Expr *> values;
      assignments_of(function->body, sized->text, values);
      return values.size() == 1 && flattened(values[0]);
    }
    return flattened(sized);
  }
  return size->kind == ExprKind::Number ||
         (size->kind == ExprKind::Call && is_name(size->operands[0], "len"));
}

} // namespace

void Interpreter::mark_vector(const Expr *call, std::string_view leaf, const Origin *made) const {
  if (!made || made->kind != OriginKind::Fresh)
    return;
  bool vector = false;
  const size_t positional = call->operands.size() - 1;
  if (leaf == "arange" || leaf == "linspace" || leaf == "logspace" || leaf == "randperm") {
    vector = true;
  } else if (leaf == "tensor" || leaf == "as_tensor") {
    const Expr *data = positional >= 1 ? call->operands[1] : nullptr;
    const Parameter *param = data && data->kind == ExprKind::Name
                                 ? parameter_named(frame_->function, data->text)
                                 : nullptr;
    vector = is_flat_list(data) || (param && annotates_number_list(param->annotation));
  } else if (leaf == "zeros" || leaf == "ones" || leaf == "empty" || leaf == "rand" ||
             leaf == "randn" || leaf == "full") {
    const Expr *size = positional >= 1 ? call->operands[1] : nullptr;
    if (const Keyword *k = call->keyword("size"))
      size = k->value;
    const bool only_size = leaf == "full" ? positional <= 2 : positional <= 1;
    vector = only_size && one_dimension_size(size, frame_->function);
  }
  if (vector)
    const_cast<Origin *>(made)->set(OriginFact::Vector);
}

std::optional<Value> Interpreter::zero_dim_element(const Value &vector) {
  if (vector.kind != Value::Kind::Tensor || vector.origins.empty())
    return std::nullopt;
  for (const Origin *o : vector.origins)
    if (o->kind != OriginKind::Fresh || !o->has(OriginFact::Vector))
      return std::nullopt;
  return Value::neutral();
}

Value Interpreter::maybe_reshaped(const Value &v, const Expr *call) {
  Value out = v;
  for (const Origin *&o : out.origins) {
    if (!o->has(OriginFact::Vector) ||
        (call && o->range.begin == call->range.begin && o->range.end == call->range.end))
      continue;
    Origin &copy = origins_.emplace_back(*o);
    copy.set(OriginFact::Vector, false);
    o = &copy;
  }
  return out;
}

} // namespace devlint
