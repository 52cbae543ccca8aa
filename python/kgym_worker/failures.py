"""The Failure record (include/kgym/measurement.hpp) a worker replies with when a stage raised."""


def failure(stage: str, exc: BaseException, log: str = "") -> dict:
    """A Failure record (measurement.hpp) for an exception."""
    import traceback
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    message = str(exc).strip()
    if len(message) > 2000:
        message = message[:2000] + " ..."
    if isinstance(exc, PermissionError):
        # Often the sandbox: multiprocessing.Pool's semaphore in /dev/shm failed with a bare
        # "Permission denied" that named nothing (red team rt21).
        message += (" (kgym's sandbox lets a candidate write only below its work and build folders, so "
                    "/dev/shm, which multiprocessing's locks and pools need, is refused, and act only on its "
                    "own processes: docs/architecture.md, Sandbox)")
    if log:
        tb = tb + "\n--- build/import log (tail) ---\n" + log[-8000:]
    return {"stage": stage, "type": type(exc).__name__, "message": message, "traceback": tb[-20000:]}
