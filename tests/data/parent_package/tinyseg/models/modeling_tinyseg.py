# A segmentation model whose position table comes from a helper in the parent package
# (`from ..layers.position import ...`): the table is made on the CPU and added to activations.
from torch import nn
from transformers import PreTrainedModel

from ..layers.position import ConvBlock, sinusoid_table


class TinySegModel(PreTrainedModel):
    _no_split_modules = ["ConvBlock"]

    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.blocks = nn.ModuleList([ConvBlock(config.hidden_size) for _ in range(config.num_layers)])
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids):
        hidden_states = self.embed(input_ids)
        hidden_states = hidden_states + sinusoid_table(hidden_states.shape[1], hidden_states.shape[2])
        for block in self.blocks:
            hidden_states = block(hidden_states)
        return self.classifier(hidden_states)
