#!/usr/bin/env python3
"""Every repository path that a comment or a document names exists.

Usage: named_paths_exist.py SOURCE_DIR [--list FILE]   (FILE: check that one file only)

What counts as a named path: a token such as `core/cpu/f32_gemm.h` or `../translation.md`
with a source or data extension, in a Markdown file (anywhere), in a comment of a C++, CUDA,
CMake, shell or TOML file (after `//`, `#` or on a ` *` line) or in a Python comment or docstring.
It names a repository path when its first folder is a top-level folder of the repository, a
folder beside the file that names it or a folder of tests/; it exists when it resolves, from the
repository root, from that file's folder or under tests/, to a tracked file or folder. Paths that programs write (run outputs, reports not yet produced) are
listed in WRITTEN_BY_PROGRAMS; registration files are frozen once committed (their last commit
dates a study), so what they name is not checked.
"""
import os
import re
import subprocess
import sys

EXTENSIONS = "cpp|h|cu|cuh|py|md|toml|json|csv|tsv|sh|txt|cmake|svg"
TOKEN = re.compile(r"(?<![\w./:$~-])((?:\.\./)*[A-Za-z_][\w.+-]*/[\w.+/-]*\.(?:%s)(?:\.in)?)(?![\w/-])" % EXTENSIONS)
COMMENT = {
    ".cpp": re.compile(r"//(.*)|^\s*\*(.*)"), ".h": re.compile(r"//(.*)|^\s*\*(.*)"),
    ".cu": re.compile(r"//(.*)"), ".cuh": re.compile(r"//(.*)"),
    ".py": re.compile(r"#(.*)"), ".sh": re.compile(r"#(.*)"), ".toml": re.compile(r"#(.*)"),
    ".cmake": re.compile(r"#(.*)"), ".txt": re.compile(r"#(.*)"),
}
WRITTEN_BY_PROGRAMS = {
    "docs/xiong/v5/report.md",  # normlab reproduce xiong-v5 --analyse writes it when the study ends
}
FROZEN = re.compile(r"^xiong/registration[\w]*\.toml$")


def tracked(root):
    run = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"skipped: {root} is not a git checkout ({run.stderr.strip()})")
        sys.exit(77)
    out = run.stdout
    files = set(out.split("\n")) - {""}
    folders = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            folders.add(d)
            d = os.path.dirname(d)
    return files, folders


def texts_to_scan(path, text):
    """The parts of `text` that are prose: the whole of a Markdown file, the comments of code."""
    ext = os.path.splitext(path)[1] if os.path.basename(path) != "CMakeLists.txt" else ".cmake"
    if ext == ".md":
        yield from enumerate(text.splitlines(), 1)
        return
    if ext == ".py":
        yield from python_prose(text)
        return
    comment = COMMENT.get(ext) or (COMMENT[".sh"] if path.startswith(("scripts/", ".ci/")) else None)
    if comment is None:
        return
    for number, line in enumerate(text.splitlines(), 1):
        m = comment.search(line)
        if m:
            yield number, next(g for g in m.groups() if g is not None)


def python_prose(text):
    """A Python file's comments and docstrings (the lines between triple quotes)."""
    in_docstring = False
    for number, line in enumerate(text.splitlines(), 1):
        quotes = line.count('"""')
        if in_docstring or quotes:
            yield number, line
        elif "#" in line:
            yield number, line[line.index("#"):]
        in_docstring ^= quotes % 2 == 1


def missing_paths(root, files, folders, path):
    try:
        text = open(os.path.join(root, path), encoding="utf-8").read()
    except (UnicodeDecodeError, FileNotFoundError):
        return
    tops = {f.split("/")[0] for f in folders if "/" not in f} | {".ci"}
    here = os.path.dirname(path)
    for number, prose in texts_to_scan(path, text):
        if "://" in prose:
            continue
        for m in TOKEN.finditer(prose):
            token = m.group(1)
            beside = os.path.normpath(os.path.join(here, token))
            first = token.split("/")[0]
            under_tests = "tests/" + token  # a test's folder named without tests/ (fuzz/..., xiong/...)
            if first != ".." and first not in tops and os.path.normpath(os.path.join(here, first)) not in folders \
                    and "tests/" + first not in folders:
                continue  # not a repository path: a run's output, a metric's name, ...
            if beside.startswith("..") or token.startswith("../shared/"):
                continue  # outside the repository (../shared/ is the folder beside it)
            if {token, beside, under_tests} & (files | folders | WRITTEN_BY_PROGRAMS):
                continue
            yield f"{path}:{number}: names {token}, which does not exist"


def main():
    root = sys.argv[1]
    files, folders = tracked(root)
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--list" else None
    problems = []
    for path in sorted([only] if only else files):
        if FROZEN.match(path):
            continue
        problems.extend(missing_paths(root, files, folders, path))
    for p in problems:
        print(p)
    print(f"{len(problems)} named path(s) missing" if problems else "every named path exists")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
