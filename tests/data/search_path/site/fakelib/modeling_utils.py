from torch import nn


class PreTrainedModel(nn.Module):
    config_class = None
    _no_split_modules = None
    _skip_keys_device_placement = None

    def __init__(self, config):
        super().__init__()
        self.config = config
