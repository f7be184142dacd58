// The placement interpreter (internal to placement/): runs every method of every module class,
// free function and script body of a package over abstract values (placement/abstract_value.h)
// and reports each operation whose tensor operands must share a device as a Site.
//
// The interpreter core keeps frames, joins, inlining and dispatch: entries and origins
// (placement_analysis.cpp), statements (interpreter_statements.cpp), expressions
// (interpreter_expressions.cpp), calls (interpreter_calls.cpp: the dispatch over the operation
// models, argument evaluation, inlining, method resolution) and site emission
// (site_emission.cpp). What PyTorch, transformers and Python do with a call lives in the
// operation models, one file per idiom family in placement/operations/, asked in the order
// `kCallOperations` documents.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/module_model.h"
#include "placement/abstract_value.h"
#include "placement/placement_analysis.h"
#include "placement/site.h"
#include "placement/unit_placement.h"

namespace devlint {

class Interpreter {
public:
  Interpreter(const Package &pkg, SiteSink &sink, const AnalysisLimits &limits);
  void run();

private:
  struct Frame {
    Env env;
    const ModuleClass *unit = nullptr;
    const FunctionDef *function = nullptr;
    const SyntaxFile *file = nullptr;
    const Stmt *statement = nullptr;
    Value returns;
    bool has_return = false;
    bool terminated = false;
    std::unordered_map<std::string_view, const FunctionDef *> local_functions;
    int depth = 0;
    bool script = false;
    // Members of `self` read by code that runs on every path through the function so far
    // (top-level statements, outside conditional expressions), and how deep in branches,
    // loops and conditional expressions the running code is.
    std::vector<std::string_view> members_read;
    int nesting = 0;
    // The conditions of the `if` branches the running code is in, and which branch.
    std::vector<std::pair<const Expr *, bool>> assumed;
    // A free function inlined at `call` in `caller`: where its arguments came in.
    const Expr *call = nullptr;
    const Frame *caller = nullptr;
    // The frame that inlined this one (a method of the class, a helper, a free function).
    const Frame *parent = nullptr;
    // How many loops were running when the frame started: loops_ past these are its own.
    size_t outer_loops = 0;
    // A method of a diffusers pipeline (operations/pipelines.cpp), or code it inlined.
    const ModuleClass *pipeline = nullptr;
    // What an `if` on a test of plain names gave each variable it set on each path (`if task ==
    // "generate": image_latents = torch.zeros_like(latents)` / `else: image_latents =
    // self.vae.encode(...)`): a later `if` on the same test, its names unchanged, takes the same
    // path, so a variable still holding the joined value holds that path's there.
    struct DecidedPath {
      std::string_view test;
      std::vector<std::pair<std::string_view, Value>> test_names; // their values at the test
      struct Set {
        std::string_view name;
        Value joined, then_value, else_value;
      };
      std::vector<Set> values;
    };
    std::vector<DecidedPath> decided_paths;
  };
  // Marks the code run while it lives as running only on some paths (see Frame::nesting).
  struct Conditional {
    explicit Conditional(Frame *running) : frame(running) { ++frame->nesting; }
    ~Conditional() { --frame->nesting; }
    Conditional(const Conditional &) = delete;
    Conditional &operator=(const Conditional &) = delete;
    Frame *frame;
  };

  struct Args {
    std::vector<Value> positional;
    std::vector<std::pair<std::string_view, Value>> keywords;
    const Value *keyword(std::string_view name) const {
      for (const auto &[k, v] : keywords)
        if (k == name)
          return &v;
      return nullptr;
    }
  };

  const Package &pkg_;
  SiteSink &sink_;
  AnalysisLimits limits_;
  std::unordered_map<const FunctionDef *, const SyntaxFile *> file_of_;
  std::deque<Origin> origins_;
  std::deque<std::string> strings_;
  // The modules patched forwards run on (installed_methods.h): a class of unknown children, its
  // only method the installed function, never split.
  std::deque<ClassDef> installed_defs_;
  std::deque<ModuleClass> installed_units_;
  ModelScope installed_scope_;
  std::vector<const FunctionDef *> call_stack_;
  Frame *frame_ = nullptr;
  // Bounds on the work per entry (statements executed, inlined ones included): beyond them the
  // analysis stops inlining and double-passing loops instead of growing without bound.
  static constexpr size_t kStatementBudget = 20000;
  static constexpr int kMaxDoublePassNesting = 3;
  size_t statements_run_ = 0;
  int loop_depth_ = 0;
  int comprehension_depth_ = 0; // comprehensions being evaluated: each runs its body per element
  std::vector<const Stmt *> loops_;      // loops being run, innermost last
  std::vector<OriginSet> loop_elements_; // per loop being run: what its loop variable holds
  std::deque<OriginSet> anchored_;       // anchors of reported sites, pointed to by emit()'s result
  std::unordered_set<const Expr *> tensor_subscripts_;     // see Site::tensor_subscripts
  std::unordered_map<const Stmt *, Expr> statement_exprs_; // see emit_statement_site
  // Attributes that a state class of the package (a cache: not a module) fills in `__init__`
  // with tensors allocated on a device it is given (`self.ssm_states = [torch.zeros(...,
  // device=device) ...]`): read through an argument, they sit where the object was built.
  std::unordered_set<std::string_view> held_state_attributes_;
  std::unordered_set<std::string_view> held_state_methods_; // that return held state
  // allocated_for_every_layer's answer per class, running method and attribute.
  struct SetupAllocation {
    const Stmt *allocation = nullptr; // null: no such allocation
    std::string_view by;              // `_setup_cache`, `TinyModel._setup_cache`
    // Where the reading method itself first replaces the attribute: a read before that offset
    // may still see the allocated tensor (the first call after the setup).
    uint32_t replaced_by_reader_at = UINT32_MAX;
  };
  std::map<std::tuple<const ModuleClass *, const FunctionDef *, std::string_view>, SetupAllocation>
      setup_allocations_;
  // What find_setup_allocation asks of a class, for every attribute at once (indexed once a
  // class): the methods that allocate `self.<attr>` on a device they are given (the first such
  // statement of each, method order), the methods that assign `self.<attr>` (`None` in
  // `__init__` aside), and the names of the methods called as `self.<name>(...)`.
  struct ClassAttributeWrites {
    std::unordered_map<std::string_view, std::vector<std::pair<const FunctionDef *, const Stmt *>>>
        self_allocations;
    std::unordered_map<std::string_view, std::vector<const FunctionDef *>> assigned_by;
    std::unordered_set<std::string_view> called_methods;
  };
  const ClassAttributeWrites &class_attribute_writes(const ModuleClass &unit);
  std::unordered_map<const ModuleClass *, ClassAttributeWrites> class_attribute_writes_;
  // Fresh tensors assigned to another object's attribute (`layer.attn.x = torch.zeros(...)`) in
  // the package's methods, by attribute, in class and method order: indexed once a package, so
  // that each read of an undeclared `self.x` does not scan every class.
  struct ForeignAllocation {
    const ModuleClass *cls;
    const FunctionDef *method;
    const Stmt *allocation;
  };
  const std::vector<ForeignAllocation> &foreign_allocations(std::string_view attr);
  std::unordered_map<std::string_view, std::vector<ForeignAllocation>> foreign_allocations_;
  bool foreign_allocations_indexed_ = false;
  // Inside a submodule's method inlined for its caller: its sites are the submodule's own,
  // checked when its methods are analysed with its own inputs, not with the caller's; nor does
  // its use of an argument tell what the caller passed (`level` a tensor there, an int here).
  int muted_sites_ = 0;
  // How many running loops are in the first of their two passes (Site::first_pass).
  int first_passes_ = 0;
  // A package module's `forward` run, muted, for tensors its caller made on the CPU and handed
  // to it (`self.vocoder(ids, lang_id=torch.tensor(...))`): those tensors' origins, and whether
  // the callee combines one with a tensor of the model (there are no hooks on one GPU).
  const OriginSet *cpu_probe_ = nullptr;
  bool cpu_probe_hit_ = false;
  CodePlace cpu_probe_use_; // where the probe's tensor met the model's
  void note_probe_hit(const Expr *use);
  // Whether the running branch excludes every child of the unit that holds weights: a branch
  // under the negation of the condition its constructor builds them under
  // (`if self.num_extra == 0:` where `__init__` builds `self.extra` under `if self.num_extra >
  // 0:`).
  bool branch_excludes_weighted_children() const;
  // The tests of the running unit's settings that the path to the code now running passed, in
  // the unit's frames (Site::run_conditions).
  std::vector<RunCondition> run_conditions() const;
  // The configuration attribute every construction of `unit` in the package hands the
  // constructor parameter `self.<name>` copies (`IntLayerNorm(..., quant_mode=config.quant_mode)`);
  // empty when none or several. Memoized.
  const std::string &constructor_argument_setting(const ModuleClass *unit,
                                                  const std::string &name) const;
  mutable std::map<std::pair<const ModuleClass *, std::string>, std::string>
      constructor_argument_settings_;
  // Per unit, the condition (as text) and branch its constructor builds each weighted child
  // under; empty when one is built under no such condition. Memoized: asked for every site.
  const std::vector<std::pair<std::string, bool>> &
  weighted_child_guards(const ModuleClass *unit) const;
  mutable std::unordered_map<const ModuleClass *, std::vector<std::pair<std::string, bool>>>
      weighted_child_guards_;
  // `x is not None` (alone or in an `and`) on an optional argument that defaults to None.
  bool tests_none_default_argument(const Expr *condition) const;
  // Per package class, the child whose output each element of the tuple its forward returns is
  // (`return prediction_scores, seq_relationship_score`, each from a child of its own): empty
  // names for the other elements; empty when it returns anything but such tuples. Memoized.
  // Also, per field of the output object it returns (`return XOutput(mask=mask, ...)`), the
  // child that made it, for the fields some child made (two children at least).
  struct ReturnedChildOutputs {
    std::vector<std::string> elements;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  const ReturnedChildOutputs &returned_child_outputs(const ModuleClass *cls) const;
  mutable std::unordered_map<const ModuleClass *, ReturnedChildOutputs> returned_child_outputs_;
  Site layer_input_site(const Value &callee, const Expr *call, OriginSet input);
  bool probe_forward(const FunctionDef *forward, const Expr *call, const Args &args,
                     const ModuleClass *cls, const OriginSet &probe);
  void check_handed_cpu_tensors(const ModuleClass *cls, const Expr *site_expr,
                                std::string operation, const Args &args,
                                const std::vector<const Expr *> &exprs);
  void check_generation_inputs(const Expr *returned, const Value &v);
  void check_cpu_input_of_layer(const Value &callee, const Expr *call, const Args &args);
  void probe_module_call(const Value &callee, const ModuleClass *cls, const Expr *call,
                         const Args &args);
  bool probe_meets_model(const Site &site) const;
  // transformers' naive model parallelism (`parallelize()`, deprecated in favour of device
  // maps) sets `self.model_parallel`, moves each block of the model to its GPU by hand and
  // attaches no hook; under a device map the flag stays False. Methods that read the flag run
  // a second time, muted, taking its branches: there a block of a module list is called with its
  // arguments where they are, and one that may sit apart from the block's input fails where the
  // block uses it; so does the input of a head the code placed itself (`self.lm_head(x)`).
  bool hand_parallel_run_ = false;
  // Each argument's probe runs with a budget of its own (a block's forward followed once per
  // argument would soon spend the entry's), all of them within this many statements per entry.
  static constexpr size_t kHandParallelProbeBudget = 10 * kStatementBudget;
  size_t hand_parallel_probe_statements_ = 0;
  static bool is_model_parallel_flag(const Expr *e);
  static bool reads_model_parallel_flag(const FunctionDef &fn);
  void check_unhooked_block_call(const Value &callee, const Expr *call, const Args &args);
  void check_unhooked_layer_call(const Value &callee, const Expr *call, const Args &args);
  // Arguments of a submodule's `forward` that no call in the package passes: None there.
  std::unordered_set<const Parameter *> unpassed_arguments_;
  // `forward` flags every call in the package sets to one literal (find_constant_flags).
  std::unordered_map<const Parameter *, bool> constant_flags_;
  void find_list_element_flags();
  // A condition on such flags of the running function (`if not reverse:`), when decided.
  std::optional<bool> flag_truth(const Expr *e, int depth = 0) const;
  void find_unpassed_arguments();
  // A private method (`_single_frame_forward`): every call the package makes is `self._name(...)`
  // and nothing else names it, so its calls are known like a child's (known_calls_).
  void find_private_method_calls();
  // The calls of a submodule class's own `forward` when the package shows every one (single
  // children and list elements, as find_unpassed_arguments and find_list_element_flags read
  // them), each with the class whose method makes it.
  struct KnownCalls {
    const FunctionDef *forward = nullptr;
    std::vector<std::pair<const Expr *, const ModuleClass *>> calls;
    // Reads of the class's module list through another object: calls there are not seen.
    std::vector<std::pair<const Expr *, const ModuleClass *>> other_uses;
  };
  void
  note_list_reads_elsewhere(std::string_view list,
                            std::vector<std::pair<const Expr *, const ModuleClass *>> &uses) const;
  std::vector<KnownCalls> known_calls_;
  // `self.X = <literal>` in a module's `__init__`, stored nowhere else in the package
  // (constant_arguments.cpp).
  struct ConstantAttribute {
    const ModuleClass *owner = nullptr;
    const SyntaxFile *file = nullptr; // the file of the `__init__` storing it
    const Expr *value = nullptr;
  };
  std::unordered_map<std::string_view, ConstantAttribute> constant_attributes_;
  void find_constant_attributes();
  void note_embeddings_instead(Site &site) const;
  void note_argument_conditions(Site &site) const;
  const ConstantAttribute *constant_attribute(const ModuleClass *cls, std::string_view name) const;
  // None-default `forward` arguments every call that runs leaves None (unpassed_arguments_ and
  // those handed on from them).
  std::unordered_set<const Parameter *> always_none_arguments_;
  void find_always_none_arguments();
  // None-default `forward` arguments some running call of the package hands a value it made
  // (`encoder_hidden_states=encoder_outputs[0]`), not only None or the caller's own argument of
  // that kind: a model of the package runs the branch that needs them.
  std::unordered_set<const Parameter *> package_handed_arguments_;
  void find_package_handed_arguments();
  // A condition of `fn` (a method of `cls`) the package decides: constant attributes, arguments
  // always None (none_unchecked: without looking whether `fn` rebinds them).
  std::optional<bool> decided_condition(const Expr *e, const FunctionDef &fn,
                                        const ModuleClass *cls, bool none_unchecked = false,
                                        int depth = 0) const;
  // Whether code of `fn` that runs stores to `name` before `at` (or in a loop around it).
  bool rebound_where_run(const FunctionDef &fn, const ModuleClass *cls, std::string_view name,
                         const SourceRange &at) const;
  // Whether `call` (in a method of `caller`, returned in `method`) sits in code that runs.
  bool call_runs(const Expr *call, const ModuleClass *caller, const FunctionDef **method) const;
  void note_index_tensor(std::string_view operation, Args &args, size_t shift);
  void note_tensor(const Value &v) const {
    if (muted_sites_ == 0)
      mark_tensor(v);
  }

  // ---- abstract values, bounded by limits_.max_origins ----
  void add_origins(OriginSet &into, const OriginSet &from) const {
    devlint::add_origins(into, from, limits_.max_origins);
  }
  Value join(const Value &a, const Value &b) const {
    return devlint::join(a, b, limits_.max_origins);
  }
  // The innermost loop of the running frame (not of the code that called it), or null.
  const Stmt *running_loop() const {
    return loops_.size() > frame_->outer_loops ? loops_.back() : nullptr;
  }
  // Where a module list's element is picked: the innermost loop running, in this frame or a
  // caller's. A helper called on every pass (`layer = self._get_layer(index)`) picks a different
  // element each time, like `self.layers[index]` written in the loop itself.
  const Stmt *picking_loop() const { return loops_.empty() ? nullptr : loops_.back(); }
  // An element picked in `picked` and called in this frame's running loop is the same module on
  // every pass of it: picked before any loop ran, or by a caller before this frame's loops began.
  bool picked_before_running_loop(const Stmt *picked) const {
    auto callers_end = loops_.begin() + static_cast<std::ptrdiff_t>(frame_->outer_loops);
    return !picked || std::find(loops_.begin(), callers_end, picked) != callers_end;
  }
  // Joins the environments of two paths; a member assigned on one path only is, on the other,
  // what the class declares.
  Env join_env(const Env &a, const Env &b);
  // Frame::DecidedPath: records what an `if` on `test` gave each path, and finds the one an
  // earlier `if` on the same test recorded.
  void record_decided_path(const Expr *test, const Env &before, const Env &then_env,
                           const Env &else_env, const Env &merged);
  const Frame::DecidedPath *decided_path(const Expr *test) const;
  static void take_path(Env &env, const Frame::DecidedPath &path, bool then_branch);
  OriginSet origins_of(const Value &v) const { return devlint::origins_of(v, limits_.max_origins); }
  Value as_tensor(const Value &v) const { return devlint::as_tensor(v, limits_.max_origins); }

  // ---- entries and origins (placement_analysis.cpp) ----
  // Construction and weight initialization run before dispatch, on one device.
  static bool is_setup_method(std::string_view name);
  std::string_view intern(std::string s);
  const Origin *make_origin(OriginKind kind, std::string_view label, SourceRange range);
  Value tensor(const Origin *o);
  // An annotation that may name a tensor (or an object holding some, or a device).
  static bool tensorish_annotation(std::string_view annotation);
  static bool python_number_annotation(std::string_view annotation);
  Value input_for(const Parameter &p);
  // `pipeline`: a method of that diffusers pipeline (operations/pipelines.cpp), run with no unit.
  void analyze_entry(const FunctionDef *fn, const ModuleClass *unit,
                     const ModuleClass *pipeline = nullptr);

  // ---- Python script code (python_scripts.cpp) ----
  // A Python script's top level or one of its functions run as script code.
  bool python_script() const;
  void analyze_script(const SyntaxFile *file);
  void analyze_script_function(const FunctionDef *fn, const SyntaxFile *file);
  // The names the running script's top level bound (so far, or all of them once it ran): the
  // globals its free functions read. Null outside a Python script.
  const Env *script_globals_ = nullptr;
  const SyntaxFile *script_globals_file_ = nullptr;
  void seed_globals(Frame &frame, const FunctionDef *fn) const;
  std::optional<Value> unknown_script_device(const Expr *device_expr, const Value &v);
  bool script_object(const Value &v) const;
  bool moves_script_object_in_place(const Stmt *s);
  // Whether the file makes constructors place their tensors elsewhere than on the CPU.
  bool sets_default_device(const SyntaxFile *file);
  std::unordered_map<const SyntaxFile *, bool> default_device_files_;
  // What a call the analysis cannot see returns, in Python script code.
  Value unknown_call_result(const Expr *call, Value v) const;
  static bool moves_its_inputs(const Value &object);

  // ---- statements (interpreter_statements.cpp) ----
  void exec_block(const std::vector<Stmt *> &body);
  static bool mentions_device(const Expr *e, int depth = 0);
  bool within(const Origin *o, const Stmt *loop) const;
  // Values made by ModuleList elements in this pass become "earlier iteration" values for the
  // next pass: one tensor carried across iterations may come from layers on different devices.
  void age_iterations(Env &env, const Stmt *loop);
  void exec(const Stmt *s);
  // `if is_torch_fx_proxy(x):` / `if torch.jit.is_tracing():` branches run while tracing on the
  // CPU, not under a device map.
  static bool is_tracing_guard(const Expr *e);
  void exec_if(const Stmt *s);
  void exec_try(const Stmt *s);
  void exec_loop(const Stmt *s);
  bool over_budget() const;
  // Branches, loops, try and comprehensions copy and join the environment, which costs its size:
  // in a function with tens of thousands of locals (generated code) the analysis would be
  // quadratic in the function's length. Past this many names they run in sequence on one
  // environment instead (loops once): coarser, but linear, and no hand-written model gets here.
  static constexpr size_t kMaxJoinedEnvironment = 1024;
  bool environment_too_large() const;
  void assign(const Expr *target, const Value &v, const Expr *value_expr);
  // The environment entry for a value stored under a string key of a dict held in a local
  // (`kwargs["decoder_input_ids"] = ids`): "kwargs['decoder_input_ids']", no Python name.
  std::string_view keyword_entry(std::string_view dict, std::string_view key) {
    return intern(std::string(dict) + "['" + std::string(key) + "']");
  }

  // ---- expressions (interpreter_expressions.cpp) ----
  // What a `for` over `iterable` binds on each pass; `pieces_of_one_tensor` (when given) says
  // whether those are pieces of one tensor (`for c in x.unbind(-1)`), all on its device.
  Value element_of(const Expr *iterable, bool *pieces_of_one_tensor = nullptr);
  bool assign_generator_items(const Stmt *s);
  std::optional<Value> module_dict_element(const Expr *iterable);
  Value eval(const Expr *e);
  Value eval_comprehension(const Expr *e);
  std::optional<Value> comprehension_over_literal(const Expr *e);
  std::string_view self_key(const Expr *e);
  Value module_value(std::string_view path, const ChildDecl *child);
  std::optional<std::pair<std::string, const ChildDecl *>>
  input_embeddings_path(const ModuleClass &cls, int depth) const;
  bool is_argument_object(const Expr *object, const Value &v) const;
  Value eval_attribute(const Expr *e);
  // `self.attr` as the running class declares it (a child, parameter or plain tensor), before
  // any method assigns it; nullopt when the class declares no such member.
  std::optional<Value> declared_member(std::string_view attr);
  // `self.k_cache` that no method of the class builds, allocated for every instance alike by
  // code that does not know the instance's device: a method of the class given the device by
  // its caller (`_setup_cache(batch, device)`, never called by the class itself), or another
  // class's method writing it (`layer.attn.k_cache = torch.zeros(...)`). Null otherwise, and
  // when the class also replaces the attribute (which one a read sees depends on the calls).
  const Origin *allocated_for_every_layer(std::string_view attr, const Expr *read);
  // A tensor an override of `train()` caches on `self`: made when `model.eval()` runs.
  const Origin *set_when_mode_changes(std::string_view attr);
  SetupAllocation find_setup_allocation(const ModuleClass &unit, std::string_view attr);
  static const Expr *constant_index(const Expr *e);
  Value eval_subscript(const Expr *e);
  Value binary(const std::string &op, const Expr *left_expr, const Value &l, const Expr *right_expr,
               const Value &r, const Expr *whole);
  static bool names_outputs(const Expr *e, bool element);

  // ---- calls (interpreter_calls.cpp) ----
  Args eval_args(const Expr *call);
  static OriginSet tensor_union(const Args &args);
  Value first_tensor(const Args &args);
  Value call_function(const FunctionDef *fn, const Expr *call, const Args &args, bool bound_self,
                      const ModuleClass *unit);
  static const ChildDecl *returned_child(const FunctionDef *fn, const ModuleClass *cls);
  // `super().name` seen from `running`, a method of `unit` or of one of its package bases.
  static const FunctionDef *base_method(const ModuleClass *unit, const FunctionDef *running,
                                        std::string_view name);
  // An operation model: the call's value when it recognises the call, else nullopt.
  using CallOperation = std::optional<Value> (Interpreter::*)(const Expr *call);
  static const CallOperation kCallOperations[];
  Value eval_call(const Expr *call);
  std::optional<Value> package_function_call(const Expr *call);
  std::optional<Value> attribute_call(const Expr *call);

  // ---- operation models (placement/operations/) ----
  // self_calls.cpp
  std::optional<Value> super_call(const Expr *call);
  std::optional<Value> own_method_call(const Expr *call);
  // module_calls.cpp
  Value module_call(const Value &callee, const Expr *call, const Args &args);
  void mark_through_empty_child(Value &v, const OriginSet &handed, std::string_view child_path,
                                const Expr *forward_call = nullptr);
  void note_module_arguments(const Value &callee, const Expr *call, const Args &args);
  std::optional<Value> local_callable_call(const Expr *call);
  std::optional<Value> handed_module_forward(const Expr *call);
  Value module_receiver_call(const Expr *call, const Value &receiver);
  std::optional<Value> unnamed_submodule_method(const Expr *call, const Value &receiver);
  std::optional<Value> undeclared_list_element_call(const Expr *call, const Value &target,
                                                    const Args &args);
  // `checkpoint(layer, x)`, `self._gradient_checkpointing_func(layer.__call__, x)`: a helper
  // handed a module as its first argument runs it on the others. nullopt when it is not.
  std::optional<Value> call_handed_module(const Expr *call, const Args &args);
  // `self.decoder.apply_delay_pattern_mask(ids, mask)`: a submodule's method other than
  // `forward`, called directly, runs without the submodule's hook.
  Value submodule_method_call(const Value &receiver, const FunctionDef *method, const Expr *call,
                              const Args &args);
  // An origin the submodule's method made from its own state, as the caller names it.
  const Origin *seen_from_caller(const Origin *o, std::string_view receiver_path);
  // python_builtins.cpp
  std::optional<Value> container_builtin_call(const Expr *call);
  std::optional<Value> plain_object_call(const Expr *call);
  std::optional<Value> non_tensor_builtin_call(const Expr *call);
  Value container_method_call(const Expr *call, const Value &receiver);
  void append_to_list(std::string_view name, const Value &added, const Expr *call);
  // A ModuleList output whose loop has ended (and that no running loop takes per pass) is the
  // last pass's: one module's output, `Settled`.
  const Origin *final_pass_version(const Origin *o);
  const Origin *one_pass_version(const Origin *o, const Value &list);
  // losses.cpp
  std::optional<Value> loss_class_call(const Expr *call);
  static Value loss_function();
  // torch_functions.cpp: torch.* / F.* / nn.functional.*
  Value torch_call(const Expr *call, std::string_view leaf, const std::string &dotted);
  Value concat_site(const Expr *call, const Args &args, const std::string &dotted);
  Value weighted_site(const Expr *call, const Args &args, const std::string &name, SiteKind kind);
  // `x` inside `if isinstance(x, list):` (or `(list, tuple)`): a Python sequence, not a tensor.
  bool narrowed_to_python_sequence(const Expr *e) const;
  const Origin *iteration_version(const Origin *o, bool earlier);
  // tensor_methods.cpp
  Value tensor_receiver_call(const Expr *call, const Value &receiver);
  Value tensor_method(const Expr *call, std::string_view method, const Value &receiver);
  // vectors.cpp: 1-D CPU tensors and their 0-dim elements.
  // Marks `made` when the constructor `call` makes a 1-D tensor on the CPU.
  void mark_vector(const Expr *call, std::string_view leaf, const Origin *made) const;
  // An element read by a Python int, or by iterating: 0-dim, when every origin is a 1-D CPU
  // tensor; nullopt otherwise.
  static std::optional<Value> zero_dim_element(const Value &vector);
  // What `call` made of `v` may have another rank: its 1-D origins made before it lose the mark.
  Value maybe_reshaped(const Value &v, const Expr *call);
  // device_arguments.cpp
  static bool is_device_literal(std::string_view s);
  // What a device argument says: Device/Tensor origins, a literal, or nothing known.
  Value placed_by(Value v, const Expr *device_expr, const Expr *at, bool made);
  Value device_argument(const Expr *arg, const Value &v, bool report_literal);
  // generate.cpp. `result`: what the call evaluates to, when not the first tensor argument.
  Value generate_call(const Expr *call, const Args &args, const std::optional<Value> &result);
  Value generated_ids(const Expr *call, const Args &args, const std::optional<Value> &result);
  // external_calls.cpp
  Value computed_callee_call(const Expr *call);
  std::optional<Value> handed_method_call(const Expr *call, const Args &args);
  void forget_filled_containers(const Expr *call);
  Value kernel_call(const Expr *call, const Args &args);
  // cpu_probes.cpp: check_handed_cpu_tensors, check_generation_inputs, check_cpu_input_of_layer,
  // probe_module_call (declared with the probe's state above).

  // ---- devices chosen at run time, where code places explicitly (run_time_devices.cpp) ----
  // LibTorch code, and Python script code: no hook moves anything there.
  bool places_explicitly() const {
    return frame_->file && (frame_->file->explicit_placement || frame_->script);
  }
  // A literal device (`"cuda:1"`) or one chosen at run time.
  static bool is_device_value(const Value &v);
  Value run_time_device(std::string_view label, std::string_view key, SourceRange range);
  // Two device values met at a join (`c ? kCUDA : kCPU`, two returns, two branches): one chosen
  // at run time, keyed by `key`, unless they are the same. nullopt: not two device values.
  std::optional<Value> join_devices(const Value &a, const Value &b, std::string_view key,
                                    SourceRange range);
  // A run-time device stored under `name` is spelled so from here on (its key is kept).
  Value named_device(const Value &v, std::string_view name, SourceRange range);
  // `torch::Device(...)` that is no literal: the device its argument holds, else a new one.
  Value device_construction(const Expr *call);
  // A helper's parameter receiving a run-time device spells it by the parameter's name, in
  // that argument and in every other one placed on it (the model handed along with it).
  void rename_devices_for_parameters(const FunctionDef *fn, size_t first, Args &args);
  // What a helper returned, a device it chose on each of its paths, keyed by the call.
  Value device_returned(Value returned, const Expr *call);

  // ---- member modules script code moves on their own (caller_child_moves.cpp) ----
  // `model->head->to(d)` in LibTorch script code, with `d` apart from where the rest of `model`
  // is: found by a muted run of the script functions before the classes are analysed.
  struct CallerChildMove {
    const ModuleClass *unit;
    std::string_view child;
    const Origin *device; // LiteralDevice or RunTimeDevice, made at the `->to` call
    const FunctionDef *function;
    std::string_view variable;
    bool cancelled; // the model was moved as a whole afterwards: the member with it
  };
  std::vector<CallerChildMove> caller_child_moves_;
  bool collecting_caller_moves_ = false;
  void collect_caller_child_moves();
  // The class of a model variable of script code (constructed in the running function, or a
  // parameter of its type) and whether where it was placed is known there.
  struct ScriptModel {
    const ModuleClass *cls = nullptr;
    bool placement_known = false;
  };
  ScriptModel script_model(std::string_view name) const;
  void note_caller_move(const Expr *target, const Value &value, const Expr *value_expr);
  // The device script code moved `unit`'s member at `path` (its first segment) to, or null.
  const Origin *caller_moved_child(const ModuleClass *unit, std::string_view path) const;
  // Inside `unit`, a call of such a member with the model's own tensors.
  Value member_parameter(std::string_view path, SourceRange range);
  void caller_moved_child_call(const Expr *call, const Origin *child_output, const Args &args);

  // ---- diffusers pipelines (operations/pipelines.cpp) ----
  // The components a pipeline registers (`self.register_modules(...)`) that may hold weights, in
  // registration order, and the ones whose devices are `_execution_device` and `self.device`
  // (empty: unknown).
  struct PipelineComponents {
    bool registered = false;
    std::vector<std::string_view> modules;
    // The package class each module's annotation names, when it names one.
    std::unordered_map<std::string_view, const ModuleClass *> classes;
    std::string_view execution;
    std::string_view device;
    std::vector<std::string_view> schedulers; // components annotated as diffusers schedulers
  };
  std::unordered_map<const ModuleClass *, PipelineComponents> pipeline_components_;
  // Null when `cls` registers no components (no pipeline).
  const PipelineComponents *pipeline_components(const ModuleClass &cls);
  bool is_component(std::string_view attr) const;
  // A tensor on the device the pipeline's map dealt the component `label` starts with, or on
  // the device the running method moved the component to (`self.vae.to(x.device)`).
  Value component_tensor(std::string_view label, SourceRange range);
  // The environment entry holding where the running method moved a component (`self.vae.to(d)`).
  std::string_view moved_component_key(std::string_view component);
  // The components of the pipeline whose method is running, or null.
  const PipelineComponents *running_pipeline() const;
  std::optional<Value> pipeline_attribute(const Expr *e);
  std::optional<Value> pipeline_call(const Expr *call);
  std::optional<Value> scheduler_call(const Expr *call, const Args &args);

  // ---- site emission (site_emission.cpp) ----
  // How a call is named in a message: `model(...)`; in C++ as written, `model->forward(...)`.
  std::string call_spelling(const Expr *call, const Expr *callee) const;
  // `x += y` is reported on the whole statement: one stand-in expression per statement, owned by
  // the interpreter, so revisits (loop passes, inlining) find the same site.
  const OriginSet *emit_statement_site(Site &site);
  // Reports a site; returns the anchor's origins when it was reported, else null.
  const OriginSet *emit(Site &site);
  void hardcoded(const Expr *e, std::string device);
  Value loss_site(const Expr *call, const Args &args, std::string name);
  Value operation_site(SiteKind kind, const Expr *call, const Args &args, std::string name,
                       const Value *receiver);
  // Script code: `model(...)` / `model.generate(...)` on a model placed on a literal device, with
  // tensors placed on literal devices (shared/seeds/003).
  // LibTorch: a call, inside a module, of a child that __init__ placed on a literal device,
  // with tensors that may be elsewhere (a model split by hand across GPUs).
  void placed_child_call(const Expr *call, const ChildDecl &child, const Args &args);
  Value script_model_call(const Expr *call, const Expr *model_expr, const Value &model,
                          const Args &args);
};

} // namespace devlint
