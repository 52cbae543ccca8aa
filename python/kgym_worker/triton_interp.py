"""Triton's CPU interpreter (``TRITON_INTERPRET=1``), made to run under NumPy >= 2.4.

Triton 3.6's interpreter turns a kernel's scalar argument (held as a 1-element array) into a
loop bound or index with ``int(array)``, which NumPy 2.4 refuses for arrays with ndim > 0 ("only
0-dimensional arrays can be converted to Python scalars"): every honest Triton kernel with a
``range(0, n, BLOCK)`` loop failed as a ``runtime_error`` on the CPU. ``numpy_compat``
re-registers that one conversion through the array's single element. It changes nothing on a
GPU (the interpreter is not used there) and nothing of Triton's numerics. The zygote applies it
before any worker forks when ``TRITON_INTERPRET=1`` (kgym's CPU runs of Triton candidates)."""


def interpreting() -> bool:
    """Whether Triton's interpreter is on in this process (``TRITON_INTERPRET`` set to 1/true)."""
    import os
    return os.environ.get("TRITON_INTERPRET", "").strip().lower() in ("1", "true", "on", "yes")


def numpy_compat() -> bool:
    """Patches ``triton.runtime.interpreter`` once (idempotent): a language tensor's
    ``__index__`` reads its data's single element instead of ``int(data)``. Returns False when
    Triton or that hook is not there (nothing to patch)."""
    try:
        from triton.runtime import interpreter
    except Exception:  # noqa: BLE001 - no Triton, or it fails to import here
        return False
    if getattr(interpreter, "_kgym_numpy_compat", False):
        return True
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None:
        return False

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched
    interpreter._kgym_numpy_compat = True
    return True
