"""Size scaling of a task's source (``--scale F``), kept consistent with the task's other constants.

A KernelBench task states its sizes as module-level constants (``batch_size = 128``,
``height = width = 128``) and derives others from them (``bias_shape = (out_channels, 1, 1)``).
Scaling multiplies every constant that is assigned a constant int >= ``SCALE_MIN`` at module level
(and each such entry of a constant list or tuple of ints: ``layer_sizes = [16384, 16384]``), and then runs the module's code with those assignments replaced, so every constant derived from a
scaled one is derived again (setting attributes after the module ran left ``bias_shape`` at 128
while ``out_channels`` became 6: KernelBench L2/1 and L2/76).

Three rules keep a scaled size from going below what the task's other constants need:
  - spatial sizes (names with height, width, depth, length, seq, image, or H/W/D/L) are at least
    ``2 + sum((k - 1) * dilation)`` over the module's window constants (names with ``kernel`` or
    ``window``; a tuple counts by its largest entry), times each pooling window (names with
    ``pool``) and the largest stride (names with ``stride``): a 3-D convolution with kernel
    (3, 5, 7) keeps a 64-wide input at >= 8, so its output has at least 2 positions a side
    (KernelBench L1/60 at 0.1 gave 6, below the kernel);
  - a whole network with no window constant at module level (its windows inside its classes;
    at least 3 convolution or pooling layers written in the source) keeps its spatial sizes at
    >= 32, five stride-2 stages (KernelBench level 3's DenseNet and MobileNet at 224 x 0.05 gave 11);
  - channel and feature sizes are rounded up to a multiple of the module's group count (names
    with ``group``): 8 groups never get 1 channel (L2/23 at 0.05);
  - embedding and hidden sizes are rounded up to a multiple of the head count (names with
    ``head``, not ``d_head``).
What these rules do not foresee (a window inside the model's class, five pooling stages of a
whole network) is caught by the reference probe (``reference.py``, ``probe``): the task is then
reported as not runnable at that scale (``task_error``), never the candidate's fault.
The rules are heuristics on KernelBench's names; ``kgym tasks audit --scale F`` lists the result.
"""
import ast
import math

SCALE_MIN = 16  # module-level ints >= this are size constants that --scale multiplies

_SPATIAL_WORDS = ("height", "width", "depth", "length", "seq", "image", "spatial")
_SPATIAL_NAMES = ("H", "W", "D", "L")
_WINDOW_WORDS = ("kernel", "pool", "window")
_CHANNEL_WORDS = ("channel", "feature", "hidden")
_EMBED_WORDS = ("embd", "embed", "d_model", "hidden")
_NETWORK_LAYER_WORDS = ("nn.Conv", "Pool2d(", "Pool3d(", "Pool1d(", "F.conv", "F.max_pool", "F.avg_pool")
_NETWORK_MIN_LAYERS = 3     # at least this many convolution/pooling layers written in the source
_NETWORK_MIN_SPATIAL = 32   # five stride-2 stages


def _targets(node):
    """The plain names a top-level assignment binds (``a = b = 3`` binds both), else []."""
    if isinstance(node, ast.Assign):
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        return names if len(names) == len(node.targets) else []
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def _unpacked(node):
    """[(name, value expression)] of a top-level ``depth, height, width = 16, 32, 32`` (one tuple
    target, a tuple value of the same length, plain names), else []."""
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
            and isinstance(node.value, ast.Tuple) and len(node.targets[0].elts) == len(node.value.elts)
            and all(isinstance(t, ast.Name) for t in node.targets[0].elts)):
        return [(t.id, v) for t, v in zip(node.targets[0].elts, node.value.elts)]
    return []


def _constant_value(expr):
    """The value of an expression made of constants only (``64``, ``2 ** 10``, ``(3, 5, 7)``),
    else None. Nothing that names a variable or calls a function is evaluated."""
    if any(isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Lambda)) for n in ast.walk(expr)):
        return None
    try:
        return eval(compile(ast.Expression(expr), "<kgym constant>", "eval"), {"__builtins__": {}})  # noqa: S307
    except Exception:  # noqa: BLE001 - not a constant expression
        return None


def _ints(value):
    if type(value) is int:
        return [value]
    if type(value) in (tuple, list) and all(type(v) is int for v in value):
        return list(value)
    return []


def plan(source: str, factor: float):
    """The new values of the task's size constants at ``factor``: (overrides {name: new int},
    changed {name: [old, new]}, notes [str] naming each rule that raised a size). ``source`` is
    the task's Python source; raises SyntaxError when it does not parse."""
    tree = ast.parse(source)
    consts = {}  # name -> value of its last constant-only top-level assignment
    for node in tree.body:
        pairs = [(n, node.value) for n in _targets(node)] or _unpacked(node)
        for name, expr in pairs:
            value = _constant_value(expr)
            if value is None:
                consts.pop(name, None)
            else:
                consts[name] = value
    if factor == 1.0:
        return {}, {}, []
    sizes = {n: v for n, v in consts.items() if not n.startswith("_") and type(v) is int and v >= SCALE_MIN}
    new = {n: max(1, int(round(v * factor))) for n, v in sizes.items()}
    notes = []
    # Lists and tuples of sizes (``layer_sizes = [16384, 16384]``): each entry >= SCALE_MIN scaled.
    seqs = {}
    for n, v in consts.items():
        if not n.startswith("_") and type(v) in (list, tuple) and _ints(v) and any(x >= SCALE_MIN for x in v):
            seqs[n] = type(v)(max(1, int(round(x * factor))) if x >= SCALE_MIN else x for x in v)

    def small(words):
        found = []
        for name, value in consts.items():
            low = name.lower()
            if any(w in low for w in words):
                vals = [new.get(name, value)] if name in sizes else _ints(value)
                if vals:
                    found.append((name, max(vals)))
        return found

    dilation = max([v for _, v in small(("dilation",))] + [1])
    stride = max([v for _, v in small(("stride",))] + [1])
    windows = [(n, k) for n, k in small(_WINDOW_WORDS) if n not in sizes and k > 1]
    layers = sum(source.count(w) for w in _NETWORK_LAYER_WORDS)
    if not windows and layers >= _NETWORK_MIN_LAYERS:
        # A whole network whose windows are inside its classes (KernelBench level 3): its input
        # keeps the size of five stride-2 stages (DenseNet, MobileNet at 224 x 0.05 gave 11).
        for name in sizes:
            spatial = name in _SPATIAL_NAMES or any(w in name.lower() for w in _SPATIAL_WORDS)
            if spatial and new[name] < _NETWORK_MIN_SPATIAL:
                up = min(_NETWORK_MIN_SPATIAL, sizes[name])
                notes.append(f"{name} kept at {up}, not {new[name]}: a network of {layers} convolution/pooling "
                             f"layers, windows inside its classes")
                new[name] = up
    if windows:
        pools = [k for n, k in windows if "pool" in n.lower()]
        need = 2 + sum((k - 1) * dilation for n, k in windows if "pool" not in n.lower())
        need *= math.prod(pools) * max(1, stride)
        for name in sizes:
            spatial = name in _SPATIAL_NAMES or any(w in name.lower() for w in _SPATIAL_WORDS)
            if spatial and new[name] < need:
                up = min(need, sizes[name])
                notes.append(f"{name} kept at {up}, not {new[name]}: windows {dict(windows)}"
                             + (f", dilation {dilation}" if dilation > 1 else "")
                             + (f", stride {stride}" if stride > 1 else "") + f" need {need}")
                new[name] = up

    def round_up(word_list, divisors, what):
        for dname, g in divisors:
            if g <= 1:
                continue
            for name in sizes:
                low = name.lower()
                if name == dname or not any(w in low for w in word_list):
                    continue
                if new[name] % g:
                    up = max(g, int(math.ceil(new[name] / g)) * g)
                    if up <= max(sizes[name], g):
                        notes.append(f"{name} rounded up to {up}, a multiple of {dname} = {g} ({what})")
                        new[name] = up

    round_up(_CHANNEL_WORDS, small(("group",)), "groups")
    heads = [(n, h) for n, h in small(("head",)) if "d_head" not in n.lower() and "head_dim" not in n.lower()]
    round_up(_EMBED_WORDS + ("dim",), heads, "heads")
    overrides = {n: v for n, v in new.items() if v != sizes[n]}
    changed = {n: [sizes[n], v] for n, v in overrides.items()}
    for n, v in seqs.items():
        if v != consts[n]:
            overrides[n] = v
            changed[n] = [list(consts[n]), list(v)]
    return overrides, changed, notes


def _literal(value):
    """An AST expression of an int or a list/tuple of ints."""
    if type(value) in (list, tuple):
        elts = [ast.Constant(v) for v in value]
        return ast.List(elts, ast.Load()) if type(value) is list else ast.Tuple(elts, ast.Load())
    return ast.Constant(value)


def rewrite(source: str, overrides: dict):
    """The task's module AST with each top-level assignment of a name in ``overrides`` replaced by
    the new constant (line numbers kept, so tracebacks point into the original source). An
    assignment binding several names (``height = width = 128``) is split by name only when their
    new values differ."""
    tree = ast.parse(source)
    body = []
    for node in tree.body:
        for i, (name, expr) in enumerate(_unpacked(node)):
            if name in overrides:
                node.value.elts[i] = ast.copy_location(_literal(overrides[name]), expr)
        names = _targets(node)
        hit = [n for n in names if n in overrides]
        if not hit:
            body.append(node)
            continue
        values = {repr(overrides.get(n)) for n in names}
        if len(values) == 1:
            node.value = ast.copy_location(_literal(overrides[names[0]]), node.value)
            body.append(node)
            continue
        for n in names:
            value = _literal(overrides[n]) if n in overrides else node.value
            one = ast.Assign(targets=[ast.Name(n, ast.Store())], value=value)
            body.append(ast.fix_missing_locations(ast.copy_location(one, node)))
    tree.body = body
    return ast.fix_missing_locations(tree)


def bound_names(tree) -> set:
    """The names a module's top-level constant-style assignments bind (``_targets``, ``_unpacked``)."""
    names = set()
    for node in tree.body:
        names.update(_targets(node))
        names.update(n for n, _ in _unpacked(node))
    return names


def derived(module, source: str, overrides: dict) -> dict:
    """{name: value} of the module-level constants whose assignment names a scaled constant
    (``bias_shape = (out_channels, 1, 1)``), read from the module after it ran: the record of what
    was derived again."""
    out = {}
    if not overrides:
        return out
    for node in ast.parse(source).body:
        names = _targets(node)
        if not names or _constant_value(node.value) is not None:
            continue
        used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if used & set(overrides):
            for name in names:
                value = getattr(module, name, None)
                if type(value) in (int, float, bool) or _ints(value):
                    out[name] = list(value) if type(value) in (tuple, list) else value
    return out
