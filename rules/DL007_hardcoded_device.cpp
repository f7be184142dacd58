#include "model/text.h"
#include "rules/rule.h"

namespace devlint {
namespace {

// A file that runs as a program (`if __name__ == "__main__":` at its top level): the script
// places its modules itself; no device map is involved.
constexpr size_t kMaxSummary = 100; // as site_finding's: the first line a terminal shows

bool scan_runs_as_program(const SyntaxFile &file) {
  for (const Stmt *s : file.body) {
    const Expr *c = s->kind == StmtKind::If ? s->value : nullptr;
    if (c && c->kind == ExprKind::Compare && c->operands.size() == 2 &&
        (is_name(c->operands[0], "__name__") || is_name(c->operands[1], "__name__")))
      return true;
  }
  return false;
}

// Asked for every finding: a file's findings come one after another, so the last answer is kept
// (a file of 100,000 classes, each with a finding, would otherwise be scanned 100,000 times).
bool runs_as_program(const SyntaxFile &file) {
  struct Memo {
    const SyntaxFile *file = nullptr;
    const SourceFile *source = nullptr;
    const Stmt *first = nullptr;
    size_t statements = 0;
    bool result = false;
  };
  thread_local Memo memo;
  const Stmt *first = file.body.empty() ? nullptr : file.body.front();
  if (memo.file != &file || memo.source != file.source || memo.first != first ||
      memo.statements != file.body.size())
    memo = {&file, file.source, first, file.body.size(), scan_runs_as_program(file)};
  return memo.result;
}

class HardcodedDeviceRule final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL007", "hardcoded-device",
                               "a literal device (`.cuda()`, `.to(\"cuda:0\")`, `device=\"cuda\"`) "
                               "inside a module's method",
                               R"(## What it does
Flags `.cuda()`, `.to("cuda")`, `.to("cuda:1")`, `torch.device("cuda:0")` used as a device, and
`device="cuda"` inside the methods of an `nn.Module`, and in the free functions those methods call
(the finding names the function and the call). In a module of a script (a file with
`if __name__ == "__main__":`) it is a warning: the script places the module itself.

Not flagged: `.cuda(d)` and `.cuda(device=d)` with a device `d` that is no literal (a move to `d`,
as `.to(d)`), a call named `cuda` with arguments torch's `Tensor.cuda` never takes (another
library's, such as hqq's `Quantizer.cuda(W_q, meta=meta, device=d)`), a method named `cuda` (a
wrapper of `nn.Module.cuda` forwards its caller's device), a tensor made only to try an operation
on the device (each of its uses an argument of a call whose result is dropped,
`_ = kernel(q, q, q)`), and tests of a device (`x.device.type == "cuda"`,
`torch.cuda.get_device_properties("cuda")`).

## Why is this bad?
A literal device defeats any device map: under `device_map="auto"` the module may sit on
`cuda:3`, and the tensor made on `cuda:0` meets it there. It also breaks CPU and MPS runs.

## Example
```python
mask = torch.ones(seq_len, seq_len, device="cuda")
```

## Example (C++)
```cpp
torch::Tensor forward(torch::Tensor x) {
  return x + torch::ones({x.size(-1)}, torch::kCUDA);  // the module may be anywhere
}
```

## Fix
Take the device from a tensor in scope: `device=hidden_states.device`. devlint offers no
automatic fix because the right tensor depends on the intent.
)",
                               FixStrategy::None};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return {SiteKind::HardcodedDevice}; }
  Finding report(const SiteContext &context) const override {
    const Site &site = context.site;
    const std::string &device = site.operation;
    const std::string unit(site.unit->name);
    Finding f;
    f.code = std::string(info().code);
    f.rule_name = std::string(info().name);
    f.file = site.file->source;
    f.range = site.expr->range;
    // A free function the module's method calls: the literal is in that function, and the
    // module that runs it is the one a device map places.
    const bool in_helper = site.entry_call.known() && site.function;
    const std::string where =
        in_helper ? "function `" + std::string(site.function->name) + "`, called by `" + unit + "`"
                  : "`" + unit + "`";
    const std::string runs = in_helper ? "it" : "this module";
    const bool script = !site.file->explicit_placement && runs_as_program(*site.file);
    // LibTorch has no device map: the module runs wherever its caller's `->to()` put it; a
    // script's module wherever the script puts it (a portability problem, not a placement bug:
    // a warning, left out of the placement ranking).
    // The short line the terminal shows ends before the advice; the note below repeats it.
    f.summary =
        "Hard-coded device `" + device + "` in " + where +
        (site.file->explicit_placement ? ": " + runs + " runs wherever `->to(device)` puts it"
         : script ? " of this script: " + runs + " runs wherever the script puts it"
                  : ": under a device map " + runs + " may run on any GPU");
    f.message = f.summary + "; take the device from a tensor in scope";
    // A terminal's first line: the caller is in the origins below it.
    if (in_helper && f.summary.size() > kMaxSummary)
      f.summary = "Hard-coded device `" + device + "` in function `" +
                  std::string(site.function->name) + "`: under a device map it may run on any GPU";
    f.why = why(context);
    f.no_fix_reason = "the right device depends on intent; take the device from a tensor in scope";
    if (script)
      f.level = FindingLevel::Warning;
    else
      f.unit_class = unit;
    if (in_helper) {
      const CodePlace &call = site.entry_call;
      RelatedLocation r;
      r.path = call.file->source->display_path;
      r.range = call.expr->range;
      std::string caller = call.unit ? std::string(call.unit->name) + "." : "";
      caller += std::string(call.function->name);
      r.message = "`" + shorten_snippet(call.file->source->slice(call.expr->range)) + "`: where `" +
                  caller + "` calls it, line " + std::to_string(call.expr->range.line);
      f.origins.push_back(std::move(r));
    }
    f.operand_origins.push_back({OriginKind::LiteralDevice, device, false, device, ""});
    f.operand_origins.push_back({OriginKind::Input, "", false, "its inputs", ""});
    return f;
  }
  std::string why(const SiteContext &context) const override {
    const Site &site = context.site;
    const std::string device = "`" + site.operation + "`";
    if (!site.file->explicit_placement && runs_as_program(*site.file))
      return device + " names one device whatever device the script put the module on: run on "
                      "the CPU or another GPU, what is placed here meets its tensors there";
    if (site.file->explicit_placement)
      return device + " names one device whatever device `->to()` moved the module to: when the "
                      "module runs on another, what is placed here meets its tensors there";
    return device + " names one device whatever device the module's weights were given: under a "
                    "device map (or on the CPU, or another GPU) the module may sit elsewhere, "
                    "and what is placed here meets its tensors there";
  }
};

} // namespace

const Rule &hardcoded_device_rule() {
  static const HardcodedDeviceRule rule;
  return rule;
}

} // namespace devlint
