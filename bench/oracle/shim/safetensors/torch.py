"""Import-only stand-in for safetensors.torch: the recorder reads and writes no checkpoint.
transformers and accelerate import these names; only storage_ptr/storage_size are called."""
from . import safe_open  # noqa: F401


def storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:
        try:
            return tensor.storage().data_ptr()
        except NotImplementedError:
            return 0


def storage_size(tensor):
    try:
        return tensor.untyped_storage().nbytes()
    except Exception:
        return tensor.nelement() * tensor.element_size()


def _no_checkpoint(*args, **kwargs):
    raise RuntimeError("safetensors stand-in: no checkpoint is read or written")


load_file = save_file = load = save = load_model = save_model = _no_checkpoint
