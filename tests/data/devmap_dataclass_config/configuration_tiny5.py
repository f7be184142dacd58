# A transformers 5 configuration: a dataclass (huggingface_hub's @strict) whose fields are annotated
# class attributes; the generated __init__ takes them as keyword arguments and __post_init__
# derives the rest. The sizes expected from it are in tests/device_map_test.cpp.
from huggingface_hub.dataclasses import strict

from ...configuration_utils import PreTrainedConfig
from ...utils.type_validators import interval


@strict
class Tiny5Config(PreTrainedConfig):
    model_type = "tiny5"
    keys_to_ignore_at_inference = ["past_key_values"]

    vocab_size: int = 10
    hidden_size: int = 8
    num_hidden_layers: int = 3
    num_attention_heads: int = 2
    head_dim: int | None = None
    feed_forward_proj: str = "gated-gelu"
    initializer_range: float = interval(min=0.0, max=1.0)(default=0.02)
    tie_word_embeddings: bool = False

    def __post_init__(self, **kwargs):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        act_info = self.feed_forward_proj.split("-")
        self.is_gated_act = act_info[0] == "gated"
        super().__post_init__(**kwargs)


@strict
class Tiny5WideConfig(Tiny5Config):
    model_type = "tiny5_wide"

    hidden_size: int = 16
