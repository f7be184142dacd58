# The text model is built with AutoModel.from_config: the package's TinyTextModel, whose
# config_class is the text configuration's class.
from torch import nn
from transformers import AutoModel
from transformers.modeling_utils import PreTrainedModel

from .configuration_tiny_vlm import TinyTextConfig, TinyVlmConfig


class TinyTextModel(PreTrainedModel):
    config_class = TinyTextConfig
    _no_split_modules = ["TinyTextLayer"]

    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            [nn.Linear(config.hidden_size, config.hidden_size) for _ in range(config.num_hidden_layers)]
        )


class TinyVlmForConditionalGeneration(PreTrainedModel):
    config_class = TinyVlmConfig
    _no_split_modules = []

    def __init__(self, config):
        super().__init__(config)
        self.text_model = AutoModel.from_config(config.text_config)
        self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
