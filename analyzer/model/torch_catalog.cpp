#include "model/torch_catalog.h"

#include <cctype>
#include <unordered_set>

#include "model/text.h"

namespace devlint::torch_catalog {
namespace {

const std::unordered_set<std::string_view> &tensor_constructors() {
  static const std::unordered_set<std::string_view> names = {
      "zeros",         "ones",      "empty",      "full",         "arange",       "range",
      "tensor",        "as_tensor", "rand",       "randn",        "randint",      "randperm",
      "eye",           "linspace",  "logspace",   "tril_indices", "triu_indices", "from_numpy",
      "empty_strided", "Tensor",    "LongTensor", "FloatTensor",  "BoolTensor",   "IntTensor",
      "from_blob",     "frombuffer"};
  return names;
}

const std::unordered_set<std::string_view> &constructors_without_device() {
  static const std::unordered_set<std::string_view> names = {
      "from_numpy", "frombuffer",  "from_blob",  "Tensor",
      "LongTensor", "FloatTensor", "BoolTensor", "IntTensor"};
  return names;
}

const std::unordered_set<std::string_view> &random_sampling() {
  static const std::unordered_set<std::string_view> names = {"normal", "bernoulli", "multinomial"};
  return names;
}

const std::unordered_set<std::string_view> &concat_functions() {
  static const std::unordered_set<std::string_view> names = {
      "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"};
  return names;
}

const std::unordered_set<std::string_view> &elementwise_functions() {
  static const std::unordered_set<std::string_view> names = {"add",
                                                             "sub",
                                                             "subtract",
                                                             "mul",
                                                             "multiply",
                                                             "div",
                                                             "divide",
                                                             "true_divide",
                                                             "maximum",
                                                             "minimum",
                                                             "where",
                                                             "lerp",
                                                             "eq",
                                                             "ne",
                                                             "lt",
                                                             "gt",
                                                             "le",
                                                             "ge",
                                                             "fmod",
                                                             "remainder",
                                                             "pow",
                                                             "logical_and",
                                                             "logical_or",
                                                             "bitwise_and",
                                                             "bitwise_or",
                                                             "addcmul",
                                                             "addcdiv",
                                                             "isin",
                                                             "bucketize",
                                                             "searchsorted",
                                                             "max_elementwise",
                                                             "atan2",
                                                             "hypot",
                                                             "copysign",
                                                             "floor_divide",
                                                             "clamp",
                                                             "clip"};
  return names;
}

// In-place forms of the elementwise ops above.
const std::unordered_set<std::string_view> &elementwise_inplace() {
  static const std::unordered_set<std::string_view> names = {"add_", "sub_", "mul_", "div_"};
  return names;
}

const std::unordered_set<std::string_view> &matmul_functions() {
  static const std::unordered_set<std::string_view> names = {
      "matmul",   "bmm",
      "mm",       "einsum",
      "baddbmm",  "addmm",
      "addbmm",   "outer",
      "dot",      "kron",
      "cdist",    "linear",
      "bilinear", "scaled_dot_product_attention",
      "mv",       "tensordot",
      "inner"};
  return names;
}

const std::unordered_set<std::string_view> &indexing_functions() {
  static const std::unordered_set<std::string_view> names = {
      "gather",      "index_select",   "take_along_dim", "masked_select", "scatter",
      "scatter_add", "scatter_reduce", "index_add",      "index_put",     "index_copy",
      "index_fill",  "masked_fill",    "masked_scatter", "embedding",     "take"};
  return names;
}

// In-place forms of the indexing ops above (and Tensor.put_, the in-place `take`).
const std::unordered_set<std::string_view> &indexing_inplace() {
  static const std::unordered_set<std::string_view> names = {
      "masked_fill_", "masked_scatter_", "scatter_",    "scatter_add_", "index_put_",
      "index_add_",   "index_copy_",     "index_fill_", "put_"};
  return names;
}

const std::unordered_set<std::string_view> &loss_functions() {
  static const std::unordered_set<std::string_view> names = {"cross_entropy",
                                                             "nll_loss",
                                                             "mse_loss",
                                                             "l1_loss",
                                                             "smooth_l1_loss",
                                                             "huber_loss",
                                                             "binary_cross_entropy",
                                                             "binary_cross_entropy_with_logits",
                                                             "kl_div",
                                                             "soft_margin_loss",
                                                             "multilabel_soft_margin_loss",
                                                             "margin_ranking_loss",
                                                             "cosine_embedding_loss",
                                                             "hinge_embedding_loss",
                                                             "poisson_nll_loss",
                                                             "gaussian_nll_loss",
                                                             "multi_margin_loss",
                                                             "multilabel_margin_loss",
                                                             "triplet_margin_loss",
                                                             "sigmoid_focal_loss"};
  return names;
}

const std::unordered_set<std::string_view> &non_tensor_methods() {
  static const std::unordered_set<std::string_view> names = {"size",
                                                             "dim",
                                                             "numel",
                                                             "item",
                                                             "tolist",
                                                             "numpy",
                                                             "data_ptr",
                                                             "stride",
                                                             "is_contiguous",
                                                             "element_size",
                                                             "get_device",
                                                             "nelement",
                                                             "ndimension",
                                                             "is_floating_point",
                                                             "keys",
                                                             "is_complex",
                                                             "storage_offset",
                                                             "format",
                                                             "startswith",
                                                             "endswith",
                                                             "split_string",
                                                             "lower",
                                                             "upper",
                                                             "strip",
                                                             "join",
                                                             "replace",
                                                             "get_seq_length",
                                                             "get_max_length",
                                                             "get_usable_length",
                                                             "get_max_cache_shape",
                                                             "index"};
  return names;
}

const std::unordered_set<std::string_view> &non_tensor_attributes() {
  static const std::unordered_set<std::string_view> names = {
      "shape",    "dtype",  "ndim",    "is_cuda",   "requires_grad", "is_leaf", "layout",
      "itemsize", "nbytes", "is_meta", "is_sparse", "training",      "config",  "name"};
  return names;
}

const std::unordered_set<std::string_view> &non_tensor_builtins() {
  static const std::unordered_set<std::string_view> names = {
      "len",        "int",     "float",     "bool",   "str",   "range", "isinstance",
      "hasattr",    "getattr", "print",     "type",   "super", "repr",  "hash",
      "id",         "round",   "abs",       "divmod", "ord",   "chr",   "callable",
      "issubclass", "setattr", "math",      "ceil",   "floor", "warn",  "warning_once",
      "logger",     "set",     "frozenset", "vars",   "dir",   "open",  "format",
      "all",        "any"};
  return names;
}

const std::unordered_set<std::string_view> &parameterless_modules() {
  static const std::unordered_set<std::string_view> names = {"Dropout",
                                                             "Dropout1d",
                                                             "Dropout2d",
                                                             "Dropout3d",
                                                             "AlphaDropout",
                                                             "ReLU",
                                                             "ReLU6",
                                                             "GELU",
                                                             "SiLU",
                                                             "Tanh",
                                                             "Sigmoid",
                                                             "Softmax",
                                                             "LogSoftmax",
                                                             "Softmax2d",
                                                             "Identity",
                                                             "Flatten",
                                                             "Unflatten",
                                                             "Upsample",
                                                             "UpsamplingNearest2d",
                                                             "UpsamplingBilinear2d",
                                                             "Hardswish",
                                                             "Hardsigmoid",
                                                             "Mish",
                                                             "LeakyReLU",
                                                             "ELU",
                                                             "Softplus",
                                                             "Softsign",
                                                             "MaxPool1d",
                                                             "MaxPool2d",
                                                             "MaxPool3d",
                                                             "AvgPool1d",
                                                             "AvgPool2d",
                                                             "AvgPool3d",
                                                             "AdaptiveAvgPool1d",
                                                             "AdaptiveAvgPool2d",
                                                             "AdaptiveAvgPool3d",
                                                             "AdaptiveMaxPool1d",
                                                             "AdaptiveMaxPool2d",
                                                             "PixelShuffle",
                                                             "PixelUnshuffle",
                                                             "GLU",
                                                             "Hardtanh",
                                                             "CELU",
                                                             "SELU",
                                                             "Tanhshrink",
                                                             "QuickGELUActivation",
                                                             "GELUActivation",
                                                             "NewGELUActivation",
                                                             "ZeroPad2d",
                                                             "ConstantPad1d",
                                                             "ConstantPad2d",
                                                             "ReflectionPad2d",
                                                             "Threshold",
                                                             "ChannelShuffle",
                                                             "Fold",
                                                             "Unfold",
                                                             "CosineSimilarity",
                                                             "Softmin"};
  return names;
}

} // namespace

bool is_tensor_constructor(std::string_view leaf) { return tensor_constructors().count(leaf) > 0; }
bool constructor_lacks_device_parameter(std::string_view leaf) {
  return constructors_without_device().count(leaf) > 0;
}

bool is_distribution_class(std::string_view dotted) {
  constexpr std::string_view prefix = "torch.distributions.";
  size_t leaf = dotted.rfind('.');
  return dotted.substr(0, prefix.size()) == prefix && leaf != std::string_view::npos &&
         leaf + 1 < dotted.size() && std::isupper(static_cast<unsigned char>(dotted[leaf + 1]));
}
bool is_random_sampling(std::string_view leaf) { return random_sampling().count(leaf) > 0; }
bool is_like_constructor(std::string_view leaf) { return ends_with(leaf, "_like"); }
bool is_concat_function(std::string_view leaf) { return concat_functions().count(leaf) > 0; }
bool is_elementwise_function(std::string_view leaf) {
  return elementwise_functions().count(leaf) > 0 || elementwise_inplace().count(leaf) > 0;
}
bool is_tensor_operand_keyword(std::string_view name) {
  static const std::unordered_set<std::string_view> names = {
      "input", "other", "end", "exponent", "tensor1", "tensor2", "condition", "mat1",
      "mat2",  "mat",   "vec", "vec1",     "vec2",    "batch1",  "batch2"};
  return names.count(name) > 0;
}
bool is_matmul_function(std::string_view leaf) { return matmul_functions().count(leaf) > 0; }
bool is_indexing_function(std::string_view leaf) {
  return indexing_functions().count(leaf) > 0 || indexing_inplace().count(leaf) > 0;
}
bool is_loss_function(std::string_view leaf) { return loss_functions().count(leaf) > 0; }
bool is_loss_class(std::string_view leaf) { return ends_with(leaf, "Loss"); }
bool is_non_tensor_method(std::string_view method) {
  return non_tensor_methods().count(method) > 0;
}
bool is_non_tensor_attribute(std::string_view attribute) {
  return non_tensor_attributes().count(attribute) > 0;
}
bool is_non_tensor_builtin(std::string_view name) { return non_tensor_builtins().count(name) > 0; }
bool is_parameterless_module(std::string_view leaf) {
  return parameterless_modules().count(leaf) > 0;
}
bool is_dropout_function(std::string_view leaf) {
  static const std::unordered_set<std::string_view> names = {
      "dropout",        "dropout1d",     "dropout2d",
      "dropout3d",      "alpha_dropout", "feature_alpha_dropout",
      "feature_dropout"};
  return names.count(leaf) > 0;
}
std::optional<AffineFlag> norm_affine_flag(std::string_view leaf) {
  if (leaf == "LayerNorm" || leaf == "RMSNorm")
    return AffineFlag{2, "elementwise_affine"};
  if (leaf == "GroupNorm" || starts_with(leaf, "BatchNorm") || starts_with(leaf, "InstanceNorm"))
    return AffineFlag{3, "affine"};
  return std::nullopt;
}
bool is_module_container(std::string_view leaf) {
  return leaf == "ModuleList" || leaf == "ModuleDict" || leaf == "Sequential";
}

} // namespace devlint::torch_catalog
