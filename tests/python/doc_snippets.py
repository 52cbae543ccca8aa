"""The code blocks of docs/trainers.md, by the name of their `<!-- snippet: NAME -->` marker."""
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "trainers.md"


def snippet(name: str) -> str:
    m = re.search(r"<!-- snippet: " + re.escape(name) + r" -->\n```[a-z]*\n(.*?)```", DOC.read_text(), re.S)
    assert m, f"docs/trainers.md has no snippet {name!r}"
    return m.group(1)
