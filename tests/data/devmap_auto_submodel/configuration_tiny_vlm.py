# A composite configuration whose text sub-configuration is the package's own class, looked up
# by model_type in CONFIG_MAPPING (as transformers' LLaVA configuration does for its text model).
from transformers.configuration_utils import PretrainedConfig
from transformers.models.auto import CONFIG_MAPPING


class TinyTextConfig(PretrainedConfig):
    model_type = "tiny_text"

    def __init__(self, vocab_size=16, hidden_size=8, num_hidden_layers=2, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        super().__init__(**kwargs)


class TinyVlmConfig(PretrainedConfig):
    model_type = "tiny_vlm"

    def __init__(self, text_config=None, **kwargs):
        if isinstance(text_config, dict):
            text_config = CONFIG_MAPPING[text_config.get("model_type", "tiny_text")](**text_config)
        elif text_config is None:
            text_config = CONFIG_MAPPING["tiny_text"]()
        self.text_config = text_config
        super().__init__(**kwargs)
