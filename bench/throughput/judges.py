"""The two ways bench/throughput runs a judge over many candidates, shared by run.py (CPU) and
gpu.py (device machine): one ``kgym eval`` over all of them, each verdict's latency read from its
``--out`` file's growth; and a fresh process per candidate (KernelBench's way), each one's wall
clock its latency."""
import json
import statistics
import subprocess
import time
from pathlib import Path


def pct(x: list, q: float):
    """The q-quantile of x by nearest rank (None when empty)."""
    if not x:
        return None
    s = sorted(x)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def timed_eval(cmd: list, out: Path, log: Path = None) -> dict:
    """Runs one ``kgym eval`` (cmd, whose ``--out`` is ``out``) and returns ``{"verdicts": {id:
    verdict}, "total_s", "latency_s": [seconds between successive verdict lines, the first from
    the start], "rc"}``. kgym flushes each verdict line as it finishes, so the file's growth
    gives each verdict's time (polled every 50 ms)."""
    if out.exists():
        out.unlink()
    t0 = time.monotonic()
    with open(log or "/dev/null", "w") as lf:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=lf)
        stamps, seen = [], 0
        while proc.poll() is None:
            time.sleep(0.05)
            n = sum(1 for _ in open(out)) if out.exists() else 0
            stamps += [time.monotonic()] * (n - seen)
            seen = n
    n = sum(1 for _ in open(out)) if out.exists() else 0
    stamps += [time.monotonic()] * (n - seen)
    total = time.monotonic() - t0
    lat = [b - a for a, b in zip([t0] + stamps[:-1], stamps)]
    verdicts = {}
    for line in (out.read_text().splitlines() if out.exists() else []):
        v = json.loads(line)
        verdicts[v["candidate_id"]] = v
    return {"verdicts": verdicts, "total_s": total, "latency_s": lat, "rc": proc.returncode}


def fresh_process(argv: list, timeout_s: float) -> dict:
    """Runs one candidate's judge in a fresh process (argv) and returns its last stdout line as
    JSON plus ``wall_s`` (the process's own wall clock, start to exit); a crash or timeout is a
    row with ``correct: False`` and the reason in ``error``."""
    s = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
        row = json.loads(r.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        row = {"correct": False, "speedup": None, "error": f"timed out after {timeout_s:.0f} s"}
    except (IndexError, json.JSONDecodeError):
        row = {"correct": False, "speedup": None, "error": (r.stderr or "no output")[-300:]}
    row["wall_s"] = time.monotonic() - s
    return row


def rate(n: int, seconds: float):
    """Verdicts per hour (None when nothing ran)."""
    return 3600.0 * n / seconds if seconds > 0 and n else None


def median(x: list):
    return statistics.median(x) if x else None
