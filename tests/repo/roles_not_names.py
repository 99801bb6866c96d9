#!/usr/bin/env python3
"""No code learns a parameter's role from its name (issue "architecture v3", item 2).

Usage: roles_not_names.py SOURCE_DIR

A parameter's role (autograd/param_role.h) is declared by the module that registers it and read by
init, the optimizer, the learning-rate multipliers, the run files and the dynamics log. This fails
on a search of a string for a fragment of a parameter name ("norm", "emb", ".bias", "blocks.",
".attn.", "ffn.", "lm_head", ...) with find, rfind, starts_with or ends_with in the library
sources. Readers of files whose columns are parameter names (plot/) parse those columns, and are
excepted, as are the Hugging Face converters (hf/), which map another library's names to ours.
"""
import re
import sys

from source_scan import matching_lines

FRAGMENTS = r"(norm|emb|bias|weight|lm_head|head|blocks|encoder|decoder|attn|cross_attn|ffn|moe|experts|w1|w2|w3)"
PATTERN = re.compile(r"\b(find|rfind|starts_with|ends_with)\(\s*\"[.]?" + FRAGMENTS + r"[.\"]")
LIBRARIES = ["core", "autograd", "nn", "optim", "config", "data", "io", "stats", "train", "sweep", "dist", "cli",
             "xiong", "python/bindings"]


def main():
    root = sys.argv[1]
    problems = [f"{path}:{number}: reads a role from a name: {line}"
                for path, number, line in matching_lines(root, PATTERN, LIBRARIES)]
    for p in problems:
        print(p)
    print(f"{len(problems)} role(s) read from names" if problems else "no role read from a name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
