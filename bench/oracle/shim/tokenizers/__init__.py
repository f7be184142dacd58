"""Import-only stand-in for tokenizers: the recorder builds no tokenizer, transformers only
imports names from it."""
__version__ = "0.21.0"


class _Anything:
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Anything


def __getattr__(name):
    return _Anything
