// The parameters and buffers that torch.nn's standard layers (and transformers' Conv1D) register,
// as functions of their constructor arguments: what `nn.Linear(4096, 11008, bias=False)` holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devlint {

// A constructor argument as the module tree evaluated it: a number, a bool, a list of ints (a
// kernel size), None, or unknown.
struct LayerArgument {
  enum class Kind : uint8_t { Missing, Unknown, None, Bool, Int, Float, IntList, Other } kind;
  int64_t integer = 0;
  double real = 0;
  std::vector<int64_t> ints;
  // Why an Unknown argument is unknown (the evaluator's reason), for the message.
  std::string why = {};
};

struct LayerTensor {
  std::string name;
  std::optional<int64_t> numel;
  bool is_buffer = false;
  bool integer_dtype = false;
  int element_bytes = 4;
  std::vector<int64_t> dims; // the shape, where devlint keeps it (Linear and Conv weights)
};

struct LayerShape {
  bool known_layer = false; // the class is one of the layers described here
  std::vector<LayerTensor> tensors;
  std::string unknown; // which argument could not be evaluated (empty: all known)
};

// `arg(position, keyword)` returns the evaluated argument. Unknown classes: known_layer false.
LayerShape torch_layer_shape(std::string_view class_leaf,
                             const std::function<LayerArgument(size_t, std::string_view)> &arg);

// The largest tensor, in elements, whose size devlint computes (2^40: 4 TiB of float32). Sizes
// come from the user's code and configuration; a larger or negative one is unknown, so that the
// sums of sizes over a model never overflow.
constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// a * b as an element count: unknown when either is, or when the product is not in
// [0, kMaxTensorElements]. element_sum likewise for a + b.
std::optional<int64_t> element_product(std::optional<int64_t> a, std::optional<int64_t> b);
std::optional<int64_t> element_sum(std::optional<int64_t> a, std::optional<int64_t> b);
// `n` when it is a valid element count, else unknown.
std::optional<int64_t> element_count(std::optional<int64_t> n);

// torch.nn / transformers modules that hold no parameter (activations, dropout, pooling...).
bool is_parameterless_layer(std::string_view class_leaf);

} // namespace devlint
