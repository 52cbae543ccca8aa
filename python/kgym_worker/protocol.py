"""Framed messages between the C++ engine and the Python workers.

A frame is: u32 header length (little-endian), u32 blob count, the UTF-8 JSON header, then for
each blob a u64 length and its bytes. The JSON header is an object with an ``op`` field; blobs
carry raw tensor bytes (see ``tensors.py``). Nothing is ever unpickled.

A length with bit 63 set is a blob passed as a sealed memfd (``SharedBlob``): its size in the low
bits and no bytes on the stream; the frame's memfds travel as SCM_RIGHTS with its first 8 bytes,
in blob order. The receiver (the supervisor, and again the reference worker) accepts only a
regular file of the declared size sealed against writing, shrinking and growing, so the sender
cannot change the bytes once sent; the reference maps it copy-on-write.

The messages themselves (one dataclass per request and reply, mirrored by src/runner/protocol.hpp)
are at the end of this module; the workers' request loops check each request against them.
"""
import fcntl
import gc
import json
import mmap
import os
import socket
import stat
import struct

_HEAD = struct.Struct("<II")
_BLOB = struct.Struct("<Q")
MAX_HEADER = 64 << 20
SHARED_BIT = 1 << 63
MAX_SHARED = 64  # memfd blobs per frame (the supervisor's limit too)
_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW


class SharedBlob:
    """A blob's bytes in a sealed memfd (``fd``, owned; closed by ``send`` once sent)."""

    def __init__(self, fd: int, nbytes: int):
        self.fd = fd
        self.nbytes = nbytes

    @staticmethod
    def from_buffer(buf) -> "SharedBlob":
        """The bytes of ``buf`` (a bytes-like object) in a new memfd, sealed against writing,
        shrinking, growing and further sealing. Raises OSError where memfds or seals are not
        available (the caller sends the bytes inline instead)."""
        mv = memoryview(buf).cast("B")
        fd = os.memfd_create("kgym-blob", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            done = 0
            while done < mv.nbytes:
                done += os.write(fd, mv[done:done + (1 << 30)])
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_SEAL)
        except BaseException:
            os.close(fd)
            raise
        return SharedBlob(fd, mv.nbytes)

    def __del__(self):
        self.close()

    def read(self) -> bytearray:
        """A copy of the bytes (for a value decoded in the process that encoded it)."""
        out = bytearray(self.nbytes)
        view = memoryview(out)
        done = 0
        while done < self.nbytes:
            k = os.preadv(self.fd, [view[done:]], done)
            if k <= 0:
                raise OSError(f"shared blob: short read at {done} of {self.nbytes} bytes")
            done += k
        return out

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def map_sealed(fd: int, nbytes: int):
    """A private (copy-on-write, so writable for torch.frombuffer) mapping of a received memfd
    after checking it is a regular file of ``nbytes`` bytes sealed against writing, shrinking
    and growing; closes ``fd``. Raises ValueError otherwise."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != nbytes:
            raise ValueError(f"shared blob: not a memory file of {nbytes} bytes")
        if fcntl.fcntl(fd, fcntl.F_GET_SEALS) & _SEALS != _SEALS:
            raise ValueError("shared blob: not sealed against writing")
        if nbytes == 0:
            return bytearray()
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


class ChannelClosed(Exception):
    """The peer closed the channel."""


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ChannelClosed()
        got += k
    return buf


def send(sock: socket.socket, header: dict, blobs=()) -> None:
    """Sends one frame. ``blobs`` is a sequence of bytes-like objects and ``SharedBlob``s (whose
    descriptors this closes once sent, or on failure)."""
    try:
        data = json.dumps(header, allow_nan=True).encode()
        head = _HEAD.pack(len(data), len(blobs))
        fds = [b.fd for b in blobs if isinstance(b, SharedBlob)]
        if len(fds) > MAX_SHARED:
            raise ValueError(f"{len(fds)} shared blobs in one frame (at most {MAX_SHARED})")
        if fds:
            n = socket.send_fds(sock, [head], fds)
            if n < len(head):
                sock.sendall(head[n:])
        else:
            sock.sendall(head)
        sock.sendall(data)
        for b in blobs:
            if isinstance(b, SharedBlob):
                sock.sendall(_BLOB.pack(b.nbytes | SHARED_BIT))
                continue
            mv = memoryview(b).cast("B")
            sock.sendall(_BLOB.pack(mv.nbytes))
            sock.sendall(mv)
    finally:
        for b in blobs:
            if isinstance(b, SharedBlob):
                b.close()


def _recv_head(sock: socket.socket):
    """The frame's first 8 bytes and the descriptors that came with them."""
    buf = bytearray()
    fds = []
    while len(buf) < _HEAD.size:
        msg, got, flags, _ = socket.recv_fds(sock, _HEAD.size - len(buf), MAX_SHARED)
        if not msg:
            for f in fds + got:
                os.close(f)
            raise ChannelClosed()
        fds.extend(got)
        buf += msg
        if flags & socket.MSG_CTRUNC:
            for f in fds:
                os.close(f)
            raise ValueError(f"more than {MAX_SHARED} shared blobs in one frame")
    return bytes(buf), fds


def recv(sock: socket.socket):
    """Receives one frame; returns (header dict, list of blobs): bytearrays, and for shared
    blobs a private mapping of the sealed memfd (see ``map_sealed``)."""
    head, fds = _recv_head(sock)
    try:
        hlen, nblobs = _HEAD.unpack(head)
        if hlen > MAX_HEADER:
            raise ValueError(f"frame header of {hlen} bytes is too large")
        header = json.loads(_recv_exact(sock, hlen))
        blobs = []
        for _ in range(nblobs):
            (blen,) = _BLOB.unpack(_recv_exact(sock, _BLOB.size))
            if blen & SHARED_BIT:
                if not fds:
                    raise ValueError("a shared blob was declared without its file")
                blobs.append(map_sealed(fds.pop(0), blen & ~SHARED_BIT))
            else:
                blobs.append(_recv_exact(sock, blen))
        if fds:
            raise ValueError("files were sent that no blob declared")
        return header, blobs
    finally:
        for f in fds:
            os.close(f)


def settle(freeze: bool = False) -> None:
    """A full garbage collection now, so that none is pending for the next request (see serve);
    with ``freeze`` (after loading a task or a candidate) everything still alive is then frozen
    (``gc.freeze``), so that later collections look only at what requests create."""
    gc.collect()
    if freeze:
        gc.freeze()


def serve(sock: socket.socket, handlers: dict, on_error, after=None, requests=None) -> None:
    """The request loop of a worker: answers each request with ``handlers[op](header, blobs)``
    (a reply dict, or a (dict, blobs) tuple) until ``exit`` or the channel closes. An unknown op
    or a handler exception is answered with ``on_error(exc)``; the loop goes on. With
    ``requests`` (op -> the request's dataclass, below), a request whose fields are not its
    dataclass's (``check_request``) is answered with ``on_error`` too. ``after(req)``
    (the request's header), when given, runs once the reply is sent and the request's objects
    are dropped, outside any clock the supervisor runs on the request (the workers return cached
    device memory there).

    Python's cyclic garbage collector never runs inside a request: the supervisor times some
    requests with its own clock (the wall-clock floor and its calibration, docs/timing.md), and a
    full collection, which lands wherever an allocation crosses the threshold, cost them up to
    about 10 ms on the H200's host. The loop collects after sending a reply instead, when the
    allocations since the last collection passed the threshold. A request that must leave no
    collection pending for the next one calls ``settle()`` (loads: ``settle(freeze=True)``)."""
    gc.disable()
    while True:
        try:
            req, blobs = recv(sock)
        except ChannelClosed:
            return
        op = req.get("op")
        if op == "exit":
            return
        try:
            if op not in handlers:
                raise ValueError(f"unknown op {op!r}")
            if requests is not None:
                check_request(requests, req)
            reply = handlers[op](req, blobs)
        except Exception as exc:  # noqa: BLE001 - reported on the channel, never silent
            reply = on_error(exc)
        out_blobs = []
        if isinstance(reply, tuple):
            reply, out_blobs = reply
        send(sock, reply, out_blobs)
        del reply, out_blobs, blobs
        if gc.get_count()[0] >= gc.get_threshold()[0]:
            gc.collect()
        if after is not None:
            try:
                after(req)
            except Exception:  # noqa: BLE001 - housekeeping; the next request reports real trouble
                pass


# --- The messages ----------------------------------------------------------------------------
# One dataclass per request the supervisor sends and per reply it reads, mirroring the structs of
# src/runner/protocol.hpp field for field (names as on the wire; tests/unit/protocol_test.cpp
# compares ``schema()`` with the C++ side's). A field without a default is required. A request
# class carries its ``op``; a reply class lists the fields the supervisor reads (a worker may add
# others). A record of kgym's measurements (measurement.hpp) travels as a dict (the types below
# named after it); a reply that carries a record's fields at its top level has a field with
# ``metadata={"wire": "*"}`` (the record's fields are not listed here). Imports nothing heavy: the
# candidate's and the reference's modules both use it.

import dataclasses  # noqa: E402 - the messages' part of the module
import typing  # noqa: E402
from typing import Any, ClassVar, Dict, List, Optional  # noqa: E402

LoadRecord = typing.NewType("LoadRecord", dict)
CaseRecord = typing.NewType("CaseRecord", dict)
TimingRecord = typing.NewType("TimingRecord", dict)
LaunchRecord = typing.NewType("LaunchRecord", dict)
RooflineRecord = typing.NewType("RooflineRecord", dict)

_message = dataclasses.dataclass(kw_only=True)


def _flattened():
    return dataclasses.field(metadata={"wire": "*"})


# Parts of messages.

@_message
class TimingSettings:
    warmup: int
    min_calls: int
    max_calls: int
    budget_ms: float
    target_spread: float
    l2_flush: bool


@_message
class SpotRequest:
    seed: int
    k: int
    candidate: Optional[Any] = None
    calls: Optional[int] = None
    trusted: Optional[List[int]] = None


@_message
class RecheckItem:
    index: int
    seed: int
    output: Any
    fingerprint: Optional[Any] = None


@_message
class SharedInputsMap:
    path: str
    bytes: int


@_message
class SpawnLimits:
    address_space_bytes: int


# Requests to the reference worker (reference.py).

@_message
class InfoRequest:
    op: ClassVar[str] = "info"


@_message
class LoadTaskRequest:
    op: ClassVar[str] = "load_task"
    key: str
    source: str
    task_id: str
    scale: float
    init_seed: int


@_message
class ProbeTaskRequest:
    op: ClassVar[str] = "probe_task"
    source: str
    task_id: str
    scale: float


@_message
class DropTaskRequest:
    op: ClassVar[str] = "drop_task"
    key: str


@_message
class MakeCaseRequest:
    op: ClassVar[str] = "make_case"
    key: str
    index: int
    transform: str
    shape: Optional[str] = None


@_message
class CaseInputsRequest:
    op: ClassVar[str] = "case_inputs"
    key: str
    index: int


@_message
class CompareRequest:
    op: ClassVar[str] = "compare"
    key: str
    index: int
    output: Any
    tolerances: Any
    audit: bool
    done: bool


@_message
class RecheckRequest:
    op: ClassVar[str] = "recheck"
    key: str
    items: List[RecheckItem]
    tolerances: Any


@_message
class ReferenceTimeRequest:
    op: ClassVar[str] = "time"
    key: str
    kind: str
    options: TimingSettings
    seeds: List[int]
    keep: List[int]
    wall_target_ms: float
    own_floor: bool
    spot: Optional[SpotRequest] = None
    tolerances: Optional[Any] = None


@_message
class SpotCheckRequest:
    op: ClassVar[str] = "spot_check"
    key: str
    seeds: List[int]
    warmup: int
    spot: SpotRequest
    tolerances: Any


@_message
class WallInputsRequest:
    op: ClassVar[str] = "wall_inputs"
    key: str
    n: int
    seed: int


@_message
class SettleRequest:
    op: ClassVar[str] = "settle"
    reserve_n: Optional[int] = None
    reserve_bytes: Optional[float] = None
    release: Optional[bool] = None


@_message
class WallCalibrationRequest:
    op: ClassVar[str] = "wall_calibration"
    key: str
    n: int
    seed: int
    sync_each: bool
    commit: Optional[bool] = None
    shared: Optional[bool] = None
    layout: Optional[Any] = None
    call: Optional[str] = None


# Requests to a candidate's worker (candidate.py).

@_message
class LoadRequest:
    op: ClassVar[str] = "load"
    format: str
    candidate_source: str
    task_source: str
    scale: float
    init_seed: int


@_message
class RunCaseRequest:
    op: ClassVar[str] = "run_case"
    index: int
    regenerate: Optional[Any] = None
    inputs: Optional[Any] = None
    tolerances: Any
    stability_wait: bool


@_message
class ReleaseRequest:
    op: ClassVar[str] = "release"


@_message
class CandidateTimeRequest:
    op: ClassVar[str] = "time"
    options: TimingSettings
    seeds: List[int]
    keep: List[int]
    spot: Optional[SpotRequest] = None
    audit_dispatcher: bool


@_message
class WallRequest:
    op: ClassVar[str] = "wall"
    n: int
    seed: int
    calibrate: Optional[bool] = None
    call: Optional[bool] = None
    sync_each: Optional[bool] = None
    commit: Optional[bool] = None
    reserve_bytes: Optional[float] = None
    reserve_n: Optional[int] = None
    map: Optional[SharedInputsMap] = None
    layout: Optional[Any] = None


@_message
class WallOutputRequest:
    op: ClassVar[str] = "wall_output"
    indices: List[int]


@_message
class WarmProfilerRequest:
    op: ClassVar[str] = "warm_profiler"


@_message
class TraceRequest:
    op: ClassVar[str] = "trace"
    seeds: List[int]


@_message
class ExitRequest:
    op: ClassVar[str] = "exit"


# Requests to the zygote (zygote.py).

@_message
class SpawnRequest:
    op: ClassVar[str] = "spawn"
    role: str
    device: str
    workdir: str
    log: str
    env: Dict[str, str]
    limits: SpawnLimits


@_message
class ReapRequest:
    op: ClassVar[str] = "reap"
    pid: int
    timeout: float


# Replies.

@_message
class ReferenceStatus:
    ok: bool = False
    error: str = "reference worker error"
    traceback: str = ""


@_message
class CandidateStatus:
    harness_error: Optional[Any] = None


@_message
class LoadTaskReply:
    scaled: Any = None
    parameters: Any = None
    roofline: Optional[RooflineRecord] = None


@_message
class ProbeTaskReply:
    runs: bool = False
    reason: str = "the probe gave no reason"
    scaled: Any = None
    output: Optional[Any] = None
    input_elements: int = 0


@_message
class MakeCaseReply:
    skipped: Optional[str] = None
    sizes: Any = None
    seed: int = 0
    regenerate: Any = None


@_message
class CaseInputsReply:
    inputs: Any = None


@_message
class Comparison:
    output_plain_tensor: Optional[bool] = None
    output_type: Optional[str] = None
    structure_matches: bool = True
    dtype_matches: bool = True
    shape_matches: bool = True
    device_matches: bool = True
    detail: str = ""
    numel: int = 0
    max_abs_error: float = 0.0
    mean_abs_error: float = 0.0
    max_rel_error: float = 0.0
    tolerance_ratio: float = 0.0
    atol: float = 0.0
    rtol: float = 0.0
    nonfinite_mismatches: int = 0
    mismatches: int = 0
    mismatches_outside_fp64: int = -1
    fp64_atol_ratio: float = -1.0
    first_mismatch_index: List[int] = dataclasses.field(default_factory=list)
    reference_finite: bool = True
    fp64_checked: bool = False
    fp64_error: float = 0.0
    fp64_reference_error: float = 0.0
    fp64_scale: float = 0.0
    dtype_eps: float = 0.0
    trivial_passing: List[str] = dataclasses.field(default_factory=list)


@_message
class RecheckReply:
    results: List[Comparison] = dataclasses.field(default_factory=list)


@_message
class SpotFailure:
    index: int = 0
    detail: str = ""


@_message
class SpotResult:
    error: Optional[Any] = None
    checked: int = 0
    failed: List[SpotFailure] = dataclasses.field(default_factory=list)


@_message
class BaselineTiming:
    record: TimingRecord = _flattened()
    spot: Optional[SpotResult] = None


@_message
class ReferenceTimeReply:
    timing: BaselineTiming


@_message
class SpotTiming:
    spot: Optional[SpotResult] = None


@_message
class SpotCheckReply:
    timing: SpotTiming


@_message
class WallInputsReply:
    unsupported: Optional[Any] = None
    path: str = ""
    bytes: int = 0
    layout: Any = None


@_message
class WallCalibrationReply:
    unsupported: Optional[Any] = None
    harness_ms: Optional[Any] = None


@_message
class LoadReply:
    record: LoadRecord = _flattened()
    parameters: Any = None


@_message
class RunCaseReply:
    record: CaseRecord = _flattened()
    need_inputs: bool = False
    output: Optional[Any] = None
    harness_error: Optional[Any] = None


@_message
class KeptOutput:
    index: int = -1
    output: Any = None


@_message
class CandidateTimeReply:
    timing: TimingRecord
    kept: List[KeptOutput] = dataclasses.field(default_factory=list)
    spot: Optional[Any] = None


@_message
class WallReply:
    host_ms: float = 0.0
    harness_ms: Optional[Any] = None
    fingerprints: Any = None
    tampered: List[str] = dataclasses.field(default_factory=list)


@_message
class WallOutputReply:
    outputs: Any = None
    tampered: List[str] = dataclasses.field(default_factory=list)


@_message
class WarmProfilerReply:
    tampered: List[str] = dataclasses.field(default_factory=list)


@_message
class TraceReply:
    launch: LaunchRecord


@_message
class ZygoteReady:
    op: str = ""
    pid: int = 0


@_message
class SpawnReply:
    ok: bool = False
    error: str = "?"
    pid: Optional[int] = None


@_message
class ReapReply:
    signal: int = 0
    exit_code: int = 0


MESSAGES = tuple(v for v in list(globals().values())
                 if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == __name__)
REFERENCE_REQUESTS = {c.op: c for c in (InfoRequest, LoadTaskRequest, ProbeTaskRequest, DropTaskRequest,
                                        MakeCaseRequest, CaseInputsRequest, CompareRequest, RecheckRequest,
                                        ReferenceTimeRequest, SpotCheckRequest, WallInputsRequest, SettleRequest,
                                        WallCalibrationRequest)}
CANDIDATE_REQUESTS = {c.op: c for c in (LoadRequest, RunCaseRequest, ReleaseRequest, CandidateTimeRequest,
                                        WallRequest, WallOutputRequest, WarmProfilerRequest, TraceRequest)}
ZYGOTE_REQUESTS = {c.op: c for c in (SpawnRequest, ReapRequest, ExitRequest)}


def type_name(tp) -> str:
    """A field's type in the schema's words (protocol.hpp's detail::type_name): bool, int, float,
    str, any, list[T], dict[str,T], optional[T], a message's or a record's name."""
    if tp is Any:
        return "any"
    if tp in (bool, int, float, str):
        return tp.__name__
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return f"optional[{type_name(inner)}]"
    if origin is list:
        return f"list[{type_name(args[0])}]"
    if origin is dict:
        return f"dict[{type_name(args[0])},{type_name(args[1])}]"
    if dataclasses.is_dataclass(tp) or hasattr(tp, "__supertype__"):
        return tp.__name__
    raise TypeError(f"no schema name for {tp!r}")


def schema() -> dict:
    """Every message by name: {"op"?, "fields": {name: {"type", "required"}}}, as protocol.hpp's
    protocol::schema() gives it for the C++ structs."""
    out = {}
    for cls in MESSAGES:
        hints = typing.get_type_hints(cls)
        fields = {}
        for f in dataclasses.fields(cls):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            fields[f.metadata.get("wire", f.name)] = {"type": type_name(hints[f.name]), "required": required}
        entry = {"fields": fields}
        if "op" in cls.__dict__ and isinstance(cls.__dict__["op"], str) and "op" not in fields:
            entry["op"] = cls.op
        out[cls.__name__] = entry
    return out


# Each message's field names and its required ones, for check_request (a few set operations per
# request: the supervisor's clock holds some requests, docs/timing.md).
_NAMES = {cls: (frozenset(f.name for f in dataclasses.fields(cls)) | {"op"},
                frozenset(f.name for f in dataclasses.fields(cls)
                          if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING))
          for cls in MESSAGES}


def check_request(classes: dict, req: dict) -> None:
    """Raises ValueError when ``req`` is not a request of ``classes`` (op -> dataclass): an op it
    does not know, a field its dataclass lacks, or a required field missing."""
    op = req.get("op")
    cls = classes.get(op)
    if cls is None:
        raise ValueError(f"unknown op {op!r}")
    names, required = _NAMES[cls]
    if not names.issuperset(req):
        extra = sorted(str(k) for k in req if k not in names)
        raise ValueError(f"request {op!r} has fields the protocol does not know: {', '.join(extra)}")
    if not required.issubset(req):
        raise ValueError(f"request {op!r} lacks required fields: {', '.join(sorted(required.difference(req)))}")
