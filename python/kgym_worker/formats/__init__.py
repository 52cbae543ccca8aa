"""Candidate formats, the Python side of the format seam: how the candidate's process loads a
candidate of each format (``load`` requests carry ``format``). The C++ side
(``include/kgym/format.hpp``, ``src/formats/``) holds each format's policy check. A new format is a
folder here with ``parse``, ``build`` and ``construct`` (see ``kernelbench_module``) plus one line
in ``LOADERS``; docs/adding_a_format.md.

A loader runs in the untrusted process, after the sandbox is applied:
  ``parse(source, rec) -> bool``: checks the source's shape without running it, sets
      ``rec["parsed"]``, ``rec["model_new_defined"]`` (the format's entry point is there) and, on a
      parse error, ``rec["failure"]`` (stage "parse"); False ends the load.
  ``build(source, workdir, overrides)``: imports/builds the candidate; what it returns goes to
      construct. ``overrides`` ({name: int}) are the task's scaled size constants that the
      candidate's module also defines (loading.load_module).
      Raises on failure (the failure's stage is "import").
  ``construct(built, init_inputs, device)``: the model, a callable taking the task's inputs.
      Raises on failure (stage "init").
"""
from . import kernelbench_module

DEFAULT = "kernelbench_module"

LOADERS = {
    "kernelbench_module": kernelbench_module,
}


def loader(name: str):
    """The loader module of format ``name``; ValueError naming the known formats otherwise."""
    try:
        return LOADERS[name]
    except KeyError:
        raise ValueError(f"unknown candidate format {name!r}; known: {', '.join(LOADERS)}") from None
