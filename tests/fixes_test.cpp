// Fix edits and their application.
#include <gtest/gtest.h>

#include "fixes/apply_fixes.h"
#include "fixes/device_move_fix.h"
#include "frontend/python/python_frontend.h"
#include "test_support.h"

namespace devlint {
namespace {

Finding with_fix(std::vector<TextEdit> edits, Applicability a = Applicability::Safe) {
  Finding f;
  f.fix = Fix{a, "t", std::move(edits)};
  return f;
}

TEST(ApplyFixes, AppliesNonOverlappingAndDefersOverlapping) {
  std::string text = "a + b + c";
  Finding one = with_fix({{4, 5, "b.to(a.device)"}});
  Finding overlapping = with_fix({{4, 9, "X"}});
  Finding two = with_fix({{8, 9, "c.to(a.device)"}});
  auto result = apply_fixes(text, {&two, &overlapping, &one}, [](const Finding &) { return true; });
  EXPECT_EQ(result.text, "a + b.to(a.device) + c.to(a.device)");
  EXPECT_EQ(result.applied, 2u);
  EXPECT_EQ(result.skipped, 1u);
}

TEST(ApplyFixes, RespectsApplicability) {
  std::string text = "x";
  Finding unsafe = with_fix({{0, 1, "y"}}, Applicability::Unsafe);
  auto result = apply_fixes(text, {&unsafe}, [](const Finding &f) {
    return f.fix->applicability == Applicability::Safe;
  });
  EXPECT_EQ(result.text, "x");
  EXPECT_EQ(result.applied, 0u);
}

TEST(DeviceFix, FreshConstructorGetsDeviceKeyword) {
  const char *text = R"(
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        return torch.cat([h, torch.zeros(1, 4)], dim=0)
)";
  auto findings = testing::check_text(text);
  ASSERT_EQ(findings.size(), 1u);
  ASSERT_TRUE(findings[0].fix.has_value());
  auto result = apply_fixes(text, {&findings[0]}, [](const Finding &) { return true; });
  EXPECT_NE(result.text.find("torch.zeros(1, 4, device=h.device)"), std::string::npos);
}

TEST(DeviceFix, NoFixWithoutPlainAnchor) {
  const char *text = R"(
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        return self.a(x) + self.b(x)

class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
)";
  auto findings = testing::check_plain_modules(text);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].fix.has_value());
  EXPECT_FALSE(findings[0].no_fix_reason.empty());
}

TEST(DeviceFix, TupleElementAnchorKeepsTheIndex) {
  auto file = testing::source("y = torch.cat([past_key_value[0], key], dim=2)\nz = x[..., 1:]\n");
  auto syntax = lower_python(*file);
  const Expr *cat = syntax->body[0]->value;
  const Expr *first = cat->operands[1]->operands[0];
  EXPECT_EQ(device_anchor_text(*file, first), "past_key_value[0]");
  const Expr *sliced = syntax->body[1]->value;
  EXPECT_EQ(device_anchor_text(*file, sliced), "x");
}

} // namespace
} // namespace devlint

namespace devlint {
namespace {

std::string fix_all(const std::string &text) {
  auto findings = testing::check_text(text);
  std::vector<const Finding *> pointers;
  for (const Finding &f : findings)
    pointers.push_back(&f);
  return apply_fixes(text, pointers, [](const Finding &) { return true; }).text;
}

const char *kHeadPrefix = R"(
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
)";

TEST(DeviceFix, AnOperandMovedToTheCpuGetsOneMoveNotTwo) {
  std::string text = std::string(kHeadPrefix) + R"(
    def forward(self, x):
        h = self.proj(x)
        return torch.cat([h, x.cpu()], dim=0)
)";
  std::string fixed = fix_all(text);
  EXPECT_NE(fixed.find("torch.cat([h, x.to(h.device)], dim=0)"), std::string::npos) << fixed;
}

TEST(DeviceFix, FreshTensorMadeEarlierIsCreatedOnTheAnchorsDeviceOnce) {
  // One constructor flows into two sites: both findings carry the same edit, applied once.
  std::string text = std::string(kHeadPrefix) + R"(
    def forward(self, x):
        h = self.proj(x)
        idx = torch.arange(4)
        return h + idx, h * idx
)";
  auto findings = testing::check_text(text);
  ASSERT_EQ(findings.size(), 2u);
  std::string fixed = fix_all(text);
  EXPECT_NE(fixed.find("idx = torch.arange(4, device=h.device)\n"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("return h + idx, h * idx"), std::string::npos) << fixed;
}

TEST(DeviceFix, ConstructorAnchorIsItsDeviceArgument) {
  std::string text = std::string(kHeadPrefix) + R"(
    def forward(self, x):
        # The file's longest line sets the limit fixes keep to; this one leaves them room to grow.
        return torch.cat([torch.ones(2, device=x.device), torch.zeros(2)])
)";
  std::string fixed = fix_all(text);
  EXPECT_NE(fixed.find("torch.zeros(2, device=x.device)"), std::string::npos) << fixed;
}

TEST(DeviceFix, ArgumentNamesTheDeviceOnlyWhereItHoldsTheArgument) {
  // `scores` is reassigned after the constructor: the argument is still what it names there.
  std::string before = std::string(kHeadPrefix) + R"(
    def forward(self, scores):
        position = torch.arange(4)
        scores = scores.float()
        total = scores + position
        return total
)";
  EXPECT_NE(fix_all(before).find("position = torch.arange(4, device=scores.device)"),
            std::string::npos)
      << fix_all(before);
  // Reassigned before and after the constructor: no name holds the anchor's device there, so
  // the value is moved at the site instead.
  std::string reassigned = std::string(kHeadPrefix) + R"(
    def forward(self, scores):
        scores = scores.float()
        position = torch.arange(4)
        total = scores + position
        scores = total
        return scores
)";
  std::string fixed = fix_all(reassigned);
  EXPECT_NE(fixed.find("position = torch.arange(4)\n"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("total = scores + position.to(scores.device)"), std::string::npos) << fixed;
}

TEST(ApplyFixes, IdenticalFixesOfTwoFindingsApplyOnce) {
  std::string text = "f(torch.zeros(2))";
  Finding one = with_fix({{15, 15, ", device=x.device"}});
  Finding two = with_fix({{15, 15, ", device=x.device"}});
  auto result = apply_fixes(text, {&one, &two}, [](const Finding &) { return true; });
  EXPECT_EQ(result.text, "f(torch.zeros(2, device=x.device))");
  EXPECT_EQ(result.applied, 2u);
  EXPECT_EQ(result.applied_findings.size(), 2u);
}

} // namespace
} // namespace devlint

namespace devlint {
namespace {

// The move edit for the first operand of the binary operation in `text`'s first statement.
std::string moved_operand(const std::string &text, int side) {
  auto file = testing::source(text);
  auto syntax = lower_python(*file);
  const Expr *value = syntax->body[0]->value;
  TextEdit edit = move_to_device_edit(*file, value->operands[side], "h");
  std::string out = file->text;
  out.replace(edit.begin, edit.end - edit.begin, edit.replacement);
  return out;
}

TEST(DeviceFix, MergesAMoveIntoAnExistingDtypeCast) {
  EXPECT_EQ(moved_operand("y + x.to(target_dtype)\n", 1), "y + x.to(h.device, target_dtype)\n");
  EXPECT_EQ(moved_operand("y + x.to(dtype=torch.float16)\n", 1),
            "y + x.to(h.device, dtype=torch.float16)\n");
}

TEST(DeviceFix, ReusesTheSourcesParenthesesAndMovesTheTensorBesideANumber) {
  EXPECT_EQ(moved_operand("y * (w - z)\n", 1), "y * (w - z).to(h.device)\n");
  EXPECT_EQ(moved_operand("y * (1.0 - w)\n", 1), "y * (1.0 - w.to(h.device))\n");
  EXPECT_EQ(moved_operand("y + 0.5 * w\n", 1), "y + 0.5 * w.to(h.device)\n");
  // The parentheses of a call are the call's.
  EXPECT_EQ(moved_operand("y + f(w - z)\n", 1), "y + f(w - z).to(h.device)\n");
  EXPECT_EQ(moved_operand("y[~m.bool()]\n", 1), "y[(~m.bool()).to(h.device)]\n");
}

TEST(DeviceFix, FitsLineLimitCountsOnlyChangedLines) {
  auto file = testing::source("a = b + c\nlong_untouched_line_here = 1\n");
  EXPECT_TRUE(fits_line_limit(*file, {{8, 9, "c.to(b.device)"}}, 22));
  EXPECT_FALSE(fits_line_limit(*file, {{8, 9, "c.to(b.device)"}}, 21));
}

TEST(DeviceFix, HoistsOnlyOutOfSimpleStatementsAndCertainOperands) {
  const char *text = "    loss = loss_fct(logits.view(-1, n), labels.view(-1))\n"
                     "    out = [x + labels for x in xs]\n"
                     "    out = logits + labels if flag else logits\n"
                     "    out = flag and logits + labels\n";
  auto file = testing::source(std::string("def f(logits, labels, xs, flag, n):\n") + text);
  auto syntax = lower_python(*file);
  const FunctionDef *f = syntax->functions[0];
  const Stmt &loss = *f->body[0];
  auto edit = hoisted_move_edit(*file, loss, loss.value->operands[2], "logits");
  ASSERT_TRUE(edit.has_value());
  EXPECT_EQ(edit->replacement, "    labels = labels.to(logits.device)\n");
  EXPECT_EQ(edit->begin, file->line_starts[1]);
  // Inside a comprehension, a conditional expression or after `and`: not hoisted.
  const Stmt &comprehension = *f->body[1];
  const Expr *element = comprehension.value->operands[0];
  EXPECT_FALSE(hoisted_move_edit(*file, comprehension, element->operands[1], "x").has_value());
  const Stmt &conditional = *f->body[2];
  const Expr *chosen = conditional.value->operands[0];
  EXPECT_FALSE(hoisted_move_edit(*file, conditional, chosen->operands[1], "logits").has_value());
  const Stmt &short_circuit = *f->body[3];
  const Expr *right = short_circuit.value->operands[1];
  EXPECT_FALSE(hoisted_move_edit(*file, short_circuit, right->operands[1], "logits").has_value());
}

// The new line rebinds the name for the whole statement: another read of it there would move too.
TEST(DeviceFix, HoistsOnlyANameTheStatementReadsOnlyWhereItMoves) {
  const char *text = "    loss = ce(sim_i2t, targets) + ce(sim_t2i, targets)\n"
                     "    loss = ce(logits, labels[labels > 0])\n"
                     "    labels = ce(logits, labels)\n";
  auto file =
      testing::source(std::string("def f(sim_i2t, sim_t2i, targets, logits, labels):\n") + text);
  auto syntax = lower_python(*file);
  const FunctionDef *f = syntax->functions[0];
  // `targets` is read by the other loss as well, beside logits on another device.
  const Stmt &two_losses = *f->body[0];
  const Expr *second = two_losses.value->operands[1];
  const Expr *first = two_losses.value->operands[0];
  EXPECT_FALSE(hoisted_move_edit(*file, two_losses, second->operands[2], "sim_t2i").has_value());
  // Both reads moved by one fix to one device: hoisted once for both.
  EXPECT_TRUE(hoisted_move_edit(*file, two_losses, second->operands[2], "sim_t2i",
                                {first->operands[2], second->operands[2]})
                  .has_value());
  // Reads inside the moved operand, and the name bound by the statement, move with it.
  const Stmt &masked = *f->body[1];
  EXPECT_TRUE(hoisted_move_edit(*file, masked, masked.value->operands[2], "logits").has_value());
  const Stmt &rebound = *f->body[2];
  EXPECT_TRUE(hoisted_move_edit(*file, rebound, rebound.value->operands[2], "logits").has_value());
}

} // namespace
} // namespace devlint
