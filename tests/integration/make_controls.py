"""Writes the reference-as-candidate control of KernelBench tasks: each task's source with its
class `Model` renamed `ModelNew` (every use of the name: `super(Model, self)` too), as
<out>/level<N>/<stem>.py, which `kgym eval --candidates <out>` pairs with the suite's tasks.

usage: make_controls.py SUITE_DIR OUT_DIR [GLOB ...]   (GLOBs over "level<N>/<stem>.py"; default all)
"""
import pathlib
import re
import sys


def main() -> int:
    suite, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    globs = sys.argv[3:] or ["level*/*.py"]
    n = 0
    for g in globs:
        for f in sorted(suite.glob(g)):
            dest = out / f.parent.name / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(re.sub(r"\bModel\b", "ModelNew", f.read_text()))
            n += 1
    print(f"{n} controls in {out}")
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
