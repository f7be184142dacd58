// Functions installed as a module's method at run time: patched forwards.
#pragma once

#include <string_view>
#include <unordered_map>

#include "model/module_model.h"
#include "model/syntax.h"

namespace devlint {

// Module-level functions of `package` whose first parameter is `self` and that a file installs on
// an object as a bound method: `types.MethodType(f, obj)`, `f.__get__(obj)`, `partial(f, obj)`,
// `obj.forward = f` or `setattr(obj, "forward", f)`, with `f` defined in that file or imported
// from a sibling module (`from pkg.llama_patch import forward as llama_forward`). Maps each to
// the object's expression as written (`layer.self_attn`), which names it in messages. Python
// calls such a function with the object as `self`: a module's method, run without the module's
// class being known.
std::unordered_map<const FunctionDef *, std::string_view> installed_methods(const Package &package);

} // namespace devlint
