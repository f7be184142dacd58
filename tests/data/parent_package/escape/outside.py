import torch


def secret_helper(x):
    return torch.zeros(4)
