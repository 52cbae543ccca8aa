"""Stand-in for python-dotenv (see README.md): KernelBench's utils call load_dotenv() at import."""


def load_dotenv(*args, **kwargs) -> bool:
    """Reads nothing; returns False (no .env file was loaded)."""
    return False
