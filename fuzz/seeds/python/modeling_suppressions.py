# devlint: ignore-file[DL007]
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = self.proj(x)
        pos = torch.arange(x.shape[1])  # noqa: DL005
        out = h + x  # noqa: DL002
        return out * self.scale + pos  # devlint: ignore[DL004]


class Model(nn.Module):
    _no_split_modules = ["Block"]

    def __init__(self, dim, n):
        super().__init__()
        self.layers = nn.ModuleList([Block(dim) for _ in range(n)])
        self.head = nn.Linear(dim, 2)

    def forward(self, x, labels=None):
        presents = ()
        for layer in self.layers:
            x = layer(x)
            presents = presents + (x,)
        cache = torch.cat([p for p in presents], dim=0)
        logits = self.head(x)
        loss = nn.functional.cross_entropy(logits, labels)
        return loss, cache.cuda()
