"""The op watch (python/kgym_worker/opwatch.py, native/opwatch.cpp; docs/timing.md, "Op watch"):
kgym's global RecordFunction callback counts dispatcher ops on every thread while on, nothing
while off, and its build leaves the process's CUDA state and imports alone (the zygote forks CUDA
workers after it)."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str, tmp_path) -> str:
    env = {"PYTHONPATH": str(ROOT / "python"), "KGYM_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    import os
    env["PATH"] = os.environ.get("PATH", env["PATH"])
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_counts_every_thread_while_on_and_nothing_while_off(tmp_path):
    out = run("""
        import sys, threading
        from kgym_worker import opwatch
        assert opwatch.install() == "on", opwatch.status()
        import torch
        assert "torch.utils.cpp_extension" not in sys.modules   # built in a process of its own
        assert not torch.cuda.is_initialized()
        x = torch.randn(32, 32)
        opwatch.take()
        x.relu()                                  # off: not counted
        opwatch.on()
        x @ x
        t = threading.Thread(target=lambda: torch.mm(x, x)); t.start(); t.join()   # another thread
        x.view(-1)
        opwatch.off()
        x.sigmoid()                               # off again
        got = opwatch.take()
        assert got.get("aten::mm", 0) == 2, got
        assert got.get("aten::view") == 1 and "aten::relu" not in got and "aten::sigmoid" not in got, got
        assert opwatch.take() == {}               # taken: zeroed
        print("ok")
    """, tmp_path)
    assert out.strip().endswith("ok")
    assert list(tmp_path.glob("opwatch/*/libkgym_opwatch.so")), "the library is cached under KGYM_CACHE_DIR/opwatch"


def test_watched_counts_fill_the_launch_record(tmp_path):
    out = run("""
        from kgym_worker import integrity
        rec = integrity.merge_watched({"traced": True}, {"aten::mm": 3, "aten::empty": 2, "mine::relu": 5}, "on")
        assert rec["aten_traced"] and rec["aten_compute_calls"] == 3 and rec["aten_glue_calls"] == 2, rec
        assert rec["op_watch"] == "on"
        both = integrity.merge_watched({"aten_traced": True, "aten_compute_calls": 1, "aten_glue_calls": 0,
                                        "aten_ops": [{"name": "aten::mm", "category": "compute", "count": 1}]},
                                       {"aten::mm": 2}, "on")
        assert both["aten_compute_calls"] == 3 and both["aten_ops"][0]["count"] == 3, both
        off = integrity.merge_watched({"traced": True}, {"aten::mm": 3}, "unavailable: no compiler")
        assert "aten_traced" not in off and off["op_watch"].startswith("unavailable"), off
        print("ok")
    """, tmp_path)
    assert out.strip().endswith("ok")


def test_a_full_table_fails_closed(tmp_path):
    """Red team rt34: a candidate registered more ops of its own than the table has slots and
    called each once, so ATen's GEMM found no slot. Ops that find no slot are "<overflow>", and
    that counts as ATen compute (the strict gate rejects it)."""
    out = run("""
        from kgym_worker import opwatch, integrity
        assert opwatch.install() == "on", opwatch.status()
        import torch
        slots = opwatch._cap
        assert slots >= 65536, slots
        lib = torch.library.Library("kgymfill", "DEF")
        def nop(x):
            return None
        for i in range(slots + 8):
            lib.define(f"f{i}(Tensor x) -> ()")
            lib.impl(f"f{i}", nop, "CompositeExplicitAutograd")
        fs = [getattr(torch.ops.kgymfill, f"f{i}") for i in range(slots + 8)]
        x = torch.randn(8, 8)
        opwatch.take()
        opwatch.on()
        for f in fs:
            f(x)
        torch.mm(x, x)
        opwatch.off()
        got = opwatch.take()
        assert got.get(integrity.OPWATCH_OVERFLOW, 0) >= 9, {k: v for k, v in got.items() if not k.startswith("kgymfill")}
        assert "aten::mm" not in got
        assert sum(v for k, v in got.items() if k.startswith("kgymfill::")) == slots, "every slot is read back"
        rec = integrity.merge_watched({"traced": True}, got, "on")
        assert rec["aten_compute_calls"] >= 9, rec
        assert any(o["name"] == integrity.OPWATCH_OVERFLOW and o["category"] == "compute" for o in rec["aten_ops"]), rec
        print("ok")
    """, tmp_path)
    assert out.strip().endswith("ok")
