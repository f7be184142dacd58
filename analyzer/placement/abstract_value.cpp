#include "placement/abstract_value.h"

#include <algorithm>

namespace devlint {

bool same_origin(const Origin *a, const Origin *b) {
  return a == b || (a->kind == b->kind &&
                    a->has(OriginFact::EarlierIteration) == b->has(OriginFact::EarlierIteration) &&
                    a->has(OriginFact::LeftBehind) == b->has(OriginFact::LeftBehind) &&
                    a->label == b->label && a->kind != OriginKind::Fresh);
}

void add_origins(OriginSet &into, const OriginSet &from, size_t max_origins) {
  for (const Origin *o : from) {
    if (into.size() >= max_origins)
      return;
    bool present = false;
    for (const Origin *p : into)
      present |= same_origin(o, p);
    if (!present)
      into.push_back(o);
  }
}

namespace {

bool same_origins(const OriginSet &a, const OriginSet &b) {
  auto covers = [](const OriginSet &x, const OriginSet &y) {
    return std::all_of(y.begin(), y.end(), [&x](const Origin *o) {
      return std::any_of(x.begin(), x.end(), [o](const Origin *p) { return same_origin(o, p); });
    });
  };
  return covers(a, b) && covers(b, a);
}

// The paths of both sides, each once; null past a few (the value's origins then stand alone).
std::shared_ptr<const std::vector<OriginSet>> joined_paths(const Value &a, const Value &b) {
  constexpr size_t kMaxPaths = 8;
  auto paths = std::make_shared<std::vector<OriginSet>>();
  for (const Value *side : {&a, &b}) {
    std::vector<OriginSet> own = side->paths ? *side->paths : std::vector<OriginSet>{side->origins};
    for (OriginSet &path : own)
      if (std::none_of(paths->begin(), paths->end(),
                       [&path](const OriginSet &p) { return same_origins(p, path); }))
        paths->push_back(std::move(path));
  }
  if (paths->size() < 2 || paths->size() > kMaxPaths)
    return nullptr;
  return paths;
}

// Who added each element of a list: the append call, null for those it was made with.
std::vector<const Expr *> element_sources(const Value &list) {
  if (list.appended_by)
    return *list.appended_by;
  return std::vector<const Expr *>(list.elements->size(), nullptr);
}

} // namespace

void add_appended_element(Value &list, const Expr *call, const Value &element, size_t max_origins) {
  auto slot = std::find(list.appended_by->begin(), list.appended_by->end(), call);
  if (slot == list.appended_by->end()) {
    list.elements->push_back(element);
    list.appended_by->push_back(call);
  } else {
    Value &held = (*list.elements)[static_cast<size_t>(slot - list.appended_by->begin())];
    held = join(held, element, max_origins);
  }
}

// A list on two paths, grown by appends on one or both (before and after a loop that appends
// to it): the elements it was made with, joined, then one element per append call of either.
// nullopt when they were made with different elements.
std::optional<Value> join_grown_lists(const Value &a, const Value &b, size_t max_origins) {
  std::vector<const Expr *> from_a = element_sources(a), from_b = element_sources(b);
  auto made = [](const std::vector<const Expr *> &by) {
    return static_cast<size_t>(
        std::find_if(by.begin(), by.end(), [](const Expr *e) { return e != nullptr; }) -
        by.begin());
  };
  size_t made_with = made(from_a);
  if (made_with != made(from_b))
    return std::nullopt;
  Value out = a;
  out.elements = std::make_shared<std::vector<Value>>();
  out.appended_by = std::make_shared<std::vector<const Expr *>>(made_with, nullptr);
  for (size_t i = 0; i < made_with; ++i)
    out.elements->push_back(join((*a.elements)[i], (*b.elements)[i], max_origins));
  for (const auto *side : {&a, &b}) {
    const std::vector<const Expr *> &sources = side == &a ? from_a : from_b;
    for (size_t i = made_with; i < sources.size(); ++i)
      add_appended_element(out, sources[i], (*side->elements)[i], max_origins);
  }
  add_origins(out.origins, b.origins, max_origins);
  return out;
}

Value join(const Value &a, const Value &b, size_t max_origins) {
  if (a.kind == Value::Kind::Neutral && !a.has_origins())
    return b;
  if (b.kind == Value::Kind::Neutral && !b.has_origins())
    return a;
  if (a.kind == b.kind && (a.kind == Value::Kind::Module || a.kind == Value::Kind::ModuleItem) &&
      a.path == b.path)
    return a;
  if (a.kind == Value::Kind::Tuple && b.kind == Value::Kind::Tuple && a.elements && b.elements &&
      (a.appended_by || b.appended_by))
    if (std::optional<Value> grown = join_grown_lists(a, b, max_origins))
      return *grown;
  if (a.kind == Value::Kind::Tuple && b.kind == Value::Kind::Tuple && a.elements && b.elements &&
      a.elements->size() == b.elements->size()) {
    Value out = a;
    out.elements = std::make_shared<std::vector<Value>>();
    for (size_t i = 0; i < a.elements->size(); ++i)
      out.elements->push_back(join((*a.elements)[i], (*b.elements)[i], max_origins));
    add_origins(out.origins, b.origins, max_origins);
    return out;
  }
  if (a.kind == Value::Kind::Module || a.kind == Value::Kind::ModuleItem)
    return a;
  if (b.kind == Value::Kind::Module || b.kind == Value::Kind::ModuleItem)
    return b;
  Value out;
  out.kind = a.kind == b.kind ? a.kind : Value::Kind::Tensor;
  if (a.kind == Value::Kind::Device || b.kind == Value::Kind::Device)
    out.kind = a.kind == b.kind ? Value::Kind::Device : Value::Kind::Tensor;
  // Tuples of different lengths (a list grown in a loop) keep what their elements hold.
  out.origins = origins_of(a, max_origins);
  add_origins(out.origins, origins_of(b, max_origins), max_origins);
  if (out.kind == Value::Kind::Str)
    out.kind = Value::Kind::Neutral;
  out.element = a.element && b.element;
  if (out.kind == Value::Kind::Tensor && a.kind == Value::Kind::Tensor &&
      b.kind == Value::Kind::Tensor && a.has_origins() && b.has_origins())
    out.paths = joined_paths(a, b);
  return out;
}

Value join_returned(const Value &a, const Value &b, size_t max_origins) {
  const bool tuples = a.kind == Value::Kind::Tuple && b.kind == Value::Kind::Tuple && a.elements &&
                      b.elements && !a.appended_by && !b.appended_by;
  if (!tuples || a.elements->size() == b.elements->size())
    return join(a, b, max_origins);
  const Value &longer = a.elements->size() > b.elements->size() ? a : b;
  const Value &shorter = &longer == &a ? b : a;
  Value out = longer;
  out.elements = std::make_shared<std::vector<Value>>(*longer.elements);
  for (size_t i = 0; i < shorter.elements->size(); ++i)
    (*out.elements)[i] = join((*longer.elements)[i], (*shorter.elements)[i], max_origins);
  add_origins(out.origins, shorter.origins, max_origins);
  return out;
}

Env join_env(const Env &a, const Env &b, size_t max_origins) {
  Env out = a;
  for (const auto &[k, v] : b) {
    auto it = out.find(k);
    if (it == out.end())
      out.emplace(k, v);
    else
      it->second = join(it->second, v, max_origins);
  }
  return out;
}

OriginSet origins_of(const Value &v, size_t max_origins) {
  if (v.kind == Value::Kind::Tuple && v.elements) {
    OriginSet out = v.origins;
    for (const Value &e : *v.elements)
      add_origins(out, origins_of(e, max_origins), max_origins);
    return out;
  }
  return v.origins;
}

Value as_tensor(const Value &v, size_t max_origins) {
  Value out;
  out.origins = origins_of(v, max_origins);
  out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
  return out;
}

Value device_of(const Value &v) {
  Value d = v;
  d.kind = v.has_origins() ? Value::Kind::Device : Value::Kind::Neutral;
  return d;
}

Value anchored_result(const OriginSet *anchor, Value fallback) {
  if (!anchor || anchor->empty())
    return fallback;
  Value out;
  out.kind = Value::Kind::Tensor;
  out.origins = *anchor;
  return out;
}

// `boxes[scores.argmax()]`: PyTorch reads a 0-dim integer index as a Python int (`.item()`), so
// it may sit on any device.
bool whole_tensor_argmax(const Expr *index) {
  if (index->kind != ExprKind::Call)
    return false;
  std::string_view leaf = callee_leaf(index);
  if (leaf != "argmax" && leaf != "argmin")
    return false;
  const Expr *callee = index->operands[0];
  bool torch_function = callee->kind == ExprKind::Attribute &&
                        callee->operands[0]->kind == ExprKind::Name &&
                        callee->operands[0]->text == "torch";
  return index->operands.size() == (torch_function ? 2u : 1u) && !index->keyword("dim");
}

bool maybe_number(const Expr *index, const Value &v) {
  if (whole_tensor_argmax(index))
    return true;
  return index->kind == ExprKind::Name &&
         std::all_of(v.origins.begin(), v.origins.end(),
                     [](const Origin *o) { return o->has(OriginFact::MaybeNotTensor); });
}

void mark_tensor(const Value &v) {
  for (const Origin *o : v.origins)
    if (o->has(OriginFact::MaybeNotTensor))
      const_cast<Origin *>(o)->set(OriginFact::MaybeNotTensor, false);
}

bool made_on_cpu(const Origin *o) {
  return o->kind == OriginKind::Fresh && !o->has(OriginFact::MaybeNotTensor);
}

bool has_literal(const Value &v) {
  for (const Origin *o : v.origins)
    if (o->kind == OriginKind::LiteralDevice || o->kind == OriginKind::RunTimeDevice)
      return true;
  return false;
}

bool is_run_time_device(const Value &v) {
  return v.kind == Value::Kind::Device && v.origins.size() == 1 &&
         v.origins[0]->kind == OriginKind::RunTimeDevice;
}

} // namespace devlint
