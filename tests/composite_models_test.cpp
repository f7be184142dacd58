// Composite models (issue 25): sub-models built from a sub-configuration are part of the tree and
// sized, or listed as not built, never left out silently. The sizes are counted by hand from the
// fixtures' configurations (each layer's parameters, as torch creates them).
#include <gtest/gtest.h>

#include <algorithm>

#include "driver/model_setup.h"
#include "simulation/device_map_simulation.h"

namespace devlint {
namespace {

const std::string kDevmapFixtures = std::string(DEVLINT_FIXTURES_DIR) + "/devmap";

std::unique_ptr<ModelSetup> load(const std::string &name) {
  auto setup = load_model_setup(kDevmapFixtures + "/" + name, ModelSetupOptions{});
  EXPECT_EQ(setup->error, "");
  return setup;
}

bool lists(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string unknowns_text(const ModuleTree &tree) {
  std::string text;
  for (const TreeUnknown &u : tree.unknowns)
    text += u.module_path + ": " + u.what + "\n";
  return text;
}

// Qwen2-VL: `Qwen2VisionTransformerPretrainedModel._from_config(config.vision_config)`, the
// vision configuration a dict of config.json made a Qwen2VLVisionConfig by `sub_configs`.
TEST(CompositeModels, FromConfigBuildsThePackagesVisionTower) {
  auto setup = load("qwen2_vl_style_submodels");
  ASSERT_TRUE(setup->tree.root);
  EXPECT_TRUE(setup->tree.complete()) << unknowns_text(setup->tree);
  ModuleNode *visual = setup->tree.root->child("visual");
  ASSERT_NE(visual, nullptr);
  EXPECT_EQ(visual->class_name, "Qwen2VisionTransformerPretrainedModel");
  ModuleNode *blocks = visual->child("blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->children.size(), 4u); // vision_config.depth of config.json
  // patch_embed Conv3d(3, 128, (2, 14, 14)) 150,528; 4 blocks of 198,272 (two LayerNorm(128),
  // qkv Linear(128, 384), proj Linear(128, 128), Linear(128, 512), Linear(512, 128)); merger
  // LayerNorm(128) + Linear(512, 512) + Linear(512, 256) 394,240: 1,337,856 bf16 parameters.
  auto sizes = compute_module_sizes(setup->tree);
  EXPECT_EQ(sizes["visual"], 1337856 * 2);
  EXPECT_EQ(sizes[""], sizes["visual"] + sizes["model"] + sizes["lm_head"]);
  // transformers' _get_no_split_modules unions every nested PreTrainedModel's list.
  EXPECT_TRUE(lists(setup->no_split_modules, "Qwen2VLVisionBlock"));
  EXPECT_TRUE(lists(setup->no_split_modules, "Qwen2VLDecoderLayer"));
}

// LLaVA: the vision tower and the language model are other models' classes
// (`AutoModel.from_config(config.vision_config)`); the package cannot build them, so both are
// listed by name and the model is incomplete (its total a lower bound). The sub-configurations are
// config.json's dicts: the projector between them is sized from their hidden sizes.
TEST(CompositeModels, SubModelsOfOtherModelsAreListedAsNotBuilt) {
  auto setup = load("llava_style_submodels");
  ASSERT_TRUE(setup->tree.root);
  EXPECT_FALSE(setup->tree.complete());
  std::string unknowns = unknowns_text(setup->tree);
  EXPECT_NE(unknowns.find("sub-model `vision_tower` `AutoModel.from_config(config.vision_config)` "
                          "not built: the package has no model class for model_type "
                          "`clip_vision_model`"),
            std::string::npos)
      << unknowns;
  EXPECT_NE(unknowns.find("sub-model `language_model` "
                          "`AutoModelForCausalLM.from_config(config.text_config)` not built: the "
                          "package has no model class for model_type `llama`"),
            std::string::npos)
      << unknowns;
  // linear_1 Linear(1024, 4096) + linear_2 Linear(4096, 4096): 20,979,712 fp16 parameters.
  auto sizes = compute_module_sizes(setup->tree);
  EXPECT_EQ(sizes["multi_modal_projector"], 20979712 * 2);
}

// `AutoModel.from_config(config.text_config)` whose configuration class is the package's own
// (CONFIG_MAPPING["tiny_text"]): the package's model class with that `config_class`
// (tests/data/devmap_auto_submodel).
TEST(CompositeModels, AutoModelBuildsThePackagesClassForTheConfiguration) {
  auto setup = load_model_setup(std::string(DEVLINT_TESTS_DATA_DIR) + "/devmap_auto_submodel",
                                ModelSetupOptions{});
  ASSERT_TRUE(setup->tree.root);
  EXPECT_TRUE(setup->tree.complete()) << unknowns_text(setup->tree);
  ModuleNode *text = setup->tree.root->child("text_model");
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->class_name, "TinyTextModel");
  // config.json's text_config: hidden 4, 3 layers, vocab 16 (the class default). embed 16x4,
  // 3 x Linear(4, 4) with bias, lm_head 4x16: 188 bf16 parameters.
  auto sizes = compute_module_sizes(setup->tree);
  EXPECT_EQ(sizes[""], 188 * 2);
}

} // namespace
} // namespace devlint
