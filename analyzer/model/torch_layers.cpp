#include "model/torch_layers.h"

#include "model/torch_catalog.h"

namespace devlint {

namespace {

using Arg = LayerArgument;
using Kind = LayerArgument::Kind;

std::optional<int64_t> mul(std::optional<int64_t> a, std::optional<int64_t> b) {
  return element_product(a, b);
}

// `argument `k``, and why the evaluator does not know it where it says.
std::string argument_text(std::string_view keyword, const Arg &a) {
  std::string text = "argument `" + std::string(keyword) + "`";
  if (a.kind == Kind::Unknown && !a.why.empty())
    text += " (" + a.why + ")";
  return text;
}

struct ShapeBuilder {
  const std::function<Arg(size_t, std::string_view)> &arg;
  LayerShape out;

  std::optional<int64_t> integer(size_t position, std::string_view keyword,
                                 std::optional<int64_t> fallback = std::nullopt) {
    Arg a = arg(position, keyword);
    if (a.kind == Kind::Int)
      return a.integer;
    if (a.kind == Kind::Missing && fallback)
      return fallback;
    if (out.unknown.empty())
      out.unknown = argument_text(keyword, a);
    return std::nullopt;
  }
  // A flag: unknown flags default to true, and say so.
  bool flag(size_t position, std::string_view keyword, bool fallback) {
    Arg a = arg(position, keyword);
    if (a.kind == Kind::Bool)
      return a.integer != 0;
    if (a.kind == Kind::Missing)
      return fallback;
    if (a.kind == Kind::None)
      return false;
    if (out.unknown.empty())
      out.unknown = argument_text(keyword, a);
    return fallback;
  }
  // int or tuple of ints (kernel sizes), as a product over `dims` dimensions.
  std::optional<int64_t> kernel(size_t position, std::string_view keyword, int dims) {
    Arg a = arg(position, keyword);
    if (a.kind == Kind::Int) {
      std::optional<int64_t> p = 1;
      for (int i = 0; i < dims; ++i)
        p = mul(p, a.integer);
      return p;
    }
    if (a.kind == Kind::IntList) {
      std::optional<int64_t> p = 1;
      for (int64_t v : a.ints)
        p = mul(p, v);
      return p;
    }
    if (out.unknown.empty())
      out.unknown = argument_text(keyword, a);
    return std::nullopt;
  }
  // normalized_shape: an int or a list of ints.
  std::optional<int64_t> shape_product(size_t position, std::string_view keyword) {
    return kernel(position, keyword, 1);
  }
  void add(std::string name, std::optional<int64_t> numel, bool buffer = false,
           bool integer_dtype = false, int bytes = 4) {
    out.tensors.push_back(
        {std::move(name), element_count(numel), buffer, integer_dtype, bytes, {}});
  }
  // The shape of the tensor added last, when each dimension is known.
  void shape(const std::vector<std::optional<int64_t>> &dims) {
    std::vector<int64_t> known;
    for (const auto &d : dims) {
      if (!d)
        return;
      known.push_back(*d);
    }
    out.tensors.back().dims = std::move(known);
  }
  // A kernel size (an int, or a tuple of ints), one entry per spatial dimension.
  std::vector<std::optional<int64_t>> kernel_dims(size_t position, std::string_view keyword,
                                                  int dims) {
    Arg a = arg(position, keyword);
    if (a.kind == Kind::Int)
      return std::vector<std::optional<int64_t>>(static_cast<size_t>(dims), a.integer);
    if (a.kind == Kind::IntList && a.ints.size() == static_cast<size_t>(dims))
      return {a.ints.begin(), a.ints.end()};
    return {std::nullopt};
  }
};

} // namespace

std::optional<int64_t> element_count(std::optional<int64_t> n) {
  if (!n || *n < 0 || *n > kMaxTensorElements)
    return std::nullopt;
  return n;
}

std::optional<int64_t> element_product(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t out = 0;
  // A negative dimension is no size (torch refuses it), even where two of them multiply to one.
  if (!a || !b || *a < 0 || *b < 0 || __builtin_mul_overflow(*a, *b, &out))
    return std::nullopt;
  return element_count(out);
}

std::optional<int64_t> element_sum(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t out = 0;
  if (!a || !b || __builtin_add_overflow(*a, *b, &out))
    return std::nullopt;
  return element_count(out);
}

// torch.nn.RNNBase's parameters (RNN, LSTM, GRU: `gates` is 1, 4 or 3): per layer and direction
// weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, and weight_hr_l{k} with
// proj_size (LSTM), `_reverse` for the second direction; a layer after the first takes the
// previous one's output (proj_size or hidden_size, times the directions).
namespace {
void add_recurrent_layers(ShapeBuilder &b, int64_t gates) {
  auto in = b.integer(0, "input_size"), h = b.integer(1, "hidden_size");
  auto layers = b.integer(2, "num_layers", 1);
  bool bias = b.flag(3, "bias", true);
  int64_t directions = b.flag(6, "bidirectional", false) ? 2 : 1;
  auto proj = b.integer(7, "proj_size", 0);
  if (!layers || *layers < 0 || *layers > 4096 || !proj) {
    if (b.out.unknown.empty())
      b.out.unknown = "argument `num_layers`";
    return;
  }
  auto gate_rows = mul(gates, h);
  auto real_hidden = *proj > 0 ? proj : h;
  for (int64_t layer = 0; layer < *layers; ++layer)
    for (int64_t direction = 0; direction < directions; ++direction) {
      std::string suffix = "_l" + std::to_string(layer) + (direction ? "_reverse" : "");
      auto layer_input = layer == 0 ? in : mul(real_hidden, directions);
      b.add("weight_ih" + suffix, mul(gate_rows, layer_input));
      b.add("weight_hh" + suffix, mul(gate_rows, real_hidden));
      if (bias) {
        b.add("bias_ih" + suffix, gate_rows);
        b.add("bias_hh" + suffix, gate_rows);
      }
      if (*proj > 0)
        b.add("weight_hr" + suffix, mul(*proj, h));
    }
}
} // namespace

bool is_parameterless_layer(std::string_view leaf) {
  // Loss modules hold no parameters either; AdaptiveLogSoftmaxWithLoss is the one torch.nn class
  // named like a loss that does (its head and clusters).
  return torch_catalog::is_parameterless_module(leaf) ||
         (torch_catalog::is_loss_class(leaf) && leaf != "AdaptiveLogSoftmaxWithLoss");
}

LayerShape torch_layer_shape(std::string_view leaf,
                             const std::function<Arg(size_t, std::string_view)> &arg) {
  ShapeBuilder b{arg, {}};
  b.out.known_layer = true;
  if (leaf == "Linear") {
    auto in = b.integer(0, "in_features"), out = b.integer(1, "out_features");
    b.add("weight", mul(in, out));
    b.shape({out, in});
    if (b.flag(2, "bias", true))
      b.add("bias", out);
  } else if (leaf == "Conv1D") { // transformers.pytorch_utils.Conv1D(nf, nx)
    auto nf = b.integer(0, "nf"), nx = b.integer(1, "nx");
    b.add("weight", mul(nf, nx));
    b.add("bias", nf);
  } else if (leaf == "Bilinear") {
    auto in1 = b.integer(0, "in1_features"), in2 = b.integer(1, "in2_features"),
         out = b.integer(2, "out_features");
    b.add("weight", mul(out, mul(in1, in2)));
    if (b.flag(3, "bias", true))
      b.add("bias", out);
  } else if (leaf == "Embedding") {
    auto n = b.integer(0, "num_embeddings"), d = b.integer(1, "embedding_dim");
    b.add("weight", mul(n, d));
  } else if (leaf == "EmbeddingBag") {
    auto n = b.integer(0, "num_embeddings"), d = b.integer(1, "embedding_dim");
    b.add("weight", mul(n, d));
  } else if (leaf == "LayerNorm") {
    auto n = b.shape_product(0, "normalized_shape");
    const auto affine_flag = *torch_catalog::norm_affine_flag(leaf);
    bool affine = b.flag(affine_flag.position, affine_flag.keyword, true);
    bool bias = b.flag(3, "bias", true);
    if (affine) {
      b.add("weight", n);
      if (bias)
        b.add("bias", n);
    }
  } else if (leaf == "RMSNorm") {
    auto n = b.shape_product(0, "normalized_shape");
    const auto affine_flag = *torch_catalog::norm_affine_flag(leaf);
    if (b.flag(affine_flag.position, affine_flag.keyword, true))
      b.add("weight", n);
  } else if (leaf == "GroupNorm") {
    auto channels = b.integer(1, "num_channels");
    const auto affine_flag = *torch_catalog::norm_affine_flag(leaf);
    if (b.flag(affine_flag.position, affine_flag.keyword, true)) {
      b.add("weight", channels);
      b.add("bias", channels);
    }
  } else if (leaf == "BatchNorm1d" || leaf == "BatchNorm2d" || leaf == "BatchNorm3d" ||
             leaf == "InstanceNorm1d" || leaf == "InstanceNorm2d" || leaf == "InstanceNorm3d") {
    bool batch = leaf.substr(0, 5) == "Batch";
    auto n = b.integer(0, "num_features");
    const auto affine_flag = *torch_catalog::norm_affine_flag(leaf);
    if (b.flag(affine_flag.position, affine_flag.keyword, batch)) {
      b.add("weight", n);
      b.add("bias", n);
    }
    if (b.flag(4, "track_running_stats", batch)) {
      b.add("running_mean", n, true);
      b.add("running_var", n, true);
      b.add("num_batches_tracked", int64_t{1}, true, true, 8);
    }
  } else if (leaf == "Conv1d" || leaf == "Conv2d" || leaf == "Conv3d" ||
             leaf == "ConvTranspose1d" || leaf == "ConvTranspose2d" || leaf == "ConvTranspose3d") {
    int dims = leaf[leaf.size() - 2] - '0'; // Conv2d: 2
    bool transposed = leaf.rfind("ConvTranspose", 0) == 0;
    auto in = b.integer(0, "in_channels"), out = b.integer(1, "out_channels");
    auto k = b.kernel(2, "kernel_size", dims);
    auto groups = b.integer(6, "groups", 1);
    std::optional<int64_t> w;
    if (in && out && k && groups && *groups > 0)
      w = transposed ? mul(mul(in, *out / *groups), k) : mul(mul(out, *in / *groups), k);
    b.add("weight", w);
    if (w) { // (out, in / groups, *kernel), or (in, out / groups, *kernel) transposed
      std::vector<std::optional<int64_t>> shape = {transposed ? in : out,
                                                   (transposed ? *out : *in) / *groups};
      for (const auto &d : b.kernel_dims(2, "kernel_size", dims))
        shape.push_back(d);
      b.shape(shape);
    }
    if (b.flag(7, "bias", true))
      b.add("bias", out);
  } else if (leaf == "MultiheadAttention") {
    // torch registers in_proj_weight (q/k/v_proj_weight when kdim or vdim differ), in_proj_bias,
    // the out_proj child (a Linear), then bias_k and bias_v.
    auto e = b.integer(0, "embed_dim");
    bool bias = b.flag(3, "bias", true);
    bool bias_kv = b.flag(4, "add_bias_kv", false);
    auto dim_or_embed = [&](size_t position, std::string_view keyword) -> std::optional<int64_t> {
      Arg a = b.arg(position, keyword);
      if (a.kind == Kind::Missing || a.kind == Kind::None)
        return e;
      return b.integer(position, keyword);
    };
    auto kdim = dim_or_embed(6, "kdim"), vdim = dim_or_embed(7, "vdim");
    if (kdim == e && vdim == e) {
      b.add("in_proj_weight", mul(int64_t{3}, mul(e, e)));
    } else {
      b.add("q_proj_weight", mul(e, e));
      b.add("k_proj_weight", mul(e, kdim));
      b.add("v_proj_weight", mul(e, vdim));
    }
    if (bias)
      b.add("in_proj_bias", mul(int64_t{3}, e));
    b.add("out_proj.weight", mul(e, e));
    if (bias)
      b.add("out_proj.bias", e);
    if (bias_kv) {
      b.add("bias_k", e);
      b.add("bias_v", e);
    }
  } else if (leaf == "RNN" || leaf == "LSTM" || leaf == "GRU") {
    add_recurrent_layers(b, leaf == "LSTM" ? 4 : leaf == "GRU" ? 3 : 1);
  } else if (leaf == "RNNCell" || leaf == "LSTMCell" || leaf == "GRUCell") {
    // torch.nn.RNNCellBase: weight_ih, weight_hh, then bias_ih, bias_hh.
    auto in = b.integer(0, "input_size"), h = b.integer(1, "hidden_size");
    auto gates = mul(int64_t{leaf == "LSTMCell" ? 4 : leaf == "GRUCell" ? 3 : 1}, h);
    b.add("weight_ih", mul(gates, in));
    b.add("weight_hh", mul(gates, h));
    if (b.flag(2, "bias", true)) {
      b.add("bias_ih", gates);
      b.add("bias_hh", gates);
    }
  } else if (leaf == "PReLU") {
    b.add("weight", b.integer(0, "num_parameters", 1));
  } else if (leaf == "XIELUActivation") { // transformers' activations.py, created in bfloat16
    b.add("alpha_p", int64_t{1}, false, false, 2);
    b.add("alpha_n", int64_t{1}, false, false, 2);
    b.add("beta", int64_t{1}, true, false, 2);
    b.add("eps", int64_t{1}, true, false, 2);
  } else if (is_parameterless_layer(leaf)) {
    // nothing registered
  } else {
    b.out.known_layer = false;
  }
  return b.out;
}

} // namespace devlint
