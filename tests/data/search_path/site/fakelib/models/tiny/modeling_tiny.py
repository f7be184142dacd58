import torch
from torch import nn

from ...modeling_utils import PreTrainedModel
from .configuration_tiny import TinyConfig


class TinyDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = nn.LayerNorm(config.hidden_size)
        self.mlp = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        return hidden_states + self.mlp(self.norm(hidden_states))


class TinyPreTrainedModel(PreTrainedModel):
    config_class = TinyConfig
    base_model_prefix = "model"
    _no_split_modules = ["TinyDecoderLayer"]
    _skip_keys_device_placement = "past_key_values"


class TinyModel(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            [TinyDecoderLayer(config) for _ in range(config.num_hidden_layers)]
        )

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states
