"""``python -m kgym_worker zygote``: started by the C++ engine with its control socket on fd 3."""
import sys

from . import zygote

if __name__ == "__main__":
    if sys.argv[1:] != ["zygote"]:
        sys.exit("usage: python -m kgym_worker zygote  (started by build/kgym, control socket on fd 3)")
    zygote.main()
