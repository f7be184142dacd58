# A tiny decoder built from a transformers 5 dataclass configuration (configuration_tiny5.py).
import torch
from torch import nn

from ...modeling_utils import PreTrainedModel
from .configuration_tiny5 import Tiny5Config


class Tiny5MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wi = nn.Linear(config.hidden_size, 2 * config.hidden_size, bias=False)
        if config.is_gated_act:
            self.wi_gate = nn.Linear(config.hidden_size, 2 * config.hidden_size, bias=False)
        self.wo = nn.Linear(2 * config.hidden_size, config.hidden_size, bias=False)

    def forward(self, x):
        return self.wo(self.wi(x))


class Tiny5Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * config.head_dim, bias=False)
        self.mlp = Tiny5MLP(config)

    def forward(self, x):
        return x + self.mlp(self.q_proj(x))


class Tiny5PreTrainedModel(PreTrainedModel):
    config_class = Tiny5Config
    base_model_prefix = "model"
    _no_split_modules = ["Tiny5Block"]


class Tiny5Model(Tiny5PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([Tiny5Block(config) for _ in range(config.num_hidden_layers)])

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return h


class Tiny5ForCausalLM(Tiny5PreTrainedModel):
    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}

    def __init__(self, config):
        super().__init__(config)
        self.model = Tiny5Model(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))
