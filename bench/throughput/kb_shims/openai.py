"""Stand-in for the openai client (see README.md): the evaluation path never queries a model."""


class OpenAI:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("openai is not installed here; kgym's benchmark only runs KernelBench's evaluation")
