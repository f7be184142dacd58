// The Python frontend and the module model: what tree-sitter code is lowered into.
#include <gtest/gtest.h>

#include "frontend/python/python_frontend.h"
#include "model/module_model.h"
#include "test_support.h"

namespace devlint {
namespace {

using testing::source;

TEST(PythonFrontend, LowersClassesMethodsAndStatements) {
  auto file = source(R"(
class Block(nn.Module):
    def forward(self, x, mask: Optional[torch.Tensor] = None, *args, use_cache: bool = False, **kwargs):
        if x is None:
            y = 1
        elif mask:
            y = 2
        else:
            y = 3
        for i, layer in enumerate(self.layers):
            x = layer(x)
        return x + y
)");
  auto syntax = lower_python(*file);
  ASSERT_EQ(syntax->classes.size(), 1u);
  const ClassDef *cls = syntax->classes[0];
  EXPECT_EQ(cls->name, "Block");
  ASSERT_EQ(cls->methods.size(), 1u);
  const FunctionDef *fn = cls->methods[0];
  ASSERT_EQ(fn->parameters.size(), 6u);
  EXPECT_EQ(fn->parameters[2].name, "mask");
  EXPECT_EQ(fn->parameters[2].annotation, "Optional[torch.Tensor]");
  EXPECT_TRUE(fn->parameters[3].variadic);
  EXPECT_EQ(fn->parameters[4].annotation, "bool");
  EXPECT_TRUE(fn->parameters[5].variadic);
  ASSERT_EQ(fn->body.size(), 3u);
  const Stmt *if_stmt = fn->body[0];
  ASSERT_EQ(if_stmt->kind, StmtKind::If);
  // elif becomes a nested If in the else branch
  ASSERT_EQ(if_stmt->orelse.size(), 1u);
  EXPECT_EQ(if_stmt->orelse[0]->kind, StmtKind::If);
  EXPECT_EQ(if_stmt->orelse[0]->orelse.size(), 1u);
  EXPECT_EQ(fn->body[1]->kind, StmtKind::For);
  EXPECT_EQ(fn->body[1]->targets[0]->kind, ExprKind::Tuple);
  const Stmt *ret = fn->body[2];
  ASSERT_EQ(ret->kind, StmtKind::Return);
  EXPECT_EQ(ret->value->kind, ExprKind::BinaryOp);
  EXPECT_EQ(ret->value->text, "+");
  EXPECT_EQ(ret->value->range.line, 12u);
  EXPECT_TRUE(syntax->syntax_errors.empty());
}

TEST(PythonFrontend, LowersCallsWithKeywordsAndStrings) {
  auto file = source("y = torch.cat((a, b.to('cuda:1')), dim=0)\n");
  auto syntax = lower_python(*file);
  ASSERT_EQ(syntax->body.size(), 1u);
  const Expr *call = syntax->body[0]->value;
  ASSERT_EQ(call->kind, ExprKind::Call);
  EXPECT_EQ(call->text, "cat");
  EXPECT_EQ(dotted_name(call->operands[0]), "torch.cat");
  ASSERT_NE(call->keyword("dim"), nullptr);
  const Expr *tuple = call->operands[1];
  ASSERT_EQ(tuple->kind, ExprKind::Tuple);
  const Expr *to = tuple->operands[1];
  EXPECT_EQ(to->operands[1]->kind, ExprKind::String);
  EXPECT_EQ(to->operands[1]->text, "cuda:1");
}

TEST(PythonFrontend, RecordsSyntaxErrorsAndKeepsTheRest) {
  auto file = source("class A(nn.Module):\n    def forward(self, x):\n        return x +\n\n"
                     "def helper(y):\n    return y\n");
  auto syntax = lower_python(*file);
  EXPECT_FALSE(syntax->syntax_errors.empty());
  bool helper_found = false;
  for (const FunctionDef *f : syntax->functions)
    helper_found |= f->name == "helper";
  EXPECT_TRUE(helper_found);
}

TEST(PythonFrontend, SurvivesDeepNesting) {
  std::string text = "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n";
  auto file = source(text);
  auto syntax = lower_python(*file);
  EXPECT_EQ(syntax->body.size(), 1u);
}

TEST(ModuleModel, CollectsChildrenParametersAndNoSplit) {
  auto file = source(R"(
class PreTrained(PreTrainedModel):
    _no_split_modules = ["Block"]
    _skip_keys_device_placement = "past_key_values"

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.mlp = nn.Linear(4, 4)
        self.act = ACT2FN[config.hidden_act]
        self.drop = nn.Dropout(0.1)

class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        def build(i):
            return Block(config)
        self.layers = nn.ModuleList([build(i) for i in range(3)])
        self.boi = nn.Parameter(torch.zeros(1, 1, 4))
        self.register_buffer("inv_freq", torch.arange(4), persistent=False)
        self.cos_cached = torch.arange(8).float()
        self.loss_fct = CrossEntropyLoss()

class Model(PreTrained):
    def __init__(self, config):
        super().__init__(config)
        self.encoder = Encoder(config)
)");
  auto syntax = lower_python(*file);
  auto pkg = build_package({syntax.get()}, {});
  EXPECT_EQ(pkg->find_class("Block")->scope->no_split_modules, std::vector<std::string>{"Block"});
  EXPECT_EQ(pkg->find_class("Block")->scope->skip_keys,
            std::vector<std::string>{"past_key_values"});
  const ModuleClass *block = pkg->find_class("Block");
  ASSERT_NE(block, nullptr);
  ASSERT_EQ(block->children.size(), 3u);
  EXPECT_TRUE(block->children[0].has_parameters);
  EXPECT_FALSE(block->children[1].has_parameters); // activation
  EXPECT_FALSE(block->children[2].has_parameters); // dropout
  const ModuleClass *encoder = pkg->find_class("Encoder");
  const ChildDecl *layers = encoder->find_child("layers");
  ASSERT_NE(layers, nullptr);
  EXPECT_EQ(layers->kind, ChildKind::List);
  EXPECT_EQ(layers->class_name, "Block");
  EXPECT_EQ(layers->resolved, block);
  ASSERT_NE(encoder->find_parameter("boi"), nullptr);
  ASSERT_NE(encoder->find_parameter("inv_freq"), nullptr);
  EXPECT_TRUE(encoder->find_parameter("inv_freq")->is_buffer);
  ASSERT_NE(encoder->find_plain_tensor("cos_cached"), nullptr);
  EXPECT_TRUE(encoder->find_plain_tensor("cos_cached")->created_on_cpu);
  const ChildDecl *loss = encoder->find_child("loss_fct");
  ASSERT_NE(loss, nullptr);
  EXPECT_TRUE(loss->is_loss);
  const ModuleClass *model = pkg->find_class("Model");
  EXPECT_TRUE(model->is_pretrained_model);
  EXPECT_TRUE(model->is_module);
}

} // namespace
} // namespace devlint

namespace devlint {
namespace {

TEST(ModuleModel, ModuleListFilledByAppend) {
  auto file = testing::source(R"(
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(n):
            self.layers.append(Block())
)");
  auto syntax = lower_python(*file);
  auto pkg = build_package({syntax.get()}, {});
  const ChildDecl *layers = pkg->find_class("Stack")->find_child("layers");
  ASSERT_NE(layers, nullptr);
  EXPECT_EQ(layers->class_name, "Block");
  EXPECT_EQ(layers->resolved, pkg->find_class("Block"));
}

} // namespace
} // namespace devlint
