# A tiny decoder for the placement simulation tests. Its expected device maps are worked out by
# hand from accelerate 1.14.0's get_balanced_memory / infer_auto_device_map source (no GPU and no
# accelerate run were available); the steps are in tests/device_map_test.cpp.
import torch
from torch import nn
from transformers.modeling_utils import PreTrainedModel


class TinyBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.fc(x))


class TinyPreTrainedModel(PreTrainedModel):
    base_model_prefix = "model"
    _no_split_modules = ["TinyBlock"]


class TinyModel(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([TinyBlock(config) for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.hidden_size)

    def get_input_embeddings(self):
        return self.embed

    def forward(self, input_ids):
        h = self.embed(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.norm(h)


class TinyForCausalLM(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = TinyModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def get_output_embeddings(self):
        return self.lm_head

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))
