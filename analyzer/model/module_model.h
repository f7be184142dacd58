// What a package of model files declares: module classes, their children, parameters, buffers,
// plain tensor attributes, `_no_split_modules` and skip keys. Built from the program model, so it
// is the same whichever frontend produced the code.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/syntax.h"

namespace devlint {

struct ModuleClass;

// The `_no_split_modules` and skip keys a class is judged by: those of the models that build it
// (GLM-4V's modeling_chatglm.py for the blocks of its visual.py), never those of a directory that
// holds several models (data2vec's audio, text and vision files; diffusers' autoencoders, one per
// file). model_scopes.cpp and docs/DEVICE_MODEL.md say how.
struct ModelScope {
  std::vector<std::string> no_split_modules; // union over the scope's PreTrainedModels + config
  std::vector<std::string> skip_keys;
  // Where facts from outside the package came from, for messages: "LlamaForCausalLM in
  // transformers 4.47.1, devlint's built-in summary", or the file on a search path that declares
  // them. Empty when the package declares them.
  std::string external_source;
  bool declared_in_package = false;  // a class of the scope declares _no_split_modules itself
  bool extended_by_settings = false; // --no-split-module / `no-split-modules` add names
  // The same names, for lookups that stay constant-time with huge lists (generated code and
  // configurations have been seen with a million names).
  std::unordered_set<std::string> no_split_set, skip_key_set;
  bool lists_no_split(std::string_view name) const {
    return no_split_set.count(std::string(name)) != 0;
  }
  bool lists_skip_key(std::string_view name) const {
    return skip_key_set.count(std::string(name)) != 0;
  }
  bool has_pretrained_model = false; // a PreTrainedModel class is defined in the scope
  // PreTrainedModel classes but no `_no_split_modules` anywhere: transformers refuses
  // device_map="auto", so the whole model sits on one device, unless a hand-written map splits
  // it (--hand-made-maps: then supports_device_map is true and refuses_string_maps says why).
  bool supports_device_map = true;
  bool refuses_string_maps = false;
  // The same model under transformers 5, which refuses nothing: it loads with an empty list, so a
  // balanced map may cut between any two of its leaves.
  bool splits_anywhere = false;
  // Every model that builds the class declares no `_no_split_modules` through its own class and
  // bases, though another model of its files does (EvaCLIPModel beside EvaCLIPTextModel), or
  // holds a nested PreTrainedModel that declares none (InternVL's vision model in its root).
  // transformers 4's `_get_no_split_modules` raises for a string map on such a model (it walks
  // the loaded model's modules); transformers 5's `post_init` gathers its children's lists
  // instead. The ranking, which knows the release, applies it (driver/placement_rank.cpp).
  bool own_list_missing = false;
  // The same from transformers 4.35, whose `_get_no_split_modules` also walks the nested models:
  // every model that builds the class lacks a list itself or nests a PreTrainedModel lacking one.
  bool nested_list_missing = false;
  bool hand_made_maps = false; // --hand-made-maps was given
  // No class of the scope is loaded by from_pretrained (plain nn.Modules): only a map the user
  // builds by hand splits them (--hand-made-maps).
  bool without_loader = false;
  // A model of the scope builds on a model from outside the package whose source was not found
  // ("UNet2DConditionModel from diffusers"): whether it declares a list is unknown. Empty
  // otherwise.
  std::string unknown_list_base;
};

enum class ChildKind : uint8_t { Single, List, Dict };

struct ChildDecl {
  std::string name;
  ChildKind kind = ChildKind::Single;
  std::string class_name; // leaf name of the constructed class ("GLMBlock", "Linear")
  const ModuleClass *resolved = nullptr; // the class when it is defined in the package
  bool has_parameters = true;            // false for activations, dropout, losses...
  bool is_loss = false;
  bool is_container = false; // nn.Sequential: may itself be split
  // Built with `elementwise_affine=False` / `affine=False`: a norm layer (or a package class
  // deriving from one) that then holds no weights.
  bool affine_off = false;
  SourceRange range; // the assignment in __init__
  // The literal device __init__ moved the child to (`self.a = A().to("cuda:1")`, LibTorch's
  // `a->to({kCUDA, 1})`), "cuda" written "cuda:0"; empty when it is not moved there.
  std::string placed_device;
  // The device variable __init__ moved the child to (`self.mlp = mlp.to(dev)`): children moved
  // to the same one sit together, whatever accelerate would do with the class.
  std::string placed_on;
  // A list `__init__` fills with `.append(...)`: the class each call appends, in the order
  // written (`self.layer.append(SelfAttention(...))`, then `CrossAttention`, then `FF`), and
  // those defined in the package, so that `self.layer[1]` is the class appended second.
  std::vector<std::string> appended_classes;
  std::vector<const ModuleClass *> appended_resolved;
};

struct ParameterDecl {
  std::string name;
  bool is_buffer = false;
  bool is_scalar = false; // register_buffer("x", torch.tensor(3)): 0-dim
  SourceRange range;
};

// `self.x = torch.arange(...)` in __init__: a tensor that is not registered, so dispatch never
// moves it (docs/DEVICE_MODEL.md section 3b, "state held outside the layer").
struct PlainTensorAttribute {
  std::string name;
  SourceRange range;
  bool created_on_cpu = false; // built from a tensor constructor without device=
};

// What a base class defined outside the package declares (`class Mine(LlamaForCausalLM)`): from
// its source found on a search path, else from the built-in summary of transformers' models.
struct ExternalModelFacts {
  std::string base;   // the base class name as written
  std::string source; // where the facts come from, for messages
  bool declares_no_split = false;
  std::vector<std::string> no_split_modules;
  std::vector<std::string> skip_keys;
  bool is_module = true;           // an nn.Module through its bases
  bool is_pretrained_model = true; // a PreTrainedModel through its bases
  bool diffusers_model = false;    // ... through diffusers' ModelMixin
  // A model whose source was not found (`class UNet(diffusers.UNet2DConditionModel)` without
  // diffusers on a search path): it may well declare `_no_split_modules`, devlint cannot tell.
  bool list_unknown = false;
};

// Finds the source of a class imported by an absolute import (`from transformers.models.llama.
// modeling_llama import LlamaPreTrainedModel`) on the search paths and reads what it declares,
// without importing it (driver/search_paths.h). Safe to call from several threads.
class ExternalClassResolver {
public:
  virtual ~ExternalClassResolver() = default;
  // `module` is absolute ("transformers.models.llama.modeling_llama"), `name` a class in it or
  // re-exported by it. Null when it is not found (the built-in summary applies then).
  virtual const ExternalModelFacts *resolve(std::string_view module, std::string_view name) = 0;
};

// The module and class an absolute import gives a base expression (`LlamaModel` after `from
// transformers import LlamaModel`, `transformers.LlamaModel` after `import transformers`);
// nullopt for a name the file does not import absolutely.
struct ImportedClass {
  std::string module;
  std::string name;
};
std::optional<ImportedClass> imported_class(const SyntaxFile &file, const Expr *base);

struct ModuleClass {
  std::string_view name;
  const ClassDef *def = nullptr;
  const SyntaxFile *file = nullptr;
  std::vector<std::string> base_names;    // leaf names as written
  std::vector<const ModuleClass *> bases; // bases defined in the package
  bool is_module = false;                 // an nn.Module (directly or through bases)
  bool is_pretrained_model = false;       // a PreTrainedModel subclass
  bool diffusers_model = false;           // ... through diffusers' ModelMixin
  bool has_builtin_parameters = false;    // subclasses nn.Linear, nn.Embedding, ...
  bool norm_layer_base = false;           // subclasses nn.LayerNorm, nn.RMSNorm or nn.GroupNorm
  // Calls a module its constructor was handed (`self.conv_encoder = conv_encoder`, then
  // `self.conv_encoder(pixel_values)`): an opaque unit with its own device, not a pass-through.
  bool calls_passed_module = false;
  std::vector<ChildDecl> children;       // in registration order
  std::vector<ParameterDecl> parameters; // parameters and buffers, registration order
  std::vector<PlainTensorAttribute> plain_tensors;
  std::vector<std::string> reassigned_attributes; // self.x assigned outside __init__
  std::vector<std::string> no_split_modules;      // declared on this class
  bool declares_no_split = false;
  bool assigns_no_split = false; // `_no_split_modules = ...`, even None (attribute lookup stops)
  std::vector<std::string> skip_keys; // declared on this class
  bool declares_skip_keys = false;
  const ModelScope *scope = nullptr;            // the model this class belongs to
  const ExternalModelFacts *external = nullptr; // a transformers base it builds on, when known

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
  std::unordered_map<std::string_view, ModuleClass *> class_by_name; // first definition wins
  // Each file's own classes: files of one package may define classes of the same name.
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string_view, ModuleClass *>>
      classes_of_file;
  // The same by module name (`modeling_llama` for its file), for relative imports; the first
  // file of a name in package order.
  std::unordered_map<std::string_view, const std::unordered_map<std::string_view, ModuleClass *> *>
      classes_of_module;
  std::unordered_map<std::string_view, const FunctionDef *> function_by_name; // first wins
  // Each file's own module-level functions (transformers' files each define their own
  // `apply_rotary_pos_emb`), and the same by module name for relative imports.
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string_view, const FunctionDef *>>
      functions_of_file;
  std::unordered_map<std::string_view,
                     const std::unordered_map<std::string_view, const FunctionDef *> *>
      functions_of_module;
  // Module-level dicts of class names (ATTENTION_CLASSES = {"eager": A, "sdpa": B}).
  std::unordered_map<std::string_view, std::vector<std::string_view>> class_dicts;
  std::vector<std::unique_ptr<ModelScope>> scopes;
  std::vector<std::string> skip_keys;            // union over the package, for free functions
  std::deque<ExternalModelFacts> external_facts; // owned here, pointed to by classes
  std::unordered_set<std::string> skip_key_set;

  // The class of that name anywhere in the package (the first one when several files define it).
  const ModuleClass *find_class(std::string_view name) const {
    auto it = class_by_name.find(name);
    return it == class_by_name.end() ? nullptr : it->second;
  }
  // The class `name` means in `file`: its own class of that name, else the one it imports
  // relatively (`from .visual import VisionBlock`), else the package's first.
  const ModuleClass *find_class(std::string_view name, const SyntaxFile *file) const;
  const FunctionDef *find_function(std::string_view name) const {
    auto it = function_by_name.find(name);
    return it == function_by_name.end() ? nullptr : it->second;
  }
  // The function `name` means in `file`, as Python resolves a module-level name: the file's own
  // definition, else the one it imports relatively (`from .utils import helper`), else the
  // package's first.
  const FunctionDef *find_function(std::string_view name, const SyntaxFile *file) const;
  // The same without the fallback: null unless `file` defines `name` or imports it relatively.
  const ModuleClass *class_in_file(std::string_view name, const SyntaxFile *file) const;
  const FunctionDef *function_in_file(std::string_view name, const SyntaxFile *file) const;
};

// The path, without `.py`, that a relative import's module names from the file `importer`:
// `..embeddings` from a/b/c.py is a/embeddings (Python's importlib resolves the dots against the
// importing module's package). Lexical only: nothing is read.
std::string relative_import_path(std::string_view importer, std::string_view module);

// Extra knowledge from configuration for code that does not declare it itself.
struct PackageOverrides {
  std::vector<std::string> extra_no_split_modules;
  std::vector<std::string> extra_skip_keys;
  // --hand-made-maps: models that refuse string maps may still be split by a hand-written map.
  bool hand_made_maps = false;
  // Classes imported from outside the package, read from the search paths (null: none; the
  // built-in summary of transformers still applies).
  ExternalClassResolver *external_classes = nullptr;
  // The major version of the transformers the user has (unset: the newest devlint knows), asked
  // only for a model that declares no `_no_split_modules`: 4.x refuses string maps for it, 5.x
  // does not.
  std::function<int()> transformers_major;
};

std::unique_ptr<Package> build_package(const std::vector<const SyntaxFile *> &files,
                                       const PackageOverrides &overrides);

} // namespace devlint
