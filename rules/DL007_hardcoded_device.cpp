#include "rules/rule.h"

namespace devlint {
namespace {

class HardcodedDeviceRule final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL007", "hardcoded-device",
                               "a literal device (`.cuda()`, `.to(\"cuda:0\")`, `device=\"cuda\"`) "
                               "inside a module's method",
                               R"(## What it does
Flags `.cuda()`, `.to("cuda")`, `.to("cuda:1")`, `torch.device("cuda:0")` used as a device, and
`device="cuda"` inside the methods of an `nn.Module`.

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
    Finding f;
    f.code = std::string(info().code);
    f.rule_name = std::string(info().name);
    f.file = site.file->source;
    f.range = site.expr->range;
    // LibTorch has no device map: the module runs wherever its caller's `->to()` put it.
    // The short line the terminal shows ends before the advice; the note below repeats it.
    f.summary =
        "Hard-coded device `" + device + "` in `" + std::string(site.unit->name) +
        (site.file->explicit_placement ? "`: the module runs wherever `->to(device)` puts it"
                                       : "`: under a device map this module may run on any GPU");
    f.message = f.summary + "; take the device from a tensor in scope";
    f.no_fix_reason = "the right device depends on intent; take the device from a tensor in scope";
    f.unit_class = std::string(site.unit->name);
    f.operand_origins.push_back({OriginKind::LiteralDevice, device, false, device});
    f.operand_origins.push_back({OriginKind::Input, "", false, "its inputs"});
    return f;
  }
};

} // namespace

const Rule &hardcoded_device_rule() {
  static const HardcodedDeviceRule rule;
  return rule;
}

} // namespace devlint
