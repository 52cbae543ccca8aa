"""Fixtures that start the real `kgym serve` binary (scripted evaluator: deterministic, no torch)."""
import json
import os
import selectors
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK_SOURCE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.{op}(x)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
'''


def kgym_binary(scripted: bool = False) -> Path:
    if scripted:  # the scripted evaluator is a test double: only the tests' build/kgym-test has it
        return Path(os.environ.get("KGYM_TEST_BIN", ROOT / "build" / "kgym-test"))
    return Path(os.environ.get("KGYM_BIN", ROOT / "build" / "kgym"))


class ServerProcess:
    """A running `kgym serve` (`binary`, default kgym_binary()) with `args`; `url` is its base URL
    once /health answers healthy (within `timeout` s). Also used outside pytest by
    tests/integration/serve_rewards.py."""

    def __init__(self, args, timeout=60.0, binary=None):
        binary = Path(binary) if binary else kgym_binary(scripted="scripted" in args)
        if not binary.exists():
            pytest.skip(f"{binary} is not built")
        self.proc = subprocess.Popen([str(binary), "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            self.stop()
            raise RuntimeError("kgym serve printed nothing within the timeout")
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"kgym serve did not start: {line!r} {err}")
        self.url = line.split("listening on ", 1)[1].split()[0]
        deadline = time.monotonic() + timeout
        while True:  # wait for /health
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                    if json.loads(r.read())["status"] == "healthy":
                        break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture(scope="session")
def tiny_suite(tmp_path_factory):
    """A flat suite of three tiny elementwise tasks: ids relu, tanh, sigmoid."""
    d = tmp_path_factory.mktemp("suite")
    for op in ("relu", "tanh", "sigmoid"):
        (d / f"{op}.py").write_text(TASK_SOURCE.format(op=op))
    return d


@pytest.fixture(scope="module")
def scripted_server(tiny_suite):
    server = ServerProcess(["--devices", "cpu", "--workers-per-device", "2", "--evaluator", "scripted",
                            "--suite", str(tiny_suite), "--reward", "stepped", "--max-code-bytes", "4000"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def engine_server():
    """`kgym serve` with the real engine on the CPU over the shipped examples/suite (plain-PyTorch
    candidates, so --policy-profile off), rewards `kevin`."""
    server = ServerProcess(["--devices", "cpu", "--workers-per-device", "2", "--suite", str(ROOT / "examples" / "suite"),
                            "--policy-profile", "off", "--reward", "kevin"], timeout=120.0)
    yield server
    server.stop()


def kgym_eval(codes: dict, task: str, tmp_path, reward: str = "kevin") -> dict:
    """Runs `kgym eval` on candidates {name: code} for one task of examples/suite (CPU, profile
    off); returns {name: verdict}."""
    binary = kgym_binary()
    if not binary.exists():
        pytest.skip(f"{binary} is not built")
    folder = tmp_path / "candidates" / task.split("/")[-1]
    folder.mkdir(parents=True)
    for name, code in codes.items():
        (folder / f"{name}.py").write_text(code)
    out = tmp_path / "verdicts.jsonl"
    proc = subprocess.run([str(binary), "eval", "--suite", str(ROOT / "examples" / "suite"), "--candidates", str(folder),
                           "--tasks", task, "--profile", "off", "--device", "cpu", "--reward", reward,
                           "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdicts = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return {Path(v["candidate_id"]).stem.split("/")[-1]: v for v in verdicts}
