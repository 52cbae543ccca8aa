"""Step latency of `kgym serve` with real candidates (issue 5): episodes on KernelBench level-1
tasks with the CUDA-L1 level-1 candidates as submissions, a cold pass and then a warm pass.

    python3 bench/server_gpu.py --devices cuda:0 --workers-per-device 2 --deadline 300
    python3 bench/server_gpu.py --devices cpu --suite examples/suite --candidates examples/candidates --tasks ''

1. Starts `kgym serve` (real engine) on a loopback port with the given devices and workers.
2. Cold pass: one WebSocket session per submission, all at once: reset(task_id=...) then one
   submit_kernel. Every code is new to the server, so this includes each build (load_inline).
   The cold pass gets at most --cold-share of the deadline; steps still running then are
   cancelled (the session is closed) and their rows are left out of the warm pass.
3. Warm pass(es): the same codes again in new episodes on the same server (build cache hot,
   workers and zygote warm), --warm-concurrency at a time, --warm-repeats times.
4. Per step: client latency (the submit_kernel call), outcome, gate, reward, speedups, and
   whether the observation and /state belong to the step's own episode and task. Server metrics
   (/metrics: eval_latency_ms, queue_wait_ms, step_latency_ms) are read after the cold pass
   (cold steps only) and at the end (both passes: the server keeps no per-pass window).
Candidates: a CUDA-L1 JSONL (`task_id`, `custom_code`; rows without code are skipped and
reported) or a directory (`<stem>/<name>.py` or `<stem>.py`, as `kgym eval --candidates`).
--reference rows (JSONL only) judges each row against its own `ref_code` (a temporary suite)
instead of the suite's task. Results: $OUT/server_gpu.json and $OUT/server_gpu.md, rewritten after
every step, so a run cut short still leaves what it measured. --deadline bounds the whole run:
the server is stopped (SIGTERM, then SIGKILL of its process group) when it is reached.
"""
import argparse
import asyncio
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from kgym_client import AsyncKgymSession, KgymClient, KgymError  # noqa: E402

DEFAULT_TASKS = "1,3,9,12,19,21,23,26,33,36,40,88,95,97"


def percentile(xs, q):
    """Nearest-rank percentile, as the server computes its own."""
    xs = sorted(xs)
    if not xs:
        return None
    k = max(1, -(-int(q * 1000) * len(xs) // 1000))  # ceil(q * n), exact for q in thousandths
    return xs[min(len(xs), k) - 1]


def summary(xs):
    return {"count": len(xs), **{k: (round(percentile(xs, q), 1) if xs else None)
                                 for k, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}}


def leading_number(stem):
    m = re.match(r"(\d+)", stem)
    return int(m.group(1)) if m else None


def parse_tasks(spec):
    return [int(x) for x in spec.replace(" ", "").split(",") if x] if spec else []


def load_submissions(path, wanted):
    """-> (submissions, skipped). A submission: {key, number, stem (task file stem or None),
    label, code, ref_code (JSONL only)}."""
    path = Path(path)
    subs, skipped = [], []
    if path.is_file():
        rows = {}
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows[int(r["task_id"])] = r
        for n in wanted or sorted(rows):
            r = rows.get(n)
            code = (r or {}).get("custom_code")
            if r is None:
                skipped.append({"number": n, "why": "no row with this task_id"})
            elif not isinstance(code, str) or not code.strip() or code.strip() == "None":
                skipped.append({"number": n, "why": "custom_code is empty/None"})
            else:
                subs.append({"key": f"row{n}", "number": n, "stem": None, "label": f"cuda-l1 row {n}",
                             "code": code, "ref_code": r.get("ref_code")})
    elif path.is_dir():
        files = []
        for p in sorted(path.iterdir()):
            if p.is_dir():
                files += [(p.name, f) for f in sorted(p.glob("*.py"))]
            elif p.suffix == ".py":
                files.append((p.stem, p))
        for stem, f in files:
            n = leading_number(stem)
            if wanted and n not in wanted:
                continue
            label = f"{stem}/{f.stem}" if f.parent != path else stem
            subs.append({"key": re.sub(r"[^A-Za-z0-9_.-]", "-", label), "number": n, "stem": stem,
                         "label": label, "code": f.read_text(), "ref_code": None})
        for n in wanted:
            if not any(s["number"] == n for s in subs):
                skipped.append({"number": n, "why": f"no candidate for it in {path}"})
    else:
        raise SystemExit(f"--candidates {path}: no such file or directory")
    return subs, skipped


def rows_suite(subs, suite_dir, tmp):
    """A level1 suite of the rows' own ref_code (named after the suite's file when there is one)."""
    names = {leading_number(p.stem): p.stem for p in (Path(suite_dir) / "level1").glob("*.py")} \
        if (Path(suite_dir) / "level1").is_dir() else {}
    level = Path(tmp) / "level1"
    level.mkdir(parents=True)
    for s in subs:
        if not s["ref_code"]:
            raise SystemExit(f"--reference rows: {s['label']} has no ref_code")
        # A distinct name: the row's ref_code is not the suite's problem (older sizes, and for
        # some numbers another problem), so it must not borrow the suite's name as such.
        stem = f"{s['number']}_cudal1_ref" + (f"_{names[s['number']].split('_', 1)[1]}" if s["number"] in names else "")
        (level / f"{stem}.py").write_text(s["ref_code"])
    return str(tmp)


def resolve_task(sub, task_ids):
    """The server's task id for a submission: the task whose file stem is the candidate's stem,
    else the one whose stem starts with '<number>_' (level 1 first)."""
    stems = {t.rsplit("/", 1)[-1]: t for t in task_ids}
    if sub["stem"] and sub["stem"] in stems:
        return stems[sub["stem"]]
    if sub["number"] is None:
        return None
    hits = [t for t in task_ids if t.rsplit("/", 1)[-1].startswith(f"{sub['number']}_")]
    hits.sort(key=lambda t: (not t.startswith("L1/"), t))
    return hits[0] if hits else None


class Server:
    """`kgym serve` in its own process group; stdout's first line gives the URL."""

    def __init__(self, cmd, log_path):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        self.first_line = None
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        self.first_line = self.proc.stdout.readline()
        self._ready.set()
        for line in self.proc.stdout:  # keep draining
            self.log.write(line)

    def url(self, timeout):
        if not self._ready.wait(timeout) or not self.first_line or "listening on " not in self.first_line:
            raise RuntimeError(f"kgym serve did not start within {timeout:.0f} s: {self.first_line!r} "
                               f"(exit {self.proc.poll()}; see server.log)")
        return self.first_line.split("listening on ", 1)[1].split()[0]

    def stop(self, grace):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        try:  # whatever is left of the server and its workers (its own process group)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.log.flush()
        return self.proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data = Path(os.environ.get("KGYM_DATA", ".carry/data"))
    ap.add_argument("--kgym", default=str(ROOT / "build" / "kgym"))
    ap.add_argument("--suite", default=str(data / "kernelbench"), help="kgym serve --suite (default $KGYM_DATA/kernelbench)")
    ap.add_argument("--candidates", default=str(data / "cuda-l1" / "h100_level1.jsonl"),
                    help="CUDA-L1 JSONL (task_id, custom_code) or a candidates directory")
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help="task numbers (JSONL task_id / leading number of the stem); '' = all")
    ap.add_argument("--reference", default="suite", choices=["suite", "rows"],
                    help="suite: the suite's task; rows: each JSONL row's own ref_code (a temporary suite)")
    ap.add_argument("--devices", default="cuda:0")
    ap.add_argument("--workers-per-device", type=int, default=2)
    ap.add_argument("--profile", default="off", choices=["off", "strict", "hybrid", "kernelbench"])
    ap.add_argument("--cases", type=int, default=5)
    ap.add_argument("--reward", default="kevin")
    ap.add_argument("--max-turns", type=int, default=1, help="turns per episode (each episode takes one submission)")
    ap.add_argument("--deadline", type=float, default=300, help="seconds for the whole run")
    ap.add_argument("--cold-share", type=float, default=0.6, help="share of the deadline the cold pass may take")
    ap.add_argument("--warm-concurrency", type=int, default=1)
    ap.add_argument("--warm-repeats", type=int, default=2, help="warm passes over the rows (more samples)")
    ap.add_argument("--python", default="python3", help="interpreter for the engine's workers")
    ap.add_argument("--out-dir", default=os.environ.get("OUT", str(ROOT / "out" / "server_gpu")))
    a = ap.parse_args()

    t_start = time.monotonic()
    hard_end = t_start + a.deadline
    margin = 20.0  # left for stopping the server and writing the results
    out = Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = parse_tasks(a.tasks)
    subs, skipped = load_submissions(a.candidates, wanted)
    tmp = tempfile.TemporaryDirectory(prefix="kgym-server-gpu-")
    suite = a.suite
    if a.reference == "rows":
        if not Path(a.candidates).is_file():
            raise SystemExit("--reference rows needs a JSONL of rows with ref_code")
        suite = rows_suite(subs, a.suite, tmp.name)

    steps, notes = [], []
    result = {
        "config": {k: getattr(a, k) for k in ("suite", "candidates", "tasks", "reference", "devices", "workers_per_device",
                                               "profile", "cases", "reward", "max_turns", "deadline", "cold_share",
                                               "warm_concurrency", "warm_repeats")},
        "served_suite": suite,
        "host": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} cores)",
        "env": {k: os.environ[k] for k in ("TORCH_CUDA_ARCH_LIST", "CUDA_VISIBLE_DEVICES") if k in os.environ},
        "skipped": skipped, "steps": steps, "notes": notes, "complete": False,
    }

    def save():
        by = {p: [s for s in steps if s["pass"] == p] for p in ("cold", "warm")}
        for p, ss in by.items():
            ok = [s["client_ms"] for s in ss if s.get("client_ms") is not None and not s.get("error")]
            result[p] = {"steps": len(ss), "answered": len(ok), "errors": sum(1 for s in ss if s.get("error")),
                         "mismatched": sum(1 for s in ss if s.get("mismatch")), "client_step_latency_ms": summary(ok),
                         "outcomes": {o: sum(1 for s in ss if s.get("outcome") == o)
                                      for o in sorted({s.get("outcome") for s in ss if s.get("outcome")})}}
        result["elapsed_s"] = round(time.monotonic() - t_start, 1)
        (out / "server_gpu.json").write_text(json.dumps(result, indent=2) + "\n")
        (out / "server_gpu.md").write_text(render_md(result, subs))

    cmd = [a.kgym, "serve", "--port", "0", "--host", "127.0.0.1", "--devices", a.devices,
           "--workers-per-device", str(a.workers_per_device), "--suite", suite, "--policy-profile", a.profile,
           "--cases", str(a.cases), "--max-turns", str(max(1, a.max_turns)), "--reward", a.reward,
           "--python", a.python, "--max-episodes", str(max(64, 4 * len(subs) * (1 + a.warm_repeats)))]
    result["server_cmd"] = cmd
    print("server:", " ".join(cmd), flush=True)
    server = Server(cmd, out / "server.log")
    try:
        url = server.url(timeout=max(5.0, min(180.0, hard_end - margin - time.monotonic())))
        result["server_start_s"] = round(time.monotonic() - t_start, 1)
        http = KgymClient(url, timeout=30)
        meta = http.metadata()
        result["server_devices"] = meta.get("devices")
        task_ids = meta["tasks"]
        for s in subs:
            s["task_id"] = resolve_task(s, task_ids)
            if s["task_id"] is None:
                skipped.append({"number": s["number"], "label": s["label"], "why": "no task of that number in the suite"})
        subs[:] = [s for s in subs if s["task_id"]]
        print(f"{url}: {len(task_ids)} tasks; {len(subs)} submissions, {len(skipped)} skipped "
              f"(started in {result['server_start_s']} s)", flush=True)
        save()

        async def one_step(sub, pass_name, rep):
            eid = f"{pass_name}{rep}-{sub['key']}"
            rec = {"pass": pass_name, "repeat": rep, "key": sub["key"], "number": sub["number"], "label": sub["label"],
                   "task_id": sub["task_id"], "episode_id": eid, "started_s": round(time.monotonic() - t_start, 2)}
            steps.append(rec)
            try:
                async with AsyncKgymSession(url, timeout=max(1.0, hard_end - time.monotonic())) as s:
                    t0 = time.monotonic()
                    r = await s.reset(task_id=sub["task_id"], episode_id=eid, max_turns=a.max_turns)
                    rec["reset_ms"] = round(1e3 * (time.monotonic() - t0), 1)
                    if r.observation["episode_id"] != eid or r.observation["task_id"] != sub["task_id"]:
                        rec["mismatch"] = f"reset answered {r.observation['episode_id']}/{r.observation['task_id']}"
                    t0 = time.monotonic()
                    r = await s.submit_kernel(sub["code"])
                    rec["client_ms"] = round(1e3 * (time.monotonic() - t0), 1)
                    o, fb = r.observation, r.feedback or {}
                    rec.update(outcome=fb.get("outcome"), gate=fb.get("gate"), reward=r.reward, done=r.done,
                               speedup_eager=fb.get("speedup_eager"), speedup_compile=fb.get("speedup_compile"),
                               runtime_ms=(fb.get("timing") or {}).get("runtime_ms"),
                               ref_runtime_ms=(fb.get("timing") or {}).get("ref_runtime_ms"),
                               headline=(fb.get("messages") or [""])[0][:300],
                               policy_rules=sorted({h.get("rule") for h in fb.get("policy_hits") or []} - {None}))
                    st = await s.state()
                    bad = []
                    if o.get("episode_id") != eid:
                        bad.append(f"observation episode {o.get('episode_id')}")
                    if o.get("task_id") != sub["task_id"]:
                        bad.append(f"observation task {o.get('task_id')}")
                    if o.get("feedback_turn") != 1 or o.get("turn") != 1 or not fb:
                        bad.append(f"turn {o.get('turn')}/feedback_turn {o.get('feedback_turn')}")
                    if st.get("episode_id") != eid or st.get("task_id") != sub["task_id"] or st.get("turns_used") != 1:
                        bad.append(f"state {st.get('episode_id')}/{st.get('task_id')}/{st.get('turns_used')} turns")
                    if bad:
                        rec["mismatch"] = "; ".join(([rec["mismatch"]] if rec.get("mismatch") else []) + bad)
            except KgymError as e:
                rec["error"] = f"{e.code}: {e.message[:300]}"
            except asyncio.CancelledError:
                rec["error"] = "cancelled (pass budget or deadline reached)"
                raise
            except Exception as e:  # noqa: BLE001 - a step's failure is a result, not a crash
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            finally:
                rec["ended_s"] = round(time.monotonic() - t_start, 2)
                save()
                print(f"  {pass_name}{rep} {sub['label']:>28} {sub['task_id']:<44} "
                      f"{rec.get('client_ms', '-'):>9} ms {rec.get('outcome') or rec.get('error')}"
                      + (f"  MISMATCH {rec['mismatch']}" if rec.get("mismatch") else ""), flush=True)
            return rec

        async def run_pass(pass_name, rep, items, concurrency, budget_end):
            sem = asyncio.Semaphore(concurrency)

            async def guarded(sub):
                async with sem:
                    if time.monotonic() >= budget_end:
                        return None
                    return await one_step(sub, pass_name, rep)

            if not items:
                return []
            tasks = [asyncio.ensure_future(guarded(s)) for s in items]
            done, pending = await asyncio.wait(tasks, timeout=max(0.0, budget_end - time.monotonic()))
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.wait(pending, timeout=10)
                notes.append(f"{pass_name}{rep}: {len(pending)} of {len(items)} steps cut at the pass budget")
            return [t.result() for t in done if not t.cancelled() and t.exception() is None and t.result()]

        async def run_all():
            t0 = time.monotonic()
            usable = hard_end - margin - t0
            cold_end = t0 + max(1.0, a.cold_share * usable)
            print(f"cold pass: {len(subs)} submissions at once (budget {cold_end - t0:.0f} s)", flush=True)
            cold = await run_pass("cold", 0, subs, max(1, len(subs)), cold_end)
            result["cold_wall_s"] = round(time.monotonic() - t0, 1)
            result["server_metrics_after_cold"] = http.metrics()
            finished = {r["key"] for r in cold if "client_ms" in r}
            left = [s["label"] for s in subs if s["key"] not in finished]
            if left:
                notes.append(f"not in the warm pass (cold step unfinished or failed): {', '.join(left)}")
            warm_subs = [s for s in subs if s["key"] in finished]
            t1 = time.monotonic()
            for rep in range(1, a.warm_repeats + 1):
                if time.monotonic() >= hard_end - margin:
                    notes.append(f"warm passes {rep}..{a.warm_repeats} not started (deadline)")
                    break
                print(f"warm pass {rep}: {len(warm_subs)} submissions, {a.warm_concurrency} at a time", flush=True)
                await run_pass("warm", rep, warm_subs, max(1, a.warm_concurrency), hard_end - margin)
            result["warm_wall_s"] = round(time.monotonic() - t1, 1)

        try:
            asyncio.run(asyncio.wait_for(run_all(), timeout=max(1.0, hard_end - margin - time.monotonic() + 5)))
            result["complete"] = not notes
        except asyncio.TimeoutError:
            notes.append("deadline reached: partial results")
        try:
            result["server_metrics_end"] = KgymClient(url, timeout=10).metrics()
        except Exception as e:  # noqa: BLE001
            notes.append(f"no final /metrics: {e}")
    except Exception as e:  # noqa: BLE001 - keep what was measured
        notes.append(f"run failed: {type(e).__name__}: {e}")
    finally:
        rc = server.stop(grace=max(2.0, min(15.0, hard_end - time.monotonic())))
        result["server_exit"] = rc
        save()
        tmp.cleanup()

    cold, warm = result.get("cold", {}), result.get("warm", {})
    print(f"cold: {cold.get('answered')}/{cold.get('steps')} steps, client ms {cold.get('client_step_latency_ms')}")
    print(f"warm: {warm.get('answered')}/{warm.get('steps')} steps, client ms {warm.get('client_step_latency_ms')}")
    for n in notes:
        print("note:", n)
    mism = sum(1 for s in steps if s.get("mismatch"))
    print(f"steps whose observation/state did not belong to their own episode/task: {mism}")
    print(f"wrote {out / 'server_gpu.json'} and {out / 'server_gpu.md'}")
    return 1 if mism or not steps or not cold.get("answered") else 0


def fmt(x, nd=3):
    """Numbers for the tables: integers as they are, >= 100 without decimals, else nd significant digits."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.0f}" if abs(x) >= 10 ** (nd - 1) else f"{x:.{nd}g}"
    return str(x)


def render_md(r, subs):
    c = r["config"]
    L = ["# kgym serve: step latency with real candidates (issue 5)", "",
         f"Server: `{' '.join(map(str, r.get('server_cmd', [])))}`", "",
         f"Candidates `{c['candidates']}` (tasks {c['tasks'] or 'all'}), reference `{c['reference']}`, devices "
         f"{c['devices']} x {c['workers_per_device']} workers, profile `{c['profile']}`, {c['cases']} cases, "
         f"{c['warm_repeats']} warm pass(es) at concurrency {c['warm_concurrency']}. Host {r['host']}. "
         f"Server started in {r.get('server_start_s', '-')} s; run {r.get('elapsed_s')} s of {c['deadline']:.0f} s"
         f"{'' if r.get('complete') else ' (INCOMPLETE: see notes)'}.", "",
         "## Step latency (client side: the submit_kernel call, ms)", "",
         "| pass | steps | answered | errors | wrong episode/task | wall s | p50 | p90 | p99 | max |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for p in ("cold", "warm"):
        s = r.get(p, {})
        lat = s.get("client_step_latency_ms", {})
        L.append(f"| {p} | {s.get('steps', 0)} | {s.get('answered', 0)} | {s.get('errors', 0)} | {s.get('mismatched', 0)} | "
                 f"{r.get(p + '_wall_s', '-')} | {fmt(lat.get('p50'))} | {fmt(lat.get('p90'))} | {fmt(lat.get('p99'))} | "
                 f"{fmt(lat.get('max'))} |")
    L += ["", "## Server metrics (ms, nearest-rank over the server's window)", "",
          "| when | metric | count | p50 | p90 | p99 | max |", "|---|---|---|---|---|---|---|"]
    for when, key in (("after cold pass", "server_metrics_after_cold"), ("end (cold + warm)", "server_metrics_end")):
        m = r.get(key)
        if not m:
            continue
        for metric in ("eval_latency_ms", "queue_wait_ms", "step_latency_ms"):
            v = m.get(metric, {})
            L.append(f"| {when} | {metric} | {v.get('count')} | {fmt(v.get('p50'))} | {fmt(v.get('p90'))} | "
                     f"{fmt(v.get('p99'))} | {fmt(v.get('max'))} |")
        ev = m.get("evaluations", {})
        L.append(f"| {when} | evaluations | submitted {ev.get('submitted')}, completed {ev.get('completed')}, failed "
                 f"{ev.get('failed')}, cancelled {ev.get('cancelled')} | | | | |")
    L += ["", "## Per submission", "",
          "| submission | server task | cold outcome | cold ms | warm outcome | warm ms (each) | reward | speedup eager | cand ms | eager ms | headline |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for sub in subs:
        ss = [s for s in r["steps"] if s["key"] == sub["key"]]
        cold = next((s for s in ss if s["pass"] == "cold"), {})
        warm = [s for s in ss if s["pass"] == "warm"]
        last = (warm or [cold])[-1] if (warm or cold) else {}
        wout = sorted({s.get("outcome") or "error" for s in warm})
        L.append(f"| {sub['label']} | {sub.get('task_id', '-')} | {cold.get('outcome') or cold.get('error', '-')} | "
                 f"{fmt(cold.get('client_ms'), 4)} | {', '.join(wout) or '-'} | "
                 f"{', '.join(fmt(s.get('client_ms'), 4) for s in warm) or '-'} | {fmt(last.get('reward'))} | "
                 f"{fmt(last.get('speedup_eager'))} | {fmt(last.get('runtime_ms'))} | {fmt(last.get('ref_runtime_ms'))} | "
                 f"{(last.get('headline') or last.get('error') or '').replace('|', '/')[:110]} |")
    if r["skipped"]:
        L += ["", "Skipped: " + "; ".join(f"{s.get('label', s['number'])}: {s['why']}" for s in r["skipped"])]
    mism = [s for s in r["steps"] if s.get("mismatch")]
    L += ["", f"Steps whose observation or /state named another episode, task or turn: {len(mism)}"
          + ("".join(f"\n- {s['episode_id']}: {s['mismatch']}" for s in mism))]
    if r["notes"]:
        L += ["", "Notes:"] + [f"- {n}" for n in r["notes"]]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
