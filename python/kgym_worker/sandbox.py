"""The candidate's sandbox, applied by the zygote in a forked candidate worker before any
candidate code runs (docs/architecture.md, "Sandbox"): Landlock write and signal scoping, and a
seccomp filter on process calls (no ptrace, scheduling or priority changes of other processes, no
new user namespace, no io_uring, splice, sendfile or open-file-description locks). Each function
returns a one-line description of what it applied, which the worker log shows."""
import os

def _landlock_allow(libc, ruleset: int, path: str, rights: int) -> int:
    """Adds a Landlock rule to ``ruleset``: ``rights`` (LANDLOCK_ACCESS_FS_* bits) below ``path``.
    Returns landlock_add_rule's result (0), or -1 when ``path`` cannot be opened or the rule is
    refused (errno set)."""
    import ctypes

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return -1
    try:
        return libc.syscall(445, ruleset, 1, ctypes.byref(PathBeneath(rights, fd)), 0)  # landlock_add_rule
    finally:
        os.close(fd)


def restrict_writes(writable) -> str:
    """Landlock (Linux >= 5.13): from here on this process and its children may create, write,
    truncate, rename or delete files only below ``writable`` (and write /dev/null and the GPU's
    device files). Closes the kind "the candidate writes where the trusted side or a later
    candidate reads" (planted .pyc files, /dev/shm replay, patched site-packages). Returns
    "landlock abi N", or "none (...)" where the kernel lacks Landlock (the run goes on)."""
    import ctypes
    import glob
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
    if abi < 1:
        return f"none (landlock unavailable: {os.strerror(ctypes.get_errno())})"
    handled = 0
    for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12):  # write_file, remove_*, make_*
        handled |= 1 << bit
    if abi >= 2:
        handled |= 1 << 13  # refer (rename/link across directories)
    if abi >= 3:
        handled |= 1 << 14  # truncate
    file_rights = handled & ((1 << 1) | (1 << 14))
    attr = ctypes.c_uint64(handled)
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        return f"none (landlock_create_ruleset: {os.strerror(ctypes.get_errno())})"

    def allow(path, rights):
        _landlock_allow(libc, ruleset, path, rights)

    for d in writable:
        os.makedirs(d, exist_ok=True)
        allow(d, handled)
    # CUDA initialisation fails (cudaGetDeviceCount: error 304) unless it may write below /proc
    # (bench/landlock_cuda_probe.py on the H200); this process's own /proc entry is what is
    # allowed here (enough on the H200, session 11). A child process's own entry is not: a
    # subprocess of the candidate held no CUDA context under it (the escaped GPU hogs of red teams
    # rt5/rt6 on the H200, session 11: no foreign GPU process, honest speed).
    allow(f"/proc/{os.getpid()}", handled)
    for f in ["/dev/null"] + glob.glob("/dev/nvidia*"):
        allow(f, handled if os.path.isdir(f) else file_rights)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, required by landlock_restrict_self
    if libc.syscall(446, ruleset, 0) != 0:  # landlock_restrict_self
        err = os.strerror(ctypes.get_errno())
        os.close(ruleset)
        return f"none (landlock_restrict_self: {err})"
    os.close(ruleset)
    return f"landlock abi {abi}"


def scope_signals(abstract_sockets: bool = False) -> str:
    """Landlock signal scoping (ABI >= 6, Linux >= 6.12): from here on this process and its
    children may signal only processes inside their own sandbox, not the zygote, the reference
    worker (a SIGSTOP there slows the baselines the speedup divides by: red team a02), other
    candidates or the supervisor. It restricts no file access, so it applies on every device.
    With ``abstract_sockets`` (CPU workers) they may also connect only to abstract Unix sockets
    made inside their own sandbox: red team rt17 (session 11) passed data between two candidates
    judged at the same time through one (a path socket needs a file, which the write sandbox
    confines). On CUDA devices not yet: whether the driver or CUPTI connect to one is unverified
    on the H200. Returns "landlock abi N[ +abstract sockets]" or "none (...)" where the kernel
    cannot scope signals."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
    if abi < 6:
        return f"none (signal scoping needs Landlock ABI 6, the kernel has {max(abi, 0)})"

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    # Every Landlock layer denies moving a file to another directory (the "refer" right) unless
    # one of its rules allows it, even a layer that handles no file access: under the write
    # sandbox this signal layer made Triton's cache (a file renamed out of a temporary
    # subfolder) fail with EXDEV (H200, session 11). This layer allows it everywhere, leaving
    # file access to _restrict_writes's layer.
    refer = 1 << 13  # LANDLOCK_ACCESS_FS_REFER
    scoped = (1 << 1) | (1 if abstract_sockets else 0)  # LANDLOCK_SCOPE_SIGNAL, _ABSTRACT_UNIX_SOCKET
    # TCP: no bind and no connect, on every device (ABI 4+, handled without a rule). Red team
    # rt18 (session 12): a candidate found `kgym serve`'s port in /proc/net/tcp and closed another
    # trainer's episode through the API (no authentication), and two candidates judged at the same
    # time talked over loopback. Nothing a kernel needs (CUDA, Triton, a load_inline build) uses TCP.
    tcp = (1 << 0) | (1 << 1)  # LANDLOCK_ACCESS_NET_BIND_TCP, _CONNECT_TCP
    attr = RulesetAttr(refer, tcp, scoped)
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        return f"none (landlock_create_ruleset: {os.strerror(ctypes.get_errno())})"
    if _landlock_allow(libc, ruleset, "/", refer) != 0:
        err = os.strerror(ctypes.get_errno())
        os.close(ruleset)
        return f"none (landlock_add_rule: {err})"
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if libc.syscall(446, ruleset, 0) != 0:  # landlock_restrict_self
        err = os.strerror(ctypes.get_errno())
        os.close(ruleset)
        return f"none (landlock_restrict_self: {err})"
    os.close(ruleset)
    return f"landlock abi {abi}, no tcp" + (" +abstract sockets" if abstract_sockets else "")


# x86_64 system call numbers the candidate may use on itself only (argument 0, the pid, is 0).
_SELF_ONLY_ARG0 = {302: "prlimit64", 314: "sched_setattr", 144: "sched_setscheduler",
                   142: "sched_setparam", 203: "sched_setaffinity", 256: "migrate_pages", 279: "move_pages"}
# ... whose argument 1 (who / pid) must be 0; setpriority also needs argument 0 (which) 0.
_SELF_ONLY_ARG1 = {251: "ioprio_set", 298: "perf_event_open"}
_SETPRIORITY = 141
# ... never: another process's memory or file descriptors.
_DENIED = {101: "ptrace", 310: "process_vm_readv", 311: "process_vm_writev", 438: "pidfd_getfd",
           440: "process_madvise", 308: "setns", 248: "add_key", 249: "request_key", 250: "keyctl",
           # io_uring: a file registered with a ring stays open with no descriptor /proc shows
           # (red team rt20 held a deleted 300 MiB file past the disk quota so)
           425: "io_uring_setup", 426: "io_uring_enter", 427: "io_uring_register",
           # a splice, tee or sendfile blocked on a full pipe holds its file with no descriptor
           # left (rt21: 300 MiB); shutil's copies fall back to read and write
           275: "splice", 276: "tee", 278: "vmsplice", 40: "sendfile"}
# ... not with CLONE_NEWUSER in argument 0's flags: a new user namespace holds every capability
# inside it, and the kernel's same-owner checks (sched_setaffinity on another process) accept
# them (red team rt17: the reference pinned to one busy CPU, 1.53x). clone3 passes its flags in
# memory a filter cannot read: it answers ENOSYS, and glibc falls back to clone.
_NO_NEW_USER_NS = {56: "clone", 272: "unshare"}
# ... nor with CLONE_PARENT: the child would be the worker's sibling, below the zygote, outside
# the candidate's tree (keep_orphans).
_CLONE_PARENT = 0x8000
# prctl(PR_SET_CHILD_SUBREAPER) (argument 0): the worker stays the subreaper of its processes
# (keep_orphans); a process of the candidate that made itself one would only keep them below it.
_PRCTL = 157
_PR_SET_CHILD_SUBREAPER = 36
# ... fcntl's open-file-description locks (F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW: argument 1):
# two threads waiting crosswise on them (no deadlock detection) keep a deleted file of any size
# alive after every descriptor is closed (red team rt22: 2 GiB under a 64 MiB quota). Process
# locks (F_SETLK, F_SETLKW, what fcntl.lockf uses) stay allowed.
_FCNTL = 72
_OFD_LOCKS = (36, 37, 38)
_CLONE3 = 435
_CLONE_NEWUSER = 0x10000000


def seccomp_program() -> list:
    """The candidate's seccomp filter as (code, jt, jf, k) BPF instructions (x86_64): the system
    calls that act on another process by pid (scheduling policy and priority, resource limits,
    memory placement, I/O priority, performance counters) fail with EPERM unless they name the
    caller itself (pid 0), and those that read or write another process's memory or descriptors
    always do, as do io_uring, splice, tee, vmsplice, sendfile and fcntl's open-file-description
    locks (a registered file, or one that a call blocked on a full pipe or on a lock holds, stays
    open with no descriptor the disk guard can see), and every call through another ABI (i386's
    int 0x80, x32), whose numbers differ and would pass the checks unseen. clone and unshare may
    not make a user namespace, clone may not make a sibling (CLONE_PARENT), clone3 answers ENOSYS,
    and prctl may not change the child-subreaper attribute (keep_orphans). Every other call is
    allowed."""
    LD, JEQ, RET = 0x20, 0x15, 0x06
    ALLOW, EPERM = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    prog = []  # entries: (code, jt, jf, k) with jt / jf as label names or 0

    def label(name):
        prog.append(("label", name))

    JGE, JSET = 0x35, 0x45  # BPF_JMP | BPF_JGE / BPF_JSET | BPF_K
    prog += [(LD, 0, 0, 4), (JEQ, 0, "deny", 0xC000003E),  # arch: not AUDIT_ARCH_X86_64 (int 0x80): refused
             (LD, 0, 0, 0),  # the call's number
             (JGE, "deny", 0, 0x40000000)]  # the x32 ABI's numbers (bit 30): refused
    for nr in _DENIED:
        prog.append((JEQ, "deny", 0, nr))
    for nr in _NO_NEW_USER_NS:
        prog.append((JEQ, "newuser", 0, nr))
    prog.append((JEQ, "enosys", 0, _CLONE3))
    for nr in _SELF_ONLY_ARG0:
        prog.append((JEQ, "arg0", 0, nr))
    for nr in _SELF_ONLY_ARG1:
        prog.append((JEQ, "arg1", 0, nr))
    prog.append((JEQ, "arg01", 0, _SETPRIORITY))
    prog.append((JEQ, "fcntl", 0, _FCNTL))
    prog.append((JEQ, "prctl", 0, _PRCTL))
    prog.append((RET, 0, 0, ALLOW))
    label("prctl")
    prog += [(LD, 0, 0, 16), (JEQ, "deny", "allow", _PR_SET_CHILD_SUBREAPER)]
    label("fcntl")
    prog.append((LD, 0, 0, 24))  # argument 1's low 32 bits: the command
    for cmd in _OFD_LOCKS:
        prog.append((JEQ, "deny", 0, cmd))
    prog.append((RET, 0, 0, ALLOW))
    label("arg01")
    prog += [(LD, 0, 0, 16), (JEQ, 0, "deny", 0)]  # the low 32 bits: the kernel reads an int
    label("arg1")
    prog += [(LD, 0, 0, 24), (JEQ, "allow", "deny", 0)]
    label("arg0")
    prog += [(LD, 0, 0, 16), (JEQ, "allow", "deny", 0)]
    label("newuser")
    prog += [(LD, 0, 0, 16), (JSET, "deny", "allow", _CLONE_NEWUSER | _CLONE_PARENT)]
    label("enosys")
    prog.append((RET, 0, 0, 0x00050000 | 38))  # SECCOMP_RET_ERRNO | ENOSYS
    label("deny")
    prog.append((RET, 0, 0, EPERM))
    label("allow")
    prog.append((RET, 0, 0, ALLOW))
    where, pc = {}, 0
    for item in prog:
        if item[0] == "label":
            where[item[1]] = pc
        else:
            pc += 1
    out, pc = [], 0
    for item in prog:
        if item[0] == "label":
            continue
        code, jt, jf, k = item
        jt = where[jt] - pc - 1 if isinstance(jt, str) else jt
        jf = where[jf] - pc - 1 if isinstance(jf, str) else jf
        assert 0 <= jt < 256 and 0 <= jf < 256
        out.append((code, jt, jf, k))
        pc += 1
    return out


def restrict_process_calls(ipc_namespace: bool = False) -> str:
    """Drops every capability (bounding, ambient, effective, permitted, inheritable) and installs
    ``seccomp_program`` on every thread. What Landlock leaves open between processes of one user:
    red team rt16 (CPU, session 11) throttled the reference worker with SCHED_DEADLINE
    (sched_setattr on its threads: an honest-speed matmul passed at 11x, the reference 12x
    slower, for every later candidate too), set its address-space limit to 1 MiB (prlimit: a
    wrong candidate got task_error instead of incorrect, and so did the honest one after it) and
    made the work folder immutable (an ioctl needing CAP_LINUX_IMMUTABLE: the next candidates
    crashed while loading). Returns what was applied, or why not."""
    import ctypes
    import platform
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # SysV shared memory, semaphores and message queues of its own (CPU): they outlived the
    # candidate and kgym (red team rt17: a 256 MiB segment and a queue), a channel to later
    # candidates and memory outside its address-space limit. On CUDA devices not yet: whether
    # CUDA IPC to the reference works from another IPC namespace is unverified.
    ipc = ""
    if ipc_namespace:
        ipc = "own IPC namespace; " if libc.unshare(0x08000000) == 0 else \
            f"no IPC namespace ({os.strerror(ctypes.get_errno())}); "  # CLONE_NEWIPC
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the last cap, EPERM without CAP_SETPCAP)
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL

    class CapHeader(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class CapData(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    data = (CapData * 2)()
    caps = ipc + ("capabilities dropped" if libc.syscall(126, ctypes.byref(CapHeader(0x20080522, 0)), data) == 0
                  else f"capabilities kept ({os.strerror(ctypes.get_errno())})")  # capset, _LINUX_CAPABILITY_VERSION_3
    if platform.machine() != "x86_64":
        return f"{caps}; no seccomp filter on {platform.machine()}"

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]

    insns = seccomp_program()
    filt = (SockFilter * len(insns))(*[SockFilter(*i) for i in insns])
    fprog = SockFprog(len(insns), filt)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (required without CAP_SYS_ADMIN)
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC): every thread of the process
    if libc.syscall(317, 1, 1, ctypes.byref(fprog)) != 0:
        return f"{caps}; no seccomp filter ({os.strerror(ctypes.get_errno())})"
    return f"{caps}; seccomp filter on {len(_SELF_ONLY_ARG0) + len(_SELF_ONLY_ARG1) + 1} calls to self only, " \
           f"{len(_DENIED)} denied, no new user namespace"
