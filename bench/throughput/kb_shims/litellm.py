"""Stand-in for litellm (see README.md): the evaluation path never queries a model."""


def completion(*args, **kwargs):
    raise RuntimeError("litellm is not installed here; kgym's benchmark only runs KernelBench's evaluation")
