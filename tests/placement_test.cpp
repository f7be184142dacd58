// The placement analysis: split rules, origins through control flow, loop-carried values.
#include <algorithm>
#include <gtest/gtest.h>

#include "frontend/python/python_frontend.h"
#include "placement/unit_placement.h"
#include "test_support.h"

namespace devlint {
namespace {

using testing::check_plain_modules;
using testing::check_text;

std::vector<std::string> codes(const std::vector<Finding> &findings) {
  std::vector<std::string> out;
  for (const Finding &f : findings)
    out.push_back(f.code + ":" + std::to_string(f.range.line));
  return out;
}

const char *kSplitBlock = R"(
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, hidden_states):
        out = self.norm(self.mlp(hidden_states))
        return hidden_states + out

class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
)";

TEST(Placement, ResidualInSplitClassIsFlagged) {
  auto findings = check_plain_modules(kSplitBlock);
  EXPECT_EQ(codes(findings), std::vector<std::string>{"DL002:10"});
  ASSERT_EQ(findings.size(), 1u);
  // The placement story is the `why`, not the message's first line.
  // No PreTrainedModel here: only a map built by hand splits it.
  EXPECT_NE(findings[0].why.find("a device map built by hand"), std::string::npos);
  EXPECT_NE(findings[0].why.find("splits Layer"), std::string::npos);
  // With a model that lists other classes, accelerate's own maps may.
  auto listed = check_text(std::string(kSplitBlock) + R"(
class Pre(PreTrainedModel):
    _no_split_modules = ["Tower"]

class Model(Pre):
    def __init__(self, config):
        super().__init__(config)
        self.layer = Layer()
)");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_NE(listed[0].why.find("Layer is not in _no_split_modules"), std::string::npos);
  EXPECT_EQ(findings[0].message.find("_no_split_modules"), std::string::npos);
  ASSERT_EQ(findings[0].origins.size(), 2u);
  EXPECT_EQ(findings[0].origins[0].range.line, 9u); // out: self.norm(...)
  EXPECT_EQ(findings[0].origins[1].range.line, 8u); // hidden_states: the argument
  ASSERT_TRUE(findings[0].fix.has_value());
  EXPECT_EQ(findings[0].fix->edits[0].replacement, "out.to(hidden_states.device)");
}

TEST(Placement, ResidualInNoSplitClassIsClean) {
  std::string text = std::string(kSplitBlock) + R"(
class Pre(PreTrainedModel):
    _no_split_modules = ["Layer"]
)";
  EXPECT_TRUE(check_plain_modules(text).empty());
}

TEST(Placement, ConfigOverrideActsLikeNoSplit) {
  CheckOptions options;
  options.overrides.extra_no_split_modules = {"Layer"};
  EXPECT_TRUE(check_plain_modules(kSplitBlock, options).empty());
}

// A model whose PreTrainedModel declares no _no_split_modules refuses device_map="auto", even when
// the directory's __init__.py also imports a model that declares them (data2vec's audio and
// text models); --hand-made-maps makes it splittable again.
TEST(Placement, InitReexportsDoNotJoinModels) {
  auto text_model = testing::source(std::string(kSplitBlock) + R"(
class TextPre(PreTrainedModel):
    _no_split_modules = ["Tower"]
)",
                                    "pkg/modeling_text.py");
  auto audio_model = testing::source(R"(
class AudioLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(4, 4)

    def forward(self, hidden_states):
        return hidden_states + self.mlp(hidden_states)

class AudioPre(PreTrainedModel):
    pass

class AudioModel(AudioPre):
    def __init__(self, config):
        super().__init__(config)
        self.layers = nn.ModuleList([AudioLayer() for _ in range(2)])
)",
                                     "pkg/modeling_audio.py");
  auto init = testing::source("from .modeling_audio import AudioModel\n"
                              "from .modeling_text import TextPre\n",
                              "pkg/__init__.py");
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  for (const auto *f : {text_model.get(), audio_model.get(), init.get()})
    syntax.push_back(lower_python(*f));
  for (bool hand_made : {false, true}) {
    PackageOverrides overrides;
    overrides.hand_made_maps = hand_made;
    overrides.transformers_major = [] { return 4; };
    auto pkg = build_package({syntax[0].get(), syntax[1].get(), syntax[2].get()}, overrides);
    const ModuleClass *audio = pkg->find_class("AudioLayer");
    ASSERT_NE(audio, nullptr);
    EXPECT_TRUE(audio->scope->refuses_string_maps);
    EXPECT_FALSE(pkg->find_class("Layer")->scope->refuses_string_maps);
    PlacementModel placement(*pkg);
    EXPECT_EQ(placement.facts(audio).may_split, hand_made);
  }
  // transformers 5 refuses nothing: the audio model loads with an empty list, split anywhere.
  PackageOverrides overrides;
  overrides.transformers_major = [] { return 5; };
  auto pkg = build_package({syntax[0].get(), syntax[1].get(), syntax[2].get()}, overrides);
  const ModuleClass *audio = pkg->find_class("AudioLayer");
  ASSERT_NE(audio, nullptr);
  EXPECT_FALSE(audio->scope->refuses_string_maps);
  EXPECT_TRUE(audio->scope->splits_anywhere);
  EXPECT_FALSE(pkg->find_class("Layer")->scope->splits_anywhere);
  EXPECT_TRUE(PlacementModel(*pkg).facts(audio).may_split);
}

TEST(Placement, ClassOnlyInsideNoSplitClassIsNeverSplit) {
  auto file = testing::source(std::string(kSplitBlock) + R"(
class Pre(PreTrainedModel):
    _no_split_modules = ["Tower"]
)");
  auto syntax = lower_python(*file);
  auto pkg = build_package({syntax.get()}, {});
  PlacementModel placement(*pkg);
  EXPECT_FALSE(placement.facts(pkg->find_class("Layer")).may_split);
  EXPECT_FALSE(placement.facts(pkg->find_class("Tower")).may_split);
}

TEST(Placement, LoopCarriedAccumulationAcrossLayersIsFlagged) {
  const char *text = R"(
class Pre(PreTrainedModel):
    _no_split_modules = ["Block"]

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

class Stack(Pre):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(4)])

    def forward(self, hidden_states):
        total = None
        for layer in self.layers:
            hidden_states = layer(hidden_states)
            if total is None:
                total = hidden_states
            else:
                total = total + hidden_states
        return hidden_states, total
)";
  EXPECT_EQ(codes(check_plain_modules(text)), std::vector<std::string>{"DL002:22"});
}

TEST(Placement, GuardedMoveIsClean) {
  std::string text = std::string(kSplitBlock);
  size_t at = text.find("        return hidden_states + out");
  text.insert(at, "        if out.device != hidden_states.device:\n"
                  "            out = out.to(hidden_states.device)\n");
  EXPECT_TRUE(check_plain_modules(text).empty());
}

TEST(Placement, FreshTensorAndZeroDimTensor) {
  const char *text = R"(
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        scale = torch.tensor(2.0)
        h = h * scale
        positions = torch.arange(h.shape[1])
        ok = torch.arange(h.shape[1], device=h.device)
        y = h + ok
        return h + positions
)";
  auto findings = check_plain_modules(text);
  EXPECT_EQ(codes(findings), std::vector<std::string>{"DL005:14"});
}

TEST(Placement, PlainTensorAttributeStaysOnCpu) {
  const char *text = R"(
class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        t = torch.arange(x.shape[1], device=x.device).float()
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        return freqs
)";
  EXPECT_EQ(codes(check_plain_modules(text)), std::vector<std::string>{"DL004:10"});
}

TEST(Placement, HardcodedDeviceInModuleMethod) {
  const char *text = R"(
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        mask = torch.ones(4, 4, device="cuda")
        return self.proj(x.cuda())
)";
  EXPECT_EQ(codes(check_plain_modules(text)), (std::vector<std::string>{"DL007:8", "DL007:9"}));
}

TEST(Placement, SelectionFiltersRules) {
  CheckOptions options;
  options.selection.ignore = {"DL002"};
  EXPECT_TRUE(check_plain_modules(kSplitBlock, options).empty());
  options.selection.ignore.clear();
  options.selection.select = {"DL00"};
  EXPECT_EQ(check_plain_modules(kSplitBlock, options).size(), 1u);
}

// torch.normal/bernoulli/multinomial sample where their tensor arguments are, and on the CPU when
// given only numbers (model/torch_catalog.h), like torch.Tensor(...).
TEST(Placement, RandomSamplingFollowsItsTensorArguments) {
  const char *text = R"(
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        noise = torch.normal(0.0, 1.0, size=(4,))
        jitter = torch.normal(h, 0.1)
        scale = torch.Tensor(4)
        return h + noise + jitter, h * scale
)";
  EXPECT_EQ(codes(check_plain_modules(text)), (std::vector<std::string>{"DL005:12", "DL005:12"}));
}

// One finding per site, from the first *enabled* rule that claims it: ignoring DL004 leaves a
// torch.cat of a split module's parameter to DL001 instead of dropping it.
TEST(Placement, IgnoredRuleHandsTheSiteToTheNextRule) {
  const char *text = R"(
class Projector(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_proj = nn.Linear(4, 4)
        self.boi = nn.Parameter(torch.zeros(1, 1, 4))

    def forward(self, x):
        x = self.linear_proj(x)
        return torch.cat((self.boi.expand(x.shape[0], -1, -1), x), dim=1)
)";
  EXPECT_EQ(codes(check_plain_modules(text)), std::vector<std::string>{"DL004:10"});
  CheckOptions options;
  options.selection.ignore = {"DL004"};
  EXPECT_EQ(codes(check_plain_modules(text, options)), std::vector<std::string>{"DL001:10"});
  options.selection.ignore = {"DL004", "DL001"};
  EXPECT_TRUE(check_plain_modules(text, options).empty());
}

// Explanations are true: an element of a ModuleList reads as Python spells it, and a value that
// `.to(x.device)` moved is said to be where `x` is, not "from" the module that made it.
TEST(Placement, ExplanationsSpellIndexesAndSayWhatWasMoved) {
  const char *text = R"(
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.class_embed = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])

class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.decoder = Decoder()
        self.score_head = nn.Linear(4, 2)

    def forward(self, pixel_values):
        memory = self.encoder(pixel_values)
        logits = self.decoder.class_embed[-1](memory)
        scores = self.score_head(pixel_values).to(memory.device)
        return scores * logits
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), std::vector<std::string>{"DL002:18"});
  const Finding &f = findings[0];
  EXPECT_NE(f.message.find("`logits` (from `self.decoder.class_embed[-1]`)"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("`scores` (moved to `memory.device`)"), std::string::npos) << f.message;
  ASSERT_EQ(f.origins.size(), 2u);
  EXPECT_NE(f.origins[1].message.find("moved to `memory.device`, line 17, so it is where that is: "
                                      "comes from `self.encoder`, line 15"),
            std::string::npos)
      << f.origins[1].message;
}

// A module the parent builds and hands to a child's constructor (SAM's shared positional
// embedding), stored and called there: its output is that module's, not the argument it was
// called with.
TEST(Placement, ModulePassedToTheConstructorIsNamedByItsAttribute) {
  const char *text = R"(
class PromptEncoder(nn.Module):
    def __init__(self, shared_patch_embedding):
        super().__init__()
        self.shared_embedding = shared_patch_embedding
        self.point_embed = nn.Embedding(4, 8)

    def forward(self, boxes):
        corner_embedding = self.shared_embedding(boxes)
        return corner_embedding + self.point_embed.weight
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), std::vector<std::string>{"DL004:10"});
  EXPECT_NE(findings[0].message.find("(from `self.shared_embedding`)"), std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[0].message.find("argument `boxes`"), std::string::npos) << findings[0].message;
}

// A helper handed one of the object's methods (`apply_chunking_to_forward`, as the Q-Former
// layers call it) runs that method on its trailing arguments: the result is the method's output
// (`self.output`), not the tensor passed through.
TEST(Placement, MethodHandedToAHelperGivesTheMethodsResult) {
  const char *text = R"(
class QFormerLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.Linear(8, 8)
        self.output = nn.Linear(8, 8)
        self.output_query = nn.Linear(8, 8)

    def forward(self, hidden_states, query_length):
        attention_output = self.attention(hidden_states)
        query_output = apply_chunking_to_forward(
            self.chunk_query, 0, 1, attention_output[:, :query_length]
        )
        text_output = apply_chunking_to_forward(self.chunk, 0, 1, attention_output[:, query_length:])
        return torch.cat([query_output, text_output], dim=1)

    def chunk(self, attention_output):
        return self.output(attention_output)

    def chunk_query(self, attention_output):
        return self.output_query(attention_output)
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), std::vector<std::string>{"DL001:15"});
  EXPECT_NE(findings[0].message.find("(from `self.output`)"), std::string::npos)
      << findings[0].message;
  EXPECT_NE(findings[0].message.find("(from `self.output_query`)"), std::string::npos)
      << findings[0].message;
}

// A tensor made with `device=x.device` is said to be made there, not to be `x` itself
// (`final_labels` built on `input_ids.device` is no "argument `input_ids`").
TEST(Placement, ExplanationsSayWhereAFreshTensorWasMade) {
  const char *text = R"(
class Merger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, input_ids, labels):
        embeds = self.embed(input_ids)
        final_labels = torch.full(labels.shape, -100, device=input_ids.device)
        index = self.head(embeds).argmax(-1)
        final_labels[labels > 0] = index
        return final_labels
)";
  auto findings = check_plain_modules(text);
  // The value written, which must sit with `final_labels` (index_put_ moves the mask itself).
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL006:12"}));
  auto assignment = std::find_if(findings.begin(), findings.end(), [](const Finding &f) {
    return f.message.find("`final_labels` (made on `input_ids.device`)") != std::string::npos;
  });
  ASSERT_NE(assignment, findings.end()) << findings[0].message;
  bool said = false;
  for (const auto &o : assignment->origins)
    said |= o.message.find("`final_labels`: made on `input_ids.device`, line 10, so it is where "
                           "that is: argument `input_ids`") != std::string::npos;
  EXPECT_TRUE(said) << assignment->origins[0].message << " / " << assignment->origins[1].message;
}

// A crash inside a free helper also points at the call that handed it the operands (issue 10:
// "report the site where the bad operand enters the helper call as well").
TEST(Placement, FindingsInAHelperPointAtTheCallThatEnteredIt) {
  const char *text = R"(
def apply_rotary_pos_emb(q, k, cos, sin):
    return q * cos + k * sin

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.k_proj = nn.Linear(8, 8)

    def forward(self, hidden_states, position_embeddings):
        cos, sin = position_embeddings
        return apply_rotary_pos_emb(self.q_proj(hidden_states), self.k_proj(hidden_states), cos, sin)
)";
  auto findings = check_plain_modules(text);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].range.line, 3u);
  bool entered = false;
  for (const auto &o : findings[0].origins)
    entered |=
        o.range.line == 13 &&
        o.message.find("where `Attention.forward` hands the operands to the helper, line 13") !=
            std::string::npos;
  EXPECT_TRUE(entered) << findings[0].origins.back().message;
}

// A loop over a ModuleList runs at least once: after it, `queries` is what the layers returned,
// not the argument it started from (SAM's two-way transformer, stop 20 sample B #8).
TEST(Placement, ValuesAfterALoopOverLayersComeFromTheLayers) {
  const char *text = R"(
class TwoWay(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.final_attn = nn.Linear(4, 4)

    def forward(self, point_embeddings):
        queries = point_embeddings
        for layer in self.layers:
            queries = layer(queries)
        attn_out = self.final_attn(queries)
        return queries + attn_out
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL002:13"}));
  EXPECT_NE(findings[0].message.find("`queries` (a `self.layers` output)"), std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[0].message.find("point_embeddings"), std::string::npos) << findings[0].message;
}
// A head list the parent sets (`__init__` leaves `self.bbox_embed = None`) called by index inside
// the class: its output is that head's, not the argument passed through (stop 20 sample B #16).
TEST(Placement, HeadsSetFromOutsideAreNotPassThroughs) {
  const char *text = R"(
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.bbox_embed = None

    def forward(self, hidden_states, reference_points):
        for idx, layer in enumerate(self.layers):
            hidden_states = layer(hidden_states)
            tmp = self.bbox_embed[idx](hidden_states)
            reference_points = tmp + reference_points
        return reference_points
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL002:12"}));
  EXPECT_NE(findings[0].message.find("`self.bbox_embed` output"), std::string::npos)
      << findings[0].message;
}
// A wrapper that only calls the modules its constructor was handed (DETR's ConvModel around the
// backbone) is an opaque unit with its own device, not a pass-through of its argument (issue 10
// bullet 1; stop 20 sample B #35 named the padding mask 'argument pixel_values').
TEST(Placement, WrappersOfPassedModulesAreNotPassThroughs) {
  const char *text = R"(
class ConvModel(nn.Module):
    def __init__(self, conv_encoder):
        super().__init__()
        self.conv_encoder = conv_encoder

    def forward(self, pixel_values):
        return self.conv_encoder(pixel_values)

class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = ConvModel(nn.Conv2d(3, 4, 3))
        self.encoder = nn.Linear(4, 4)

    def forward(self, pixel_values):
        mask = self.backbone(pixel_values)
        hidden = self.encoder(pixel_values)
        return hidden.masked_fill(mask, 0.0)
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL006:19"}));
  EXPECT_NE(findings[0].message.find("`mask` (from `self.backbone`)"), std::string::npos)
      << findings[0].message;
}
// `self._gradient_checkpointing_func(layer.__call__, h)` runs the layer: on that path too the
// result is the layer's output, not the argument (stop 20 sample C #31, yolos).
TEST(Placement, CheckpointedLayersGiveTheLayersOutput) {
  const char *text = R"(
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.mid_position_embeddings = nn.Parameter(torch.zeros(2, 4))

    def forward(self, hidden_states):
        for i, layer_module in enumerate(self.layer):
            layer_outputs = self._gradient_checkpointing_func(layer_module.__call__, hidden_states)
            hidden_states = layer_outputs[0] + self.mid_position_embeddings[i]
        return hidden_states
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL004:11"}));
  EXPECT_NE(findings[0].message.find("`layer_outputs[0]` (this iteration's `self.layer` output)"),
            std::string::npos)
      << findings[0].message;
}
// A layer picked by a helper on every pass (`layer = self._get_layer(index)`, ChatGLM) is this
// pass's layer, as `self.layers[index]` written in the loop is: what the loop accumulates holds
// earlier passes' outputs (seed 000; the helper's own frame runs no loop).
TEST(Placement, LayerPickedByAHelperInTheLoopIsThisIterationsLayer) {
  const char *text = R"(
class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def _get_layer(self, index):
        return self.layers[index]

    def forward(self, hidden_states):
        presents = None
        for index in range(2):
            layer = self._get_layer(index)
            kv_cache = layer(hidden_states)
            if presents is None:
                presents = kv_cache
            else:
                presents = torch.cat((presents, kv_cache), dim=0)
        return presents
)";
  auto findings = check_plain_modules(text);
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL001:18"}));
  EXPECT_NE(findings[0].message.find("`kv_cache` (this iteration's `self.layers` output) with "
                                     "`presents` (earlier `self.layers` outputs)"),
            std::string::npos)
      << findings[0].message;
}
} // namespace
} // namespace devlint
