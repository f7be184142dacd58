// What devlint knows about PyTorch's API, in one place: which calls make tensors, which combine
// tensors that must share a device, which keep their input's device, which are losses, and which
// return no tensor at all. The module model (building a package) and the placement interpreter
// (running its methods) read the same lists, so they cannot disagree about a call.
//
// Each list names where it came from; names are the call's last segment ("cat" for torch.cat,
// F.cat, x.cat). In-place forms (`add_`, `masked_fill_`) are listed beside their out-of-place
// operation and behave like it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace devlint::torch_catalog {

// ---- tensors made from nothing ----

// Creation ops that place their result on the default device (the CPU) unless given device=
// (PyTorch docs, "torch: Creation Ops", and the legacy typed constructors torch.LongTensor...).
bool is_tensor_constructor(std::string_view leaf);
// Constructors without a `device=` parameter: they wrap memory that already exists
// (`torch.from_numpy`, `torch.frombuffer`) or are legacy typed constructors (`torch.LongTensor`,
// which reject a CUDA device). Only a move after them changes their device.
bool constructor_lacks_device_parameter(std::string_view leaf);
// `torch.distributions.gumbel.Gumbel(0, 1)`: a distribution samples on the device of its
// parameters, on the CPU when they are Python numbers; its constructor takes no `device=`.
bool is_distribution_class(std::string_view dotted);
// Random sampling whose result sits on the device of its tensor arguments, and on the default
// device when it has none: torch.normal(mean, std) vs torch.normal(0, 1, size=...)
// (PyTorch docs, "torch: Random sampling").
bool is_random_sampling(std::string_view leaf);
// `zeros_like(x)`, `full_like(x, v)`: made on x's device unless given device=.
bool is_like_constructor(std::string_view leaf);

// ---- operations whose tensor operands must share one device ----

// Joining ops (PyTorch docs, "Indexing, Slicing, Joining, Mutating Ops": cat, stack...).
bool is_concat_function(std::string_view leaf);
// Pointwise and comparison ops with two tensor operands ("Pointwise Ops", "Comparison Ops"),
// with their in-place forms.
bool is_elementwise_function(std::string_view leaf);
// The keyword names PyTorch gives the tensor operands of those ops and of the matrix products
// (`torch.add(x, other=y)`, `torch.where(c, input=a, other=b)`, `torch.addmm(m, mat1=a, mat2=b)`):
// passed by keyword, they meet as they would positionally.
bool is_tensor_operand_keyword(std::string_view name);
// Matrix products ("BLAS and LAPACK Operations"), F.linear / F.bilinear and
// F.scaled_dot_product_attention.
bool is_matmul_function(std::string_view leaf);
// Index, gather, scatter and mask ops, as functions or tensor methods, with their in-place
// forms ("Indexing, Slicing, Joining, Mutating Ops", "torch.Tensor"), and F.embedding.
bool is_indexing_function(std::string_view leaf);
// torch.nn.functional loss functions ("torch.nn.functional: Loss functions") and torchvision's
// sigmoid_focal_loss.
bool is_loss_function(std::string_view leaf);
// A loss module class: nn.CrossEntropyLoss, a package's own FocalLoss (named by convention).
bool is_loss_class(std::string_view leaf);

// ---- results that are not tensors ----

// Tensor methods whose result is no tensor on the receiver's device (sizes, Python numbers),
// plus string and transformers Cache methods called on the same kind of receivers.
bool is_non_tensor_method(std::string_view method);
// Tensor attributes that are metadata (shape, dtype...), plus `config`/`training`/`name` read
// from the same objects.
bool is_non_tensor_attribute(std::string_view attribute);
// Python builtins (and logging helpers) that never return a tensor.
bool is_non_tensor_builtin(std::string_view name);

// ---- modules ----

// torch.nn building blocks (and transformers' activation classes) that hold no parameters:
// calling them moves nothing and their output sits where their input was ("torch.nn":
// Non-linear Activations, Dropout, Pooling, Padding, Vision layers; transformers.activations).
bool is_parameterless_module(std::string_view leaf);
// torch.nn.functional's dropout family (`F.dropout(x, p, training)`, `torch.dropout`): out of
// training they return their input as it is.
bool is_dropout_function(std::string_view leaf);
// nn.ModuleList / nn.ModuleDict / nn.Sequential.
bool is_module_container(std::string_view leaf);
// Where a torch norm layer takes the flag that gives it weights: `elementwise_affine` (LayerNorm,
// RMSNorm: the third argument) or `affine` (GroupNorm, BatchNorm*, InstanceNorm*: the fourth).
// Positions count the arguments from 0.
struct AffineFlag {
  size_t position;
  std::string_view keyword;
};
std::optional<AffineFlag> norm_affine_flag(std::string_view leaf);

} // namespace devlint::torch_catalog
