"""A tiny model with one DL001 (the kv caches of all layers concatenated across a split
module) for the integration tests: formats, pre-commit and SARIF validation."""

import torch
from torch import nn
from transformers import PreTrainedModel


class TinyBlock(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states):
        out = self.proj(hidden_states)
        return out, out


class TinyStack(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.layers = nn.ModuleList([TinyBlock(hidden) for _ in range(layers)])

    def forward(self, hidden_states):
        presents = None
        for layer in self.layers:
            hidden_states, kv_cache = layer(hidden_states)
            if presents is None:
                presents = kv_cache
            else:
                presents = torch.cat((presents, kv_cache), dim=0)
        return hidden_states, presents


class TinyModel(PreTrainedModel):
    _no_split_modules = ["TinyBlock"]

    def __init__(self, config):
        super().__init__(config)
        self.stack = TinyStack(config.hidden, config.layers)

    def forward(self, input_ids):
        return self.stack(input_ids)
