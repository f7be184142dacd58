// Building a Package from the program model (internal to model/): the package's classes and
// their bases (class_declarations.cpp), what each class's __init__ declares (init_scanner.cpp),
// and which files form one model (model_scopes.cpp).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/module_model.h"

namespace devlint {

// The class name an expression names: `Foo`, `nn.Foo`, `Generic[...]` -> `Generic`.
std::string_view leaf_of(const Expr *e);
// `LayerNorm`, `RMSNorm`, `GroupNorm`: torch norm layers whose weights an affine flag turns off.
bool is_norm_layer(std::string_view leaf);

// `modeling_chatglm` for `.../modeling_chatglm.py`: the name a relative import uses.
std::string_view module_stem(std::string_view path);

// Groups the package's files into model scopes and gathers each scope's `_no_split_modules`
// and skip keys (model_scopes.cpp).
void assign_model_scopes(Package &package, const PackageOverrides &overrides);

class PackageBuilder {
public:
  explicit PackageBuilder(Package &package) : pkg_(package) {}

  // ---- classes and bases (class_declarations.cpp) ----
  void collect_declarations();
  void bound_package_bases(); // after collect_declarations' base resolution
  void resolve_external_bases(ExternalClassResolver *resolver);
  void adopt_generated_declarations();
  const ModuleClass *generated_counterpart(const ModuleClass &cls) const;
  bool declared_list(const ModuleClass &cls, bool skip, std::vector<std::string> &out) const;
  void classify();
  void resolve_children();

  // ---- __init__ scanning (init_scanner.cpp) ----
  void collect_members(ModuleClass &cls);
  // Factory-built attributes that some method calls like a module become children.
  void promote_called_factories();
  // `text_model = TextModel(cfg); self.text_model = text_model.text_model`: the child is the
  // member of the other class, known once every class has been read.
  void resolve_member_children();

private:
  Package &pkg_;
  const SyntaxFile *scanning_file_ =
      nullptr; // the file of the class being scanned: names resolve there
  std::unordered_map<std::string_view, const Expr *> init_locals_; // of the __init__ being read
  std::unordered_map<ModuleClass *, std::vector<ChildDecl>> factory_candidates_;
  struct MemberChild {
    ModuleClass *cls;
    ChildDecl child;         // name and range; the rest comes from the owner's member
    std::string owner_class; // the class of the local the member is read from
    std::string member;
  };
  std::vector<MemberChild> member_children_;

  bool is_unknown_layer_base(const ModuleClass &cls, const Expr *base) const;
  // Whether `base` names the package class it resolved to (one of its own file, or imported by
  // name from that class's module): then that class alone says whether it is a module.
  bool is_package_base(const ModuleClass &cls, const Expr *base) const;
  bool is_opaque_factory_call(const Expr *call) const;

  // What module class a constructor expression builds, following small builder functions.
  struct Built {
    std::string class_name;
    bool is_module = false;
    bool has_parameters = true;
    bool is_loss = false;
    bool is_container = false;
    // `elementwise_affine=False` / `affine=False`: a norm layer built without its weights.
    bool affine_off = false;
  };

  static void collect_strings(const Expr *e, std::vector<std::string> &out);
  static std::string_view self_attribute(const Expr *target);
  void collect_reassigned(ModuleClass &cls, const std::vector<Stmt *> &body,
                          const std::vector<Stmt *> &function_body);
  Built
  classify_constructor(const Expr *e,
                       const std::unordered_map<std::string_view, const FunctionDef *> &builders,
                       int depth);
  // The classes a ModuleList/ModuleDict/Sequential argument builds (list literal, comprehension,
  // dict literal, or a local list filled in a loop is not followed).
  void classify_elements(const Expr *e,
                         const std::unordered_map<std::string_view, const FunctionDef *> &builders,
                         ChildDecl &child);
  void add_parameter(ModuleClass &cls, std::string_view name, bool buffer, SourceRange range);
  // A 0-dim buffer (`torch.tensor(3)`, directly or through a local of __init__) mixes with any
  // device.
  void mark_scalar_buffer(ModuleClass &cls, std::string_view name, const Expr *value);
  bool is_scalar_tensor(const Expr *value, int depth) const;
  // Locals of a function known to hold a CPU tensor built there.
  using LocalValues = std::unordered_set<std::string_view>;
  // A tensor built on the CPU (no `device=`), following the locals of a package function.
  bool builds_cpu_tensor(const Expr *e, int depth = 0, const LocalValues *cpu_locals = nullptr,
                         const ModuleClass *cls = nullptr) const;
  bool returns_cpu_tensor(const FunctionDef &fn, int depth, const ModuleClass *cls) const;
  bool calls_passed_module(const ModuleClass &cls, const FunctionDef &init) const;
  void scan_init(ModuleClass &cls, const std::vector<Stmt *> &body,
                 std::unordered_map<std::string_view, const FunctionDef *> &builders,
                 std::unordered_set<const FunctionDef *> &visited);
  // `self.encoding, self.projection = build_position_encoding(...)`: each element of the tuple
  // the package's builder function returns.
  void
  scan_tuple_assignment(ModuleClass &cls, const Expr *targets, const Expr *value, SourceRange range,
                        const std::unordered_map<std::string_view, const FunctionDef *> &builders);
  // The literal device `x.to("cuda:1")` / `.cuda()` / `.cpu()` names ("cuda" is "cuda:0"), the
  // device read through __init__'s locals; empty when it names none.
  std::string literal_placement(const Expr *call) const;
  // The device variable `x.to(dev)` / `x.to(device=dev)` names, `self.device` included; empty
  // for a literal, an expression or no move at all.
  static std::string named_placement(const Expr *call);
  void scan_assignment(ModuleClass &cls, const Expr *target, const Expr *value, SourceRange range,
                       const std::unordered_map<std::string_view, const FunctionDef *> &builders);
  static void add_child(ModuleClass &cls, ChildDecl child);
  void scan_call(ModuleClass &cls, const Expr *e, SourceRange range,
                 std::unordered_map<std::string_view, const FunctionDef *> &builders,
                 std::unordered_set<const FunctionDef *> &visited);
};

} // namespace devlint
