# Relative imports that climb out of the checked directory, or above a top-level package, name
# nothing devlint reads.
from torch import nn
from transformers import PreTrainedModel

from ........etc import passwd
from ..outside import secret_helper


class EscapeModel(PreTrainedModel):
    _no_split_modules = ["nn.Linear"]

    def __init__(self, config):
        super().__init__(config)
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x) + secret_helper(x) + passwd(x)
