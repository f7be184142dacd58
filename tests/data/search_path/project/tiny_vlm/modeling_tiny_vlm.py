"""A vision-language model built on an installed library's base model: `_no_split_modules` is
declared by the library's TinyPreTrainedModel, found on a search path, not in this package."""

import torch
from fakelib import TinyPreTrainedModel
from fakelib.models.tiny.modeling_tiny import TinyDecoderLayer
from torch import nn


class TinyVisionProjector(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc1 = nn.Linear(config.vision_hidden_size, config.hidden_size)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, image_features):
        hidden_states = self.act(self.fc1(image_features))
        return hidden_states + self.fc2(hidden_states)


class TinyVlmForCausalLM(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.projector = TinyVisionProjector(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            [TinyDecoderLayer(config) for _ in range(config.num_hidden_layers)]
        )
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, image_features):
        image_embeds = self.projector(image_features)
        inputs_embeds = self.embed_tokens(input_ids)
        hidden_states = torch.cat([image_embeds, inputs_embeds], dim=1)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.lm_head(hidden_states)
