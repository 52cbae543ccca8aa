"""The zygote collects exited orphans as they exit (zygote.StrayCollector) and leaves live
workers' exit status for its reap request (red team rt5: a candidate's daemon that forks and
exits in a loop left zombies under the zygote, a child subreaper, until the next reap)."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent('''
    import ctypes, os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    from kgym_worker import zygote
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as the zygote
    collect = sys.argv[2] == "1"
    live = set()
    strays = zygote.StrayCollector(live)
    if collect:
        signal.signal(signal.SIGCHLD, strays)
    strays.spawning = True
    worker = os.fork()
    if worker == 0:
        os._exit(7)  # a live worker that exits at once: its status is the reap request's
    live.add(worker)
    strays.spawning = False
    if collect:
        strays()
    daemon = os.fork()
    if daemon == 0:  # a double-forked daemon: its children come back to us when it exits
        for _ in range(40):
            if os.fork() == 0:
                os._exit(0)
        os._exit(0)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        time.sleep(0.05)
    me = os.getpid()
    zombies = 0
    for pid in open(f"/proc/{me}/task/{me}/children").read().split():
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z" and int(pid) != worker:
            zombies += 1
    _, status = os.waitpid(worker, 0)
    print(zombies, os.WEXITSTATUS(status))
''')


def _run(collect: bool) -> tuple:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "python"), "1" if collect else "0"],
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    return int(out[0]), int(out[1])


def test_strays_are_collected_and_live_workers_kept():
    zombies, worker_exit = _run(collect=True)
    assert zombies == 0
    assert worker_exit == 7  # the live worker's status was left for the reap


def test_without_the_collector_strays_stay_zombies():
    # The control: the same processes leave zombies when nothing collects them, so the test above
    # can fail.
    zombies, worker_exit = _run(collect=False)
    assert zombies > 0 and worker_exit == 7
