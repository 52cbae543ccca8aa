"""Where kgym's per-call time goes on the GPU, method by method (issue 4 overhead study).

For honest candidates of tests/data/honest_gpu on KernelBench level-1 tasks (sizes x --scale),
in one plain process, times the same call several ways and prints a JSON line per task:
  plain      flush; start; call; end; sync               (do_bench / bench/plain_timing.py)
  kgym       inputs; flush; sync; start; call; sync; end  (timing.time_calls before 2026-12)
  kgym_empty the same window without a call (the window overhead kgym subtracts)
  kgym_cover inputs; flush; sync; sleep ~cover; start; call; sync; end
  cover_empty the same without a call
  host_us    host time of the call alone (no sync), median
  wall_us    per call: fresh inputs + call + sync, minus fresh inputs + sync (the wall check)
  time_calls timing.time_calls itself (fresh inputs, as the worker runs it)
Usage: python3 bench/timing_diag.py --suite DIR --candidates DIR --scale 0.1 [--tasks a,b]
"""
import argparse, json, os, statistics, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import torch
from kgym_worker import loading, timing

def med(xs):
    return statistics.median(xs) if xs else None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True); ap.add_argument("--candidates", required=True)
    ap.add_argument("--scale", type=float, default=0.1); ap.add_argument("--tasks", default="")
    ap.add_argument("--n", type=int, default=50); ap.add_argument("--cover-us", type=float, default=200)
    a = ap.parse_args()
    dev = "cuda"
    work = tempfile.mkdtemp()
    l2 = timing.l2_bytes(dev)
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device=dev)
    # cycles per us of torch.cuda._sleep
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000); torch.cuda.synchronize()
    s.record(); torch.cuda._sleep(1_000_000); e.record(); e.synchronize()
    cyc_per_us = 1_000_000 / (s.elapsed_time(e) * 1e3)
    cover = int(a.cover_us * cyc_per_us)
    print(json.dumps({"l2_bytes": l2, "sleep_cycles_per_us": cyc_per_us}), flush=True)
    names = sorted(os.listdir(a.candidates))
    if a.tasks:
        keep = a.tasks.split(",")
        names = [n for n in names if any(n.startswith(k) for k in keep)]
    for name in names:
        cand = os.path.join(a.candidates, name, "triton.py")
        task_file = os.path.join(a.suite, name + ".py")
        if not (os.path.exists(cand) and os.path.exists(task_file)):
            continue
        try:
            task = loading.load_module(open(task_file).read(), "task_" + name.split("_")[0], work)
            loading.scale_sizes(task, a.scale)
            cm = loading.load_module(open(cand).read(), "cand_" + name.split("_")[0], work)
            torch.manual_seed(0)
            with torch.device(dev):
                init = task.get_init_inputs()
                model = cm.ModelNew(*init).to(dev)
            make = lambda seed: loading.make_inputs(task, seed, "nominal", dev, on_device=True)
            args = make(1)
            res = {"task": name}
            with torch.no_grad():
                for _ in range(5):
                    model(*args)
                torch.cuda.synchronize()
                st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                def run(mode, call=True, fresh=False):
                    xs = []
                    for i in range(a.n):
                        ar = make(100 + i) if fresh else args
                        flush.fill_(i)
                        if mode == "plain":
                            st.record()
                            if call: model(*ar)
                            en.record(); torch.cuda.synchronize()
                        else:
                            torch.cuda.synchronize()
                            if mode == "cover":
                                torch.cuda._sleep(cover)
                            st.record()
                            if call: model(*ar)
                            torch.cuda.synchronize(); en.record(); en.synchronize()
                        xs.append(st.elapsed_time(en) * 1e3)
                    return med(xs)
                res["plain_us"] = run("plain")
                res["plain_fresh_us"] = run("plain", fresh=True)
                res["kgym_us"] = run("kgym", fresh=True)
                res["kgym_empty_us"] = run("kgym", call=False)
                res["cover_us"] = run("cover", fresh=True)
                res["cover_empty_us"] = run("cover", call=False)
                hs = []
                for i in range(a.n):
                    torch.cuda.synchronize(); t0 = time.perf_counter(); model(*args); hs.append((time.perf_counter() - t0) * 1e6)
                torch.cuda.synchronize()
                res["host_us"] = med(hs)
                def wall(call, n=a.n):
                    torch.cuda.synchronize(); t0 = time.perf_counter()
                    for i in range(n):
                        ar = make(500 + i)
                        if call: model(*ar)
                        torch.cuda.synchronize()
                        del ar
                    return (time.perf_counter() - t0) * 1e6 / n
                w_call = min(wall(True) for _ in range(3)); w_no = min(wall(False) for _ in range(3))
                res["wall_call_us"], res["wall_nocall_us"], res["wall_us"] = w_call, w_no, w_call - w_no
                # a harness-owned trivial call: one small kernel through an nn.Module
                class Triv(torch.nn.Module):
                    def forward(self, *xs):
                        return torch.empty_like(xs[0]).view(-1)[:1].zero_()
                triv = Triv()
                def wall_triv(n=a.n):
                    torch.cuda.synchronize(); t0 = time.perf_counter()
                    for i in range(n):
                        ar = make(500 + i); triv(*ar); torch.cuda.synchronize(); del ar
                    return (time.perf_counter() - t0) * 1e6 / n
                res["wall_trivial_us"] = min(wall_triv() for _ in range(3)) - w_no
                seeds = list(range(1000, 1000 + 3 + 100))
                rec, _ = timing.time_calls(model, make, seeds, dev, {"warmup": 3, "min_calls": 10, "max_calls": 100,
                                           "budget_ms": 300, "target_spread": 0.05})
                res["time_calls_us"] = med(rec["times_ms"]) * 1e3
                res["time_calls_overhead_us"] = rec.get("window_overhead_ms", 0) * 1e3
                res["time_calls_n"] = len(rec["times_ms"])
            print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in res.items()}), flush=True)
        except Exception as exc:
            print(json.dumps({"task": name, "error": repr(exc)[:300]}), flush=True)

if __name__ == "__main__":
    main()
