from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .configuration_tiny import *
    from .modeling_tiny import *
