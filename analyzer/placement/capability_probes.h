// Literal devices that place nothing the model computes with (DL007 stays silent on them).
#pragma once

#include "model/syntax.h"

namespace devlint {

// `q = torch.randn(1, 2, device="cuda")` used, and whose every use in `function` is an argument of
// a call whose result is discarded (`_ = kernel(q, q, q)`, `kernel(q)` as a statement): a tensor
// made only to try an operation on the device (a capability probe), never meeting the model's
// tensors. `statement` is the one holding the literal device.
bool is_capability_probe(const FunctionDef &function, const Stmt &statement);

// A method named `cuda` (a wrapper of `nn.Module.cuda` or of a held model's): its `.cuda()` calls
// forward the device its caller asks for.
inline bool is_cuda_wrapper(const FunctionDef &function) { return function.name == "cuda"; }

} // namespace devlint
