"""The zygote: imports torch once (never touching CUDA), then forks workers on request.

A worker forked from here starts in well under a second instead of paying a fresh
``import torch`` (about 5 s on the GPU machine). Requests on the control socket (fd 3):
``spawn`` (followed by one byte carrying the new worker's socket as SCM_RIGHTS), ``reap``,
``exit``. The zygote holds no secret: a forked candidate inherits its memory.
"""
import os
import resource
import signal
import socket
import sys
import time

from . import protocol


def _child(ctrl: socket.socket, chan_fd: int, req: dict) -> None:
    code = 0
    try:
        os.setpgid(0, 0)  # own process group: the supervisor kills the whole group
        _die_with_parent()
        ctrl.close()
        workdir = req["workdir"]
        os.makedirs(workdir, exist_ok=True)
        log_path = req.get("log") or os.path.join(workdir, "worker.log")
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        os.dup2(chan_fd, 3)
        if chan_fd != 3:
            os.close(chan_fd)
        os.closerange(4, 1 << 16)
        for k, v in (req.get("env") or {}).items():
            os.environ[k] = str(v)
        os.chdir(workdir)
        limits = req.get("limits") or {}
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.get("address_space_bytes"):
            n = int(limits["address_space_bytes"])
            resource.setrlimit(resource.RLIMIT_AS, (n, n))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if req["device"] == "cpu":  # same thread count for candidate and references
            import torch
            torch.set_num_threads(max(1, int(os.environ.get("KGYM_CPU_THREADS", "1"))))
        chan = socket.socket(fileno=3)
        if req["role"] == "reference":
            from . import reference
            reference.serve(chan, req["device"], workdir)
        else:
            from . import candidate
            candidate.serve(chan, req["device"], workdir, log_path)
    except BaseException:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reap(pid: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return {"ok": True, "known": False}
        if done:
            break
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.005)
    try:  # the group may hold leftovers (a build's compiler, a candidate's own children)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if os.WIFSIGNALED(status):
        return {"ok": True, "known": True, "signal": os.WTERMSIG(status), "exit_code": 0}
    return {"ok": True, "known": True, "signal": 0, "exit_code": os.WEXITSTATUS(status)}


def _die_with_parent() -> None:
    """SIGKILL this process when its parent dies (Linux prctl PR_SET_PDEATHSIG), so that no worker
    (a hung candidate in its own process group) outlives an interrupted or crashed kgym."""
    import ctypes
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def main() -> None:
    _die_with_parent()
    ctrl = socket.socket(fileno=3)
    import torch  # noqa: F401 - the point of the zygote
    try:
        import triton  # noqa: F401 - importing Triton does not initialise CUDA
    except Exception:  # noqa: BLE001
        pass
    import numpy  # noqa: F401
    from . import candidate, common, reference, tensors  # noqa: F401 - warm imports
    protocol.send(ctrl, {"op": "ready", "pid": os.getpid()})
    while True:
        try:
            req, _ = protocol.recv(ctrl)
        except protocol.ChannelClosed:
            break
        op = req.get("op")
        if op == "spawn":
            _, fds, _, _ = socket.recv_fds(ctrl, 1, 1)
            if len(fds) != 1:
                protocol.send(ctrl, {"ok": False, "error": "spawn without a socket"})
                continue
            pid = os.fork()
            if pid == 0:
                _child(ctrl, fds[0], req)
            os.close(fds[0])
            protocol.send(ctrl, {"ok": True, "pid": pid})
        elif op == "reap":
            protocol.send(ctrl, _reap(int(req["pid"]), float(req.get("timeout", 2.0))))
        elif op == "exit":
            break
        else:
            protocol.send(ctrl, {"ok": False, "error": f"unknown op {op!r}"})
    try:  # take every worker down with us
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
    except ChildProcessError:
        pass
