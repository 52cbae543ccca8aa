import torch, time
dev = "cuda"
for n in (1 << 20, 1 << 22, 1 << 24):
    x = torch.randn(n, device=dev)
    fns = {
        "i32->i64": lambda: x.view(torch.int32).sum(dtype=torch.int64),
        "i64": lambda: x.view(torch.int64).sum(),
        "i32 wrap": lambda: x.view(torch.int32).sum(dtype=torch.int32),
        "f32 sum": lambda: x.sum(),
    }
    for k, f in fns.items():
        for _ in range(3): f()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(50): f()
        e.record(); torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(50): f()
        host = (time.perf_counter() - t0) / 50 * 1e3
        torch.cuda.synchronize()
        print(f"{n*4/2**20:6.0f} MB {k:9} gpu {s.elapsed_time(e)/50*1e3:8.1f} us  host {host*1e3:6.1f} us  GB/s {n*4/(s.elapsed_time(e)/50*1e-3)/1e9:7.0f}")
