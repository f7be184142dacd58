# A stand-in for an installed model library (as transformers is): the package re-exports its
# models lazily at run time, and only type checkers follow the imports below.
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models.tiny import TinyPreTrainedModel
