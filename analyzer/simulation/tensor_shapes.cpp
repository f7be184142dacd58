// Tensor shapes as torch defines them, for the tables `__init__` computes (relative position
// indices, sinusoidal and rotary tables): indexing, broadcasting, joining, reshaping, repeating
// and reducing tensors whose every dimension is known. Where a shape is not known, these give
// nothing and the callers keep their element-count rules.
#include "simulation/evaluator.h"

#include <algorithm>

namespace devlint::simulation {

namespace {

// A dimension as torch takes it (-1 the last) for a tensor of `rank` dimensions.
std::optional<size_t> dim_index(const Value &d, size_t rank) {
  if (!d.is(Value::Kind::Int))
    return std::nullopt;
  int64_t n = static_cast<int64_t>(rank);
  int64_t i = d.integer < 0 ? d.integer + n : d.integer;
  if (i < 0 || i >= n)
    return std::nullopt;
  return static_cast<size_t>(i);
}

// Ints given as `f(1, 2, 0)` or `f((1, 2, 0))`.
std::optional<std::vector<int64_t>> int_arguments(const std::vector<Value> &p, size_t from) {
  std::vector<Value> items(p.begin() + static_cast<std::ptrdiff_t>(std::min(from, p.size())),
                           p.end());
  if (items.size() == 1 && items[0].is(Value::Kind::List))
    items = *items[0].list;
  std::vector<int64_t> out;
  for (const Value &v : items) {
    if (!v.is(Value::Kind::Int))
      return std::nullopt;
    out.push_back(v.integer);
  }
  return out;
}

// Python's len(range(*slice.indices(n))).
int64_t slice_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0)
    return stop > start ? (stop - start + step - 1) / step : 0;
  return start > stop ? (start - stop - step - 1) / -step : 0;
}

} // namespace

// Every dimension known: a 0-d tensor has none and one element.
bool Evaluator::has_shape(const Value &t) {
  if (!t.is(Kind::Tensor) || !t.numel)
    return false;
  std::optional<int64_t> n = 1;
  for (int64_t d : t.dims)
    n = element_product(n, d);
  return n && *n == *t.numel;
}

Value Evaluator::shaped(const Value &like, std::vector<int64_t> dims) {
  std::optional<int64_t> n = 1;
  for (int64_t d : dims)
    n = element_product(n, d);
  Value t = tensor_like(like, n);
  if (n)
    t.dims = std::move(dims);
  return t;
}

// Broadcasting: shapes aligned on the right, each pair equal or one of them 1.
std::optional<std::vector<int64_t>> Evaluator::broadcast_shape(const std::vector<int64_t> &a,
                                                               const std::vector<int64_t> &b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

// torch.matmul's shape: 1-D operands gain and lose a dimension, the batch dimensions broadcast.
std::optional<std::vector<int64_t>> Evaluator::matmul_shape(std::vector<int64_t> a,
                                                            std::vector<int64_t> b) {
  if (a.empty() || b.empty())
    return std::nullopt;
  bool vector_a = a.size() == 1, vector_b = b.size() == 1;
  if (vector_a)
    a.insert(a.begin(), 1);
  if (vector_b)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return std::nullopt;
  auto batch = broadcast_shape({a.begin(), a.end() - 2}, {b.begin(), b.end() - 2});
  if (!batch)
    return std::nullopt;
  if (!vector_a)
    batch->push_back(a[a.size() - 2]);
  if (!vector_b)
    batch->push_back(b.back());
  return batch;
}

// t[i, j:k:s, None, ...]: basic indexing (ints drop a dimension, slices keep part of one, None
// adds one, `...` stands for the dimensions not named) and one 1-D integer tensor or list on a
// dimension (advanced indexing: that many entries).
Value Evaluator::index_tensor(const Value &t, const Expr *e, Frame &frame) {
  Value unknown = tensor_like(t, std::nullopt);
  if (!has_shape(t))
    return unknown;
  std::vector<const Expr *> indices(e->operands.begin() + 1, e->operands.end());
  if (indices.size() == 1 && indices[0]->kind == ExprKind::Tuple)
    indices.assign(indices[0]->operands.begin(), indices[0]->operands.end());
  auto is_ellipsis = [&](const Expr *x) { return text_of(frame.file, x->range) == "..."; };
  size_t consumed = 0;
  for (const Expr *x : indices)
    if (!is_ellipsis(x) && x->kind != ExprKind::NoneLiteral &&
        text_of(frame.file, x->range).find("newaxis") == std::string::npos)
      ++consumed;
  if (consumed > t.dims.size())
    return unknown;
  std::vector<int64_t> out;
  size_t next = 0;
  bool advanced = false;
  for (const Expr *x : indices) {
    if (is_ellipsis(x)) {
      for (size_t keep = t.dims.size() - consumed; keep > 0; --keep)
        out.push_back(t.dims[next++]);
      consumed = t.dims.size();
      continue;
    }
    if (x->kind == ExprKind::Slice) {
      std::optional<std::array<int64_t, 3>> range = slice_range(x, t.dims[next++], frame);
      if (!range)
        return unknown;
      out.push_back(slice_length((*range)[0], (*range)[1], (*range)[2]));
      continue;
    }
    if (x->kind == ExprKind::NoneLiteral ||
        text_of(frame.file, x->range).find("newaxis") != std::string::npos) {
      out.push_back(1);
      continue;
    }
    Value index = eval(x, frame);
    if (index.is(Kind::Int) || index.is(Kind::Bool)) {
      int64_t n = t.dims[next++];
      if (index.is(Kind::Int) && (index.integer >= n || index.integer < -n))
        return unknown; // torch raises: out of range
      continue;
    }
    bool integer_list =
        index.is(Kind::List) && std::all_of(index.list->begin(), index.list->end(),
                                            [](const Value &v) { return v.is(Kind::Int); });
    bool integer_tensor = index.is(Kind::Tensor) && index.integer_dtype &&
                          index.element_bytes == 8 && has_shape(index) && index.dims.size() == 1;
    if ((integer_list || integer_tensor) && !advanced) {
      advanced = true;
      ++next;
      out.push_back(integer_list ? static_cast<int64_t>(index.list->size()) : index.dims[0]);
      continue;
    }
    return unknown;
  }
  for (; next < t.dims.size(); ++next)
    out.push_back(t.dims[next]);
  return shaped(t, std::move(out));
}

// Tensor methods that change a known shape. Nothing when the shape or an argument is unknown.
std::optional<Value> Evaluator::tensor_method_shape(const Value &self, const std::string &name,
                                                    const Arguments &a) {
  if (!has_shape(self))
    return std::nullopt;
  const std::vector<int64_t> &dims = self.dims;
  size_t rank = dims.size();
  const auto &p = a.positional;
  if (name == "permute") {
    auto order = int_arguments(p, 0);
    if (const Value *d = keyword_or(a, "dims", SIZE_MAX); d && d->is(Kind::List))
      order = int_arguments({*d}, 0);
    if (!order || order->size() != rank)
      return std::nullopt;
    std::vector<int64_t> out;
    std::vector<bool> used(rank, false);
    for (int64_t o : *order) {
      auto i = dim_index(Value::integer_value(o), rank);
      if (!i || used[*i])
        return std::nullopt;
      used[*i] = true;
      out.push_back(dims[*i]);
    }
    return shaped(self, out);
  }
  if ((name == "transpose" || name == "swapaxes") && p.size() == 2) {
    auto i = dim_index(p[0], rank), j = dim_index(p[1], rank);
    if (!i || !j)
      return std::nullopt;
    std::vector<int64_t> out = dims;
    std::swap(out[*i], out[*j]);
    return shaped(self, out);
  }
  if (name == "t" && p.empty() && rank <= 2)
    return shaped(self, {dims.rbegin(), dims.rend()});
  if (name == "unsqueeze" && p.size() == 1) {
    auto i = dim_index(p[0], rank + 1);
    if (!i)
      return std::nullopt;
    std::vector<int64_t> out = dims;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(*i), 1);
    return shaped(self, out);
  }
  if (name == "squeeze") {
    std::vector<int64_t> out;
    if (p.empty()) {
      for (int64_t d : dims)
        if (d != 1)
          out.push_back(d);
      return shaped(self, out);
    }
    auto i = dim_index(p[0], rank);
    if (!i)
      return std::nullopt;
    out = dims;
    if (out[*i] == 1)
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(*i));
    return shaped(self, out);
  }
  if (name == "flatten") {
    const Value *start = keyword_or(a, "start_dim", 0), *end = keyword_or(a, "end_dim", 1);
    if (rank == 0)
      return shaped(self, {1});
    auto s = start ? dim_index(*start, rank) : std::optional<size_t>(0);
    auto e = end ? dim_index(*end, rank) : std::optional<size_t>(rank - 1);
    if (!s || !e || *s > *e)
      return std::nullopt;
    std::vector<int64_t> out(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(*s));
    out.push_back(product({dims.begin() + static_cast<std::ptrdiff_t>(*s),
                           dims.begin() + static_cast<std::ptrdiff_t>(*e) + 1}));
    out.insert(out.end(), dims.begin() + static_cast<std::ptrdiff_t>(*e) + 1, dims.end());
    return shaped(self, out);
  }
  if (name == "repeat") {
    auto times = int_arguments(p, 0);
    if (!times || times->size() < rank)
      return std::nullopt;
    std::vector<int64_t> out(times->size() - rank, 1);
    out.insert(out.end(), dims.begin(), dims.end());
    for (size_t i = 0; i < out.size(); ++i) {
      if ((*times)[i] < 0)
        return std::nullopt;
      auto n = element_product(out[i], (*times)[i]);
      if (!n)
        return std::nullopt;
      out[i] = *n;
    }
    return shaped(self, out);
  }
  if (name == "repeat_interleave") {
    const Value *repeats = keyword_or(a, "repeats", 0), *dim = keyword_or(a, "dim", 1);
    if (!repeats || !repeats->is(Kind::Int) || repeats->integer < 0)
      return std::nullopt;
    if (!dim || dim->is(Kind::None)) {
      auto n = element_product(*self.numel, repeats->integer);
      return n ? std::optional<Value>(shaped(self, {*n})) : std::nullopt;
    }
    auto i = dim_index(*dim, rank);
    if (!i)
      return std::nullopt;
    std::vector<int64_t> out = dims;
    auto n = element_product(out[*i], repeats->integer);
    if (!n)
      return std::nullopt;
    out[*i] = *n;
    return shaped(self, out);
  }
  // Reductions over one dimension or several (keepdim keeps them as 1); over all: a 0-d result.
  if (name == "sum" || name == "mean" || name == "prod" || name == "amax" || name == "amin" ||
      name == "std" || name == "var" || name == "norm" || name == "logsumexp") {
    const Value *dim = keyword_or(a, "dim", name == "norm" ? 1 : 0);
    const Value *keep = keyword_or(a, "keepdim", name == "norm" ? 2 : 1);
    bool keepdim = keep && keep->is(Kind::Bool) && keep->integer != 0;
    if (keep && !keep->is(Kind::Bool))
      return std::nullopt;
    Value r;
    if (!dim || dim->is(Kind::None)) {
      r = shaped(self, keepdim ? std::vector<int64_t>(rank, 1) : std::vector<int64_t>{});
    } else {
      auto reduced = dim->is(Kind::List) ? int_arguments({*dim}, 0)
                     : dim->is(Kind::Int)
                         ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{dim->integer})
                         : std::nullopt;
      if (!reduced)
        return std::nullopt;
      std::vector<bool> gone(rank, false);
      for (int64_t d : *reduced) {
        auto i = dim_index(Value::integer_value(d), rank);
        if (!i)
          return std::nullopt;
        gone[*i] = true;
      }
      std::vector<int64_t> out;
      for (size_t i = 0; i < rank; ++i)
        if (!gone[i])
          out.push_back(dims[i]);
        else if (keepdim)
          out.push_back(1);
      r = shaped(self, out);
    }
    if (name != "sum" && name != "prod" && name != "amax" && name != "amin")
      r.integer_dtype = false, r.element_bytes = 4;
    return r;
  }
  if (name == "size" && p.size() == 1) {
    auto i = dim_index(p[0], rank);
    return i ? Value::integer_value(dims[*i])
             : Value::unknown("tensor.size of a dimension it has not");
  }
  if (name == "dim" && p.empty())
    return Value::integer_value(static_cast<int64_t>(rank));
  return std::nullopt;
}

// torch.nn.functional.pad(t, (left, right, top, bottom, ...)): the pairs widen the last
// dimension, then the one before it.
std::optional<Value> Evaluator::padded(const Value &t, const Value &pad) {
  if (!has_shape(t) || !pad.is(Kind::List) || pad.list->size() % 2 != 0 ||
      pad.list->size() / 2 > t.dims.size())
    return std::nullopt;
  std::vector<int64_t> dims = t.dims;
  for (size_t pair = 0; pair < pad.list->size() / 2; ++pair) {
    const Value &lo = (*pad.list)[2 * pair], &hi = (*pad.list)[2 * pair + 1];
    if (!lo.is(Kind::Int) || !hi.is(Kind::Int))
      return std::nullopt;
    int64_t &d = dims[dims.size() - 1 - pair];
    d += lo.integer + hi.integer;
    if (d < 0)
      return std::nullopt;
  }
  return shaped(t, dims);
}

// torch functions that change a known shape (and their method forms, given the tensor first).
std::optional<Value> Evaluator::torch_function_shape(std::string_view leaf, const Arguments &a) {
  const auto &p = a.positional;
  // torch.meshgrid(a, b) / meshgrid([a, b], indexing="ij"): one (len(a), len(b), ...) grid per
  // input; indexing="xy" swaps the first two.
  if (leaf == "meshgrid") {
    ValueList inputs = p.size() == 1 && p[0].is(Kind::List) ? *p[0].list : p;
    const Value *indexing = keyword_or(a, "indexing", SIZE_MAX);
    if (inputs.empty() || (indexing && !indexing->is(Kind::Str)))
      return std::nullopt;
    std::vector<int64_t> dims;
    for (const Value &t : inputs) {
      if (!has_shape(t) || t.dims.size() > 1)
        return std::nullopt;
      dims.push_back(*t.numel);
    }
    if (indexing && indexing->text == "xy" && dims.size() >= 2)
      std::swap(dims[0], dims[1]);
    ValueList grids;
    for (const Value &t : inputs)
      grids.push_back(shaped(t, dims));
    return Value::list_of(std::move(grids));
  }
  // torch.stack(tensors, dim=0): one new dimension; torch.cat(tensors, dim=0): one grows.
  if ((leaf == "stack" || leaf == "cat" || leaf == "concat" || leaf == "concatenate") &&
      !p.empty() && p[0].is(Kind::List) && !p[0].list->empty()) {
    const ValueList &items = *p[0].list;
    if (!std::all_of(items.begin(), items.end(), [](const Value &t) { return has_shape(t); }))
      return std::nullopt;
    const Value &first = items[0];
    const Value *dim = keyword_or(a, "dim", 1);
    Value zero = Value::integer_value(0);
    if (!dim)
      dim = &zero;
    if (leaf == "stack") {
      auto i = dim_index(*dim, first.dims.size() + 1);
      if (!i || !std::all_of(items.begin(), items.end(),
                             [&](const Value &t) { return t.dims == first.dims; }))
        return std::nullopt;
      std::vector<int64_t> out = first.dims;
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(*i), static_cast<int64_t>(items.size()));
      return shaped(first, out);
    }
    auto i = dim_index(*dim, first.dims.size());
    if (!i)
      return std::nullopt;
    std::vector<int64_t> out = first.dims;
    out[*i] = 0;
    for (const Value &t : items) {
      if (t.dims.size() != out.size())
        return std::nullopt;
      for (size_t k = 0; k < out.size(); ++k)
        if (k != *i && t.dims[k] != first.dims[k])
          return std::nullopt;
      out[*i] += t.dims[*i];
    }
    Value r = shaped(first, out);
    r.integer_dtype =
        std::all_of(items.begin(), items.end(), [](const Value &t) { return t.integer_dtype; });
    return r;
  }
  if (leaf == "outer" && p.size() == 2 && has_shape(p[0]) && has_shape(p[1]) &&
      p[0].dims.size() == 1 && p[1].dims.size() == 1) {
    Value r = shaped(p[0], {p[0].dims[0], p[1].dims[0]});
    r.integer_dtype = p[0].integer_dtype && p[1].integer_dtype;
    r.element_bytes = r.integer_dtype ? 8 : 4;
    return r;
  }
  // torch.flatten(t, 1), torch.permute(t, dims), torch.sum(t, -1): the method on the first.
  if ((leaf == "flatten" || leaf == "permute" || leaf == "transpose" || leaf == "swapaxes" ||
       leaf == "unsqueeze" || leaf == "squeeze" || leaf == "repeat_interleave" || leaf == "sum" ||
       leaf == "mean" || leaf == "prod" || leaf == "amax" || leaf == "amin") &&
      !p.empty() && p[0].is(Kind::Tensor)) {
    Arguments rest;
    rest.positional.assign(p.begin() + 1, p.end());
    rest.keywords = a.keywords;
    return tensor_method_shape(p[0], std::string(leaf), rest);
  }
  return std::nullopt;
}

} // namespace devlint::simulation
