#!/usr/bin/env python3
"""Size limits of the sources: files over 800 lines and functions over 120 lines.

Scans src/ (C++: .cpp/.hpp/.h/.cc/.cu) and python/ (.py) under the checkout root and prints
one line per violation, then the largest files and functions. Exit status 1 when any limit is
exceeded (0 otherwise), so it can run as a check.

Function lengths are counted from the line of the function's header to the line of its closing
brace (C++) or its last statement (Python, via `ast`: decorators excluded). The C++ count is a
rough brace scan: comments and string/char literals are skipped, a `{` at namespace or class
level that follows a `)` (optionally with const/noexcept/override/-> return type or a
constructor's initialiser list) opens a function body, and the body ends at the matching `}`.
Lambdas and local classes count towards the function that holds them. Functions defined inside
a class body (inline members) are counted too.

Usage: scripts/size_report.py [--root DIR] [--top N] [--max-file-lines N] [--max-function-lines N]
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from dataclasses import dataclass

CXX_EXTS = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh")


@dataclass
class Function:
    path: str   # relative to the root
    line: int   # 1-based line of the header
    name: str
    length: int  # lines, header to closing brace / last statement inclusive


def strip_cxx(text: str) -> str:
    """`text` with comments, string and char literals blanked (newlines kept, so lines match)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "".join(ch if ch == "\n" else " " for ch in text[i + 2:j]))
            i = j
        elif c in "\"'":
            # a digit separator (1'000) is not a char literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


_HEADER_TAIL = re.compile(
    r"\)\s*(?:const\s*|noexcept(?:\s*\([^()]*\))?\s*|override\s*|final\s*|mutable\s*|&&?\s*|"
    r"->\s*[\w:<>,\s*&]+?\s*|requires\s+[^{;]+?)*$")
_CONTROL = re.compile(r"\b(?:if|for|while|switch|catch|return|sizeof|decltype|alignof|static_assert)\s*\($")
_NAME = re.compile(r"([~\w:]+(?:\s*<[^<>]*>)?|operator\s*[^\s(]+)\s*\($")


def _function_name(header: str) -> str | None:
    """The name before the parameter list of a header ending in `)`, or None for control flow."""
    depth = 0
    for k in range(len(header) - 1, -1, -1):
        ch = header[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                before = header[: k + 1]
                if _CONTROL.search(before) or re.search(r"\[[^\]]*\]\s*\($", before):
                    return None  # a lambda's or a control statement's parentheses
                m = _NAME.search(before)
                return m.group(1).replace(" ", "") if m else None
    return None


def cxx_functions(path: str, rel: str) -> list[Function]:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip_cxx(f.read())
    funcs: list[Function] = []
    stack: list[str] = []  # 'n' namespace/class/other scope, 'f' function body, 'b' block in a function
    start = 0               # where the current statement/header began (after the last ; { or })
    body_start: tuple[int, str] | None = None
    line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        if ch not in "{};":
            continue
        if ch == ";":
            start = i + 1
            continue
        if ch == "}":
            kind = stack.pop() if stack else "n"
            if kind == "f" and body_start is not None:
                first, name = body_start
                funcs.append(Function(rel, first, name, line - first + 1))
                body_start = None
            start = i + 1
            continue
        # "{"
        if any(k in "fb" for k in stack):
            stack.append("b")
            start = i + 1
            continue
        header = text[start:i]
        # a constructor's initialiser list: `X(...) : a_(1), b_{2} {`; drop it to reach the `)`
        head = re.sub(r"\)\s*:\s*[\w:]+\s*[({].*$", ")", header, flags=re.S) if ":" in header else header
        stripped = re.sub(r"\s+", " ", head).strip()
        name = _function_name(stripped) if _HEADER_TAIL.search(stripped) else None
        if name and not stripped.startswith(("namespace", "class", "struct", "enum", "union", "extern")):
            # the header's first line: skip leading blank lines and template<...> lines
            first = line - text[start:i].count("\n")
            lead = text[start:i]
            while lead and lead[0] in " \t\n":
                if lead[0] == "\n":
                    first += 1
                lead = lead[1:]
            stack.append("f")
            body_start = (first, name)
        else:
            stack.append("n")
        start = i + 1
    return funcs


def python_functions(path: str, rel: str) -> list[Function]:
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return []
    funcs: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                funcs.append(Function(rel, child.lineno, name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return funcs


def scan(root: str) -> tuple[list[tuple[str, int]], list[Function]]:
    files: list[tuple[str, int]] = []
    funcs: list[Function] = []
    for top in ("src", "python"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if name.endswith(CXX_EXTS):
                    funcs.extend(cxx_functions(path, rel))
                elif name.endswith(".py"):
                    funcs.extend(python_functions(path, rel))
                else:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    files.append((rel, sum(1 for _ in f)))
    return files, funcs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--top", type=int, default=10, help="largest files and functions to list")
    parser.add_argument("--max-file-lines", type=int, default=800)
    parser.add_argument("--max-function-lines", type=int, default=120)
    args = parser.parse_args()
    files, funcs = scan(args.root)
    big_files = sorted((f for f in files if f[1] > args.max_file_lines), key=lambda f: -f[1])
    big_funcs = sorted((f for f in funcs if f.length > args.max_function_lines), key=lambda f: -f.length)
    print(f"files over {args.max_file_lines} lines: {len(big_files)}")
    for rel, n in big_files:
        print(f"  {n:5d}  {rel}")
    print(f"functions over {args.max_function_lines} lines: {len(big_funcs)}")
    for f in big_funcs:
        print(f"  {f.length:5d}  {f.path}:{f.line}  {f.name}")
    print(f"largest {args.top} files:")
    for rel, n in sorted(files, key=lambda f: -f[1])[: args.top]:
        print(f"  {n:5d}  {rel}")
    print(f"largest {args.top} functions:")
    for f in sorted(funcs, key=lambda f: -f.length)[: args.top]:
        print(f"  {f.length:5d}  {f.path}:{f.line}  {f.name}")
    return 1 if big_files or big_funcs else 0


if __name__ == "__main__":
    sys.exit(main())
