// What a package of model files declares: module classes, their children, parameters, buffers,
// plain tensor attributes, `_no_split_modules` and skip keys. Built from the program model, so it
// is the same whichever frontend produced the code.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/syntax.h"

namespace devlint {

struct ModuleClass;

enum class ChildKind : uint8_t { Single, List, Dict };

struct ChildDecl {
  std::string name;
  ChildKind kind = ChildKind::Single;
  std::string class_name;                // leaf name of the constructed class ("GLMBlock", "Linear")
  const ModuleClass *resolved = nullptr; // the class when it is defined in the package
  bool has_parameters = true;            // false for activations, dropout, losses...
  bool is_loss = false;
  bool is_container = false;             // nn.Sequential: may itself be split
  SourceRange range;                     // the assignment in __init__
};

struct ParameterDecl {
  std::string name;
  bool is_buffer = false;
  SourceRange range;
};

// `self.x = torch.arange(...)` in __init__: a tensor that is not registered, so dispatch never
// moves it (DEVICE_MODEL.md section 3b, "state held outside the layer").
struct PlainTensorAttribute {
  std::string name;
  SourceRange range;
  bool created_on_cpu = false; // built from a tensor constructor without device=
};

struct ModuleClass {
  std::string_view name;
  const ClassDef *def = nullptr;
  const SyntaxFile *file = nullptr;
  std::vector<std::string> base_names;        // leaf names as written
  std::vector<const ModuleClass *> bases;     // bases defined in the package
  bool is_module = false;                     // an nn.Module (directly or through bases)
  bool is_pretrained_model = false;           // a PreTrainedModel subclass
  bool has_builtin_parameters = false;        // subclasses nn.Linear, nn.Embedding, ...
  std::vector<ChildDecl> children;            // in registration order
  std::vector<ParameterDecl> parameters;      // parameters and buffers, registration order
  std::vector<PlainTensorAttribute> plain_tensors;
  std::vector<std::string> reassigned_attributes; // self.x assigned outside __init__
  std::vector<std::string> no_split_modules;  // declared on this class
  SourceRange no_split_range;
  bool declares_no_split = false;
  std::vector<std::string> skip_keys;         // declared on this class
  bool declares_skip_keys = false;

  // Lookups through the package bases (own declarations first).
  const ChildDecl *find_child(std::string_view child) const;
  const ParameterDecl *find_parameter(std::string_view param) const;
  const PlainTensorAttribute *find_plain_tensor(std::string_view attr) const;
  const FunctionDef *find_method(std::string_view method) const;
  bool is_reassigned(std::string_view attr) const;
  bool has_parameters() const; // own parameters, or any child with parameters
  // Children and parameters including those of package bases, registration order.
  std::vector<const ChildDecl *> all_children() const;
  std::vector<const ParameterDecl *> all_parameters() const;
};

struct Package {
  std::vector<const SyntaxFile *> files;
  std::vector<std::unique_ptr<ModuleClass>> classes;
  std::unordered_map<std::string_view, ModuleClass *> class_by_name;
  std::unordered_map<std::string_view, const FunctionDef *> function_by_name;
  std::vector<std::string> no_split_modules; // union over the package
  std::vector<std::string> skip_keys;        // union over the package
  SourceRange no_split_range;                // first declaration, for messages
  const SyntaxFile *no_split_file = nullptr;

  const ModuleClass *find_class(std::string_view name) const {
    auto it = class_by_name.find(name);
    return it == class_by_name.end() ? nullptr : it->second;
  }
  const FunctionDef *find_function(std::string_view name) const {
    auto it = function_by_name.find(name);
    return it == function_by_name.end() ? nullptr : it->second;
  }
};

// Extra knowledge from configuration for code that does not declare it itself.
struct PackageOverrides {
  std::vector<std::string> extra_no_split_modules;
  std::vector<std::string> extra_skip_keys;
};

std::unique_ptr<Package> build_package(const std::vector<const SyntaxFile *> &files,
                                       const PackageOverrides &overrides);

// Tensor constructors that place their result on the default device unless given device=.
bool is_tensor_constructor(std::string_view leaf);

} // namespace devlint
