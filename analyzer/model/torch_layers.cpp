#include "model/torch_layers.h"

#include "model/torch_catalog.h"

namespace devlint {

namespace {

using Arg = LayerArgument;
using Kind = LayerArgument::Kind;

std::optional<int64_t> mul(std::optional<int64_t> a, std::optional<int64_t> b) {
  return element_product(a, b);
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
      out.unknown = std::string("argument `") + std::string(keyword) + "`";
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
      out.unknown = std::string("argument `") + std::string(keyword) + "`";
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
      out.unknown = std::string("argument `") + std::string(keyword) + "`";
    return std::nullopt;
  }
  // normalized_shape: an int or a list of ints.
  std::optional<int64_t> shape_product(size_t position, std::string_view keyword) {
    return kernel(position, keyword, 1);
  }
  void add(std::string name, std::optional<int64_t> numel, bool buffer = false,
           bool integer_dtype = false, int bytes = 4) {
    out.tensors.push_back({std::move(name), element_count(numel), buffer, integer_dtype, bytes});
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
    bool affine = b.flag(2, "elementwise_affine", true);
    bool bias = b.flag(3, "bias", true);
    if (affine) {
      b.add("weight", n);
      if (bias)
        b.add("bias", n);
    }
  } else if (leaf == "RMSNorm") {
    auto n = b.shape_product(0, "normalized_shape");
    if (b.flag(2, "elementwise_affine", true))
      b.add("weight", n);
  } else if (leaf == "GroupNorm") {
    auto channels = b.integer(1, "num_channels");
    if (b.flag(3, "affine", true)) {
      b.add("weight", channels);
      b.add("bias", channels);
    }
  } else if (leaf == "BatchNorm1d" || leaf == "BatchNorm2d" || leaf == "BatchNorm3d" ||
             leaf == "InstanceNorm1d" || leaf == "InstanceNorm2d" || leaf == "InstanceNorm3d") {
    bool batch = leaf.substr(0, 5) == "Batch";
    auto n = b.integer(0, "num_features");
    if (b.flag(3, "affine", batch)) {
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
