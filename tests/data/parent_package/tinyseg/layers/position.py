# Free helpers a research package keeps beside its models and imports from the parent package.
import torch
from torch import nn


def sinusoid_table(length, dim):
    # Built on the CPU: the caller must move it to its activations.
    positions = torch.arange(length, dtype=torch.float32)[:, None]
    scales = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-4.0 / dim))
    return torch.cat([torch.sin(positions * scales), torch.cos(positions * scales)], dim=-1)


class ConvBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states):
        hidden_states = self.conv(hidden_states.transpose(1, 2)).transpose(1, 2)
        return self.norm(hidden_states)
