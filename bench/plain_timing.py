#!/usr/bin/env python3
"""Plain CUDA-event timing of kgym's passing candidates, to compare with kgym (issue 4).

For every verdict with outcome `passed` in a kgym verdict JSONL, in this one process on cuda:
import the task module (Model, get_inputs, get_init_inputs) and the candidate (ModelNew); build
both from the same init inputs under the same torch.manual_seed (the verdict's
measurements.init_seed, else 0); run 5 correctness cases (nominal inputs of get_inputs under
seeds 1..5, torch.allclose atol=rtol=1e-4 against the reference run with TF32 off for cuBLAS and
cuDNN, `cases_passed`; against the reference under torch's default flags, where cuDNN
convolutions use TF32, `cases_passed_default_flags`); then time the candidate, eager Model and
torch.compile(Model), each as KernelBench / triton.testing.do_bench do it: 3 warm-up calls, then
N timed calls on the same inputs, each preceded by an L2 flush (a buffer of 2x the device's L2
filled), CUDA events on the current stream around the call. N = the number of timed calls kgym
made for that phase (len(measurements.<phase>_timing.times_ms)), 100 when missing. The task's
size constants are set as kgym ran them (the verdict's provenance.scaled_constants of
`kgym eval --scale`; else --scale with kgym's rule).

Per phase the wall clock (perf_counter around the synchronised phase) is recorded: `cases_s`,
`candidate_s`, `eager_s`, `compile_s` (includes torch.compile's first-call compile) and
`compile_warm_s` (the warm-up part of the compile phase). Output: `--out` JSON (one row per
passing verdict: the plain numbers next to kgym's `runtime_ms`, `speedup_eager`,
`speedup_compile` and `measurements.phase_ms`) and `--md` markdown table with, per row: runtime,
speedup vs eager (kgym, plain, ratio), and the overhead of kgym's device-holding phases:

  overhead              = kgym phases except compile_timing and load_task (ms)
                          / plain (cases_s + candidate_s + eager_s) - 1
  overhead incl compile = kgym phases except load_task / plain (cases + candidate + eager + compile) - 1

(load_task is kgym's reference load and device-peak measurement, which has no counterpart here;
it is kept in the JSON. The candidate's first call builds it (Triton's JIT); plain keeps that call
apart as first_call_s, and kgym's share of it, cases/run_first beyond a later case's run, is left
out the same way and reported as first_call_build_ms.)

    python3 bench/plain_timing.py --verdicts out/honest_strict.jsonl \
        --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu \
        --out out/plain.json --md out/plain.md [--extensions-dir DIR]

Needs a CUDA device (exits with a message otherwise). --extensions-dir sets TORCH_EXTENSIONS_DIR
(before torch is imported) so load_inline candidates reuse a build cache; --kgym-cache-dir DIR
(kgym's KGYM_CACHE_DIR) instead sets, per candidate, TORCH_EXTENSIONS_DIR and TRITON_CACHE_DIR to
kgym's content-addressed build directory of that candidate (DIR/build/<sha256 of the source>[:24]/
{torch_extensions,triton}), so neither side compiles twice. Like kgym's `cases` phase, `cases_s`
includes the candidate's first call (Triton JIT / lazy init); that call alone is `first_call_s`.
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import pathlib
import statistics
import sys
import time

DEFAULT_CALLS = 100
WARMUP = 3
CASES = 5
PHASE_KEYS = ("load_task", "cases", "other_shape", "candidate_timing", "rechecks", "eager_timing",
              "compile_timing", "wall_check", "trace")


# ---------------------------------------------------------------- pure functions (tested on CPU)

def _number(value):
    """A finite float, else None (verdict fields may be null, missing or strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def phase_ms_of(verdict: dict) -> dict:
    """measurements.phase_ms as {name: ms} with only finite numbers; {} when absent or malformed."""
    m = verdict.get("measurements")
    p = m.get("phase_ms") if isinstance(m, dict) else None
    if not isinstance(p, dict):
        return {}
    return {str(k): float(v) for k, v in p.items() if _number(v) is not None}


def timed_calls(verdict: dict, phase: str, default: int = DEFAULT_CALLS) -> int:
    """Number of timed calls kgym made in `phase` ("candidate" | "eager" | "compile")."""
    m = verdict.get("measurements")
    rec = m.get(f"{phase}_timing") if isinstance(m, dict) else None
    times = rec.get("times_ms") if isinstance(rec, dict) else None
    return len(times) if isinstance(times, list) and times else default


def task_stem(task_id: str) -> str:
    return task_id.rsplit("/", 1)[-1]


def task_level(task_id: str):
    head = task_id.split("/", 1)[0] if "/" in task_id else ""
    if head[:1] in ("L", "l") and head[1:].isdigit():
        return int(head[1:])
    return None


def parse_verdicts(path) -> list:
    """The passed verdicts of a kgym verdict JSONL (blank lines skipped; later lines for the same
    (task_id, candidate_id) replace earlier ones, as with --resume)."""
    rows = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                v = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not JSON: {e}") from None
            if not isinstance(v, dict) or "task_id" not in v or "candidate_id" not in v:
                raise ValueError(f"{path}:{n}: not a kgym verdict (no task_id/candidate_id)")
            rows[(v["task_id"], v["candidate_id"])] = v
    return [v for v in rows.values() if v.get("outcome") == "passed"]


def kgym_first_call_build_ms(phase_ms: dict, n_cases: int) -> float:
    """The part of kgym's first case run beyond a later case's run (ms): the candidate's JIT
    build (Triton compiles on the first call), which the plain run keeps apart too
    (first_call_s); plus the same for the other-shape case's run (other_shape/run beyond a
    regular case's run: Triton compiles again for the new sizes, and whether its cache already
    held them changed the overhead of one run of the same code by 1.6 s over 7 rows, H200,
    session 14). 0 without the cases/run_first and cases/run parts or with one case."""
    first, rest = _number(phase_ms.get("cases/run_first")), _number(phase_ms.get("cases/run"))
    if first is None or rest is None or n_cases < 2:
        return 0.0
    per_case = rest / (n_cases - 1)
    other = _number(phase_ms.get("other_shape/run"))
    return max(0.0, first - per_case) + (max(0.0, other - per_case) if other is not None else 0.0)


def kgym_phase_wall_ms(phase_ms: dict, include_compile: bool, n_cases: int = 0):
    """Sum of kgym's device-holding phases (load_task and the first call's JIT build left out,
    see kgym_first_call_build_ms), None when phase_ms is empty."""
    if not phase_ms:
        return None
    skip = {"load_task"} | (set() if include_compile else {"compile_timing"})
    # "cases/make" etc. are parts of the "cases" phase (already in its total): not added again.
    total = sum(v for k, v in phase_ms.items() if k not in skip and "/" not in k)
    return total - kgym_first_call_build_ms(phase_ms, n_cases)


def regular_cases(verdict: dict) -> int:
    """Number of regular correctness cases in the verdict (the other-shape case left out)."""
    m = verdict.get("measurements")
    cases = m.get("cases") if isinstance(m, dict) else None
    if not isinstance(cases, list):
        return 0
    return sum(1 for c in cases if isinstance(c, dict) and not c.get("shape_variant"))


def plain_phase_wall_ms(plain: dict, include_compile: bool):
    keys = ["cases_s", "candidate_s", "eager_s"] + (["compile_s"] if include_compile else [])
    vals = [_number(plain.get(k)) for k in keys]
    return None if any(v is None for v in vals) else 1000.0 * sum(vals)


def ratio(a, b):
    a, b = _number(a), _number(b)
    return a / b if a is not None and b is not None and b > 0 else None


def build_row(verdict: dict, plain: dict) -> dict:
    """One output row: kgym's numbers, the plain ones, and the comparisons."""
    phase_ms = phase_ms_of(verdict)
    kgym = {
        "runtime_ms": _number(verdict.get("runtime_ms")),
        "ref_runtime_ms": _number(verdict.get("ref_runtime_ms")),
        "compile_runtime_ms": _number(verdict.get("compile_runtime_ms")),
        "speedup_eager": _number(verdict.get("speedup_eager")),
        "speedup_compile": _number(verdict.get("speedup_compile")),
        "phase_ms": phase_ms,
        "timed_calls": {p: timed_calls(verdict, p) for p in ("candidate", "eager", "compile")},
    }
    n_cases = regular_cases(verdict)
    kgym["first_call_build_ms"] = kgym_first_call_build_ms(phase_ms, n_cases)
    k_ex, k_in = kgym_phase_wall_ms(phase_ms, False, n_cases), kgym_phase_wall_ms(phase_ms, True, n_cases)
    p_ex, p_in = plain_phase_wall_ms(plain, False), plain_phase_wall_ms(plain, True)
    r_ex, r_in = ratio(k_ex, p_ex), ratio(k_in, p_in)
    return {
        "task_id": verdict.get("task_id"),
        "candidate_id": verdict.get("candidate_id"),
        "kgym": kgym,
        "plain": plain,
        "compare": {
            "runtime_ratio": ratio(kgym["runtime_ms"], plain.get("plain_ms")),
            "speedup_eager_ratio": ratio(kgym["speedup_eager"], plain.get("speedup_eager")),
            "speedup_compile_ratio": ratio(kgym["speedup_compile"], plain.get("speedup_compile")),
            "kgym_wall_ms_excl_compile": k_ex,
            "kgym_wall_ms_incl_compile": k_in,
            "plain_wall_ms_excl_compile": p_ex,
            "plain_wall_ms_incl_compile": p_in,
            "overhead": None if r_ex is None else r_ex - 1,
            "overhead_incl_compile": None if r_in is None else r_in - 1,
        },
    }


def _fmt(v, spec=".3f", missing="-"):
    v = _number(v)
    return missing if v is None else format(v, spec)


def _pct(v):
    v = _number(v)
    return "-" if v is None else f"{100 * v:+.0f}%"


def geomean(values):
    vals = [v for v in (_number(x) for x in values) if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def render_markdown(rows: list) -> str:
    head = ("| task | candidate | kgym ms | plain ms | kgym/plain | kgym x eager | plain x eager | ratio "
            "| kgym x compile | plain x compile | overhead | overhead incl. compile | plain ok |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
    lines = []
    for r in rows:
        k, p, c = r["kgym"], r["plain"], r["compare"]
        ok = "error: " + str(p["error"])[:60] if p.get("error") else f"{p.get('cases_passed', '-')}/{CASES}"
        if not p.get("error") and p.get("cases_passed_default_flags", p.get("cases_passed")) != p.get("cases_passed"):
            ok += f" (default flags {p.get('cases_passed_default_flags')}/{CASES})"
        lines.append(
            f"| {r['task_id']} | {r['candidate_id']} | {_fmt(k['runtime_ms'])} | {_fmt(p.get('plain_ms'))} "
            f"| {_fmt(c['runtime_ratio'], '.2f')} | {_fmt(k['speedup_eager'], '.2f')} "
            f"| {_fmt(p.get('speedup_eager'), '.2f')} | {_fmt(c['speedup_eager_ratio'], '.2f')} "
            f"| {_fmt(k['speedup_compile'], '.2f')} | {_fmt(p.get('speedup_compile'), '.2f')} "
            f"| {_pct(c['overhead'])} | {_pct(c['overhead_incl_compile'])} | {ok} |")
    gm_rt = geomean(r["compare"]["runtime_ratio"] for r in rows)
    gm_sp = geomean(r["compare"]["speedup_eager_ratio"] for r in rows)
    k_sum = sum(r["compare"]["kgym_wall_ms_excl_compile"] or 0 for r in rows)
    p_sum = sum(r["compare"]["plain_wall_ms_excl_compile"] or 0 for r in rows)
    k_sum_c = sum(r["compare"]["kgym_wall_ms_incl_compile"] or 0 for r in rows)
    p_sum_c = sum(r["compare"]["plain_wall_ms_incl_compile"] or 0 for r in rows)
    tail = [
        "",
        f"{len(rows)} passing verdicts. Geometric mean of kgym/plain runtime: {_fmt(gm_rt, '.3f')}; "
        f"of kgym/plain speedup vs eager: {_fmt(gm_sp, '.3f')}.",
        f"Device-phase wall clock, all rows: kgym {k_sum / 1000:.1f} s vs plain {p_sum / 1000:.1f} s "
        f"without the compile baseline (overhead {_pct(ratio(k_sum, p_sum) - 1 if ratio(k_sum, p_sum) else None)}), "
        f"{k_sum_c / 1000:.1f} s vs {p_sum_c / 1000:.1f} s with it "
        f"(overhead {_pct(ratio(k_sum_c, p_sum_c) - 1 if ratio(k_sum_c, p_sum_c) else None)}).",
        "",
        "kgym ms / x eager / x compile: the verdict's runtime_ms, speedup_eager, speedup_compile (fresh inputs "
        "per call, interleaved rounds). plain: the same candidate timed with CUDA events, same inputs every "
        "call, L2 flushed before each, N = kgym's number of timed calls. overhead: kgym's device phases "
        "(measurements.phase_ms without load_task, compile_timing and the first calls' JIT builds (first case, other shape), "
        f"{sum(r['kgym'].get('first_call_build_ms') or 0 for r in rows) / 1000:.1f} s in all) "
        "/ plain cases+candidate+eager wall (its first call apart too) - 1; "
        "incl. compile: with compile_timing / with the plain compile phase. '-': not available (no phase_ms "
        "in the verdict, or the plain run failed). plain ok: allclose (1e-4) cases against the reference with "
        "TF32 off; (default flags k/5): against the reference under torch's defaults (cuDNN TF32) when different.",
    ]
    return head + "\n".join(lines) + "\n" + "\n".join(tail) + "\n"


def scaled_constants(verdict: dict, scale: float = 1.0, module=None) -> dict:
    """The task's size constants as kgym ran them: the verdict's provenance.scaled_constants
    ({name: [old, new]}) when present, else (a module given and scale != 1) kgym's rule
    (python/kgym_worker/loading.py scale_sizes: module-level ints >= 16 times scale, rounded,
    at least 1). Returns {name: new}."""
    prov = verdict.get("provenance")
    sc = prov.get("scaled_constants") if isinstance(prov, dict) else None
    if isinstance(sc, dict) and sc:
        return {str(k): int(v[1]) for k, v in sc.items()
                if isinstance(v, list) and len(v) == 2 and isinstance(v[1], int) and not isinstance(v[1], bool)}
    if module is None or scale == 1.0:
        return {}
    out = {}
    for name, value in vars(module).items():
        if name.startswith("_") or type(value) is not int or value < 16:
            continue
        new = max(1, int(round(value * scale)))
        if new != value:
            out[name] = new
    return out


def kgym_build_dir(cache_dir, source: bytes) -> pathlib.Path:
    """kgym's build directory of a candidate source (src/runner/engine.cpp: cache/build/<sha256[:24]>)."""
    return pathlib.Path(cache_dir) / "build" / hashlib.sha256(source).hexdigest()[:24]


def resolve_task_file(suite: pathlib.Path, task_id: str) -> pathlib.Path:
    stem = task_stem(task_id)
    candidates = [suite / f"{stem}.py"]
    level = task_level(task_id)
    if level is not None:
        candidates.insert(0, suite / f"level{level}" / f"{stem}.py")
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(f"task {task_id}: none of {', '.join(map(str, candidates))} exists")


# ---------------------------------------------------------------- GPU part

def _load_module(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class fp32_flags:
    """TF32 off for cuBLAS and cuDNN inside the block (restored after): the reference in true fp32."""

    def __init__(self, torch):
        self.b = torch.backends

    def __enter__(self):
        self.saved = (self.b.cuda.matmul.allow_tf32, self.b.cudnn.allow_tf32)
        self.b.cuda.matmul.allow_tf32 = False
        self.b.cudnn.allow_tf32 = False

    def __exit__(self, *exc):
        self.b.cuda.matmul.allow_tf32, self.b.cudnn.allow_tf32 = self.saved


class PlainTimer:
    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        props = torch.cuda.get_device_properties(device)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        flush_bytes = 2 * l2 if l2 > 0 else 256 << 20
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
        self.flush_bytes = flush_bytes

    def inputs(self, task, seed):
        torch = self.torch
        torch.manual_seed(seed)
        with torch.device(self.device):
            values = task.get_inputs()
        return [v.to(self.device) if isinstance(v, torch.Tensor) else v for v in values]

    def time(self, fn, args, n_calls):
        """(warm-up seconds, list of ms): WARMUP untimed calls, then n_calls timed ones."""
        torch = self.torch
        with torch.no_grad():
            t0 = time.perf_counter()
            for _ in range(WARMUP):
                fn(*args)
            torch.cuda.synchronize()
            warm_s = time.perf_counter() - t0
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            times = []
            for i in range(n_calls):
                self.flush.fill_(i)
                start.record()
                fn(*args)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
        return warm_s, times


def measure(torch, timer, suite, candidates_dir, verdict, index, kgym_cache=None, with_compile=True, scale=1.0):
    """The plain numbers of one verdict (raises on failure; the caller records the error)."""
    task_file = resolve_task_file(suite, verdict["task_id"])
    cand_file = candidates_dir / verdict["candidate_id"]
    if not cand_file.is_file():
        raise FileNotFoundError(f"candidate file {cand_file} does not exist")
    if kgym_cache:
        build = kgym_build_dir(kgym_cache, cand_file.read_bytes())
        os.environ["TORCH_EXTENSIONS_DIR"] = str(build / "torch_extensions")
        os.environ["TRITON_CACHE_DIR"] = str(build / "triton")
    task = _load_module(task_file, f"plain_task_{index}")
    sizes = scaled_constants(verdict, scale, task)
    for name, value in sizes.items():
        setattr(task, name, value)
    cand = _load_module(cand_file, f"plain_cand_{index}")
    m = verdict.get("measurements") if isinstance(verdict.get("measurements"), dict) else {}
    init_seed = int(m.get("init_seed") or 0)
    init = task.get_init_inputs()
    torch.manual_seed(init_seed)
    model = task.Model(*init).to(timer.device).eval()
    torch.manual_seed(init_seed)
    new = cand.ModelNew(*init).to(timer.device).eval()
    out = {"task_file": str(task_file), "candidate_file": str(cand_file), "init_seed": init_seed, "sizes": sizes,
           "flush_bytes": timer.flush_bytes}

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    passed = {"fp32": 0, "default": 0}
    max_err = {"fp32": 0.0, "default": 0.0}

    def check(got, ref, key):
        if isinstance(ref, torch.Tensor) and isinstance(got, torch.Tensor) and got.shape == ref.shape \
                and got.dtype == ref.dtype:
            max_err[key] = max(max_err[key], (got - ref).abs().max().item() if ref.numel() else 0.0)
            passed[key] += bool(torch.allclose(got, ref, atol=1e-4, rtol=1e-4))

    with torch.no_grad():
        for case in range(CASES):
            args = timer.inputs(task, case + 1)
            ref = model(*args)  # torch's default flags: cuDNN convolutions may use TF32
            with fp32_flags(torch):
                ref32 = model(*args)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            got = new(*args)
            if case == 0:
                torch.cuda.synchronize()
                out["first_call_s"] = time.perf_counter() - t1
            check(got, ref32, "fp32")
            check(got, ref, "default")
            del args, ref, ref32, got
    torch.cuda.synchronize()
    out["cases_s"] = time.perf_counter() - t0
    out["cases_passed"] = passed["fp32"]
    out["max_abs_error"] = max_err["fp32"]
    out["cases_passed_default_flags"] = passed["default"]
    out["max_abs_error_default_flags"] = max_err["default"]

    args = timer.inputs(task, 1000)
    for phase, fn in (("candidate", new), ("eager", model)):
        n = timed_calls(verdict, phase)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        warm_s, times = timer.time(fn, args, n)
        out[f"{phase}_s"] = time.perf_counter() - t0
        out[f"{phase}_warm_s"] = warm_s
        out[f"{phase}_calls"] = n
        out[f"{phase}_times_ms"] = times
    if not with_compile:
        del args
        out.update(compile_s=None, compile_warm_s=None, compile_calls=0, compile_times_ms=[], plain_compile_ms=None)
        out["plain_ms"] = statistics.median(out["candidate_times_ms"])
        out["plain_eager_ms"] = statistics.median(out["eager_times_ms"])
        out["speedup_eager"] = out["plain_eager_ms"] / out["plain_ms"] if out["plain_ms"] > 0 else None
        out["speedup_compile"] = None
        return out
    n = timed_calls(verdict, "compile")
    torch._dynamo.reset()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    compiled = torch.compile(model)
    warm_s, times = timer.time(compiled, args, n)
    out["compile_s"] = time.perf_counter() - t0
    out["compile_warm_s"] = warm_s
    out["compile_calls"] = n
    out["compile_times_ms"] = times
    del compiled, args

    out["plain_ms"] = statistics.median(out["candidate_times_ms"])
    out["plain_eager_ms"] = statistics.median(out["eager_times_ms"])
    out["plain_compile_ms"] = statistics.median(out["compile_times_ms"])
    out["speedup_eager"] = out["plain_eager_ms"] / out["plain_ms"] if out["plain_ms"] > 0 else None
    out["speedup_compile"] = out["plain_compile_ms"] / out["plain_ms"] if out["plain_ms"] > 0 else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdicts", required=True, help="kgym verdict JSONL (rows with outcome passed are timed)")
    ap.add_argument("--suite", required=True, help="KernelBench level dir (e.g. kernelbench/level1) or its root")
    ap.add_argument("--candidates", required=True, help="the candidates directory given to kgym eval")
    ap.add_argument("--out", required=True, help="JSON output")
    ap.add_argument("--md", help="markdown table output")
    ap.add_argument("--extensions-dir", help="TORCH_EXTENSIONS_DIR for load_inline candidates (kgym's cache)")
    ap.add_argument("--kgym-cache-dir", help="kgym's KGYM_CACHE_DIR: per candidate, reuse its build directory")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="size scale when a verdict has no provenance.scaled_constants (kgym eval --scale)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args(argv)
    if args.extensions_dir:
        os.environ["TORCH_EXTENSIONS_DIR"] = args.extensions_dir
    verdicts = parse_verdicts(args.verdicts)
    import torch
    if not torch.cuda.is_available():
        print("plain_timing.py: no CUDA device is available (torch.cuda.is_available() is False); this "
              "harness times on the GPU only. Run it on the GPU machine (bench/honest_gpu.sh).", file=sys.stderr)
        return 2
    suite, cands = pathlib.Path(args.suite), pathlib.Path(args.candidates)
    timer = PlainTimer(torch, torch.device(args.device))
    rows = []
    for i, v in enumerate(verdicts):
        t0 = time.perf_counter()
        try:
            plain = measure(torch, timer, suite, cands, v, i, args.kgym_cache_dir, not args.no_compile, args.scale)
        except Exception as e:  # recorded per row; the others still run
            plain = {"error": f"{type(e).__name__}: {e}"}
        torch.cuda.empty_cache()
        row = build_row(v, plain)
        rows.append(row)
        c = row["compare"]
        print(f"[{i + 1}/{len(verdicts)}] {v['task_id']} {v['candidate_id']}: plain {_fmt(plain.get('plain_ms'))} ms, "
              f"kgym {_fmt(v.get('runtime_ms'))} ms, overhead {_pct(c['overhead'])} "
              f"({time.perf_counter() - t0:.1f} s){'  ' + plain['error'] if 'error' in plain else ''}", flush=True)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(timer.device),
           "flush_bytes": timer.flush_bytes, "warmup": WARMUP, "cases": CASES}
    pathlib.Path(args.out).write_text(json.dumps({"env": env, "rows": rows}, indent=1))
    if args.md:
        pathlib.Path(args.md).write_text(render_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
