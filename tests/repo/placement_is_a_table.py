#!/usr/bin/env python3
"""No code outside the placement table branches on a placement (issue "architecture v3").

Usage: placement_is_a_table.py SOURCE_DIR

A placement is a row of nn/placement.cpp; the libraries read the row (its wiring, final norm,
scales), never test which placement a config names. This fails on a `case NormPlacement::...`,
a comparison with a NormPlacement value, or a placement name compared as a string, in the library
sources. The study's arms (xiong/, which compare Pre-LN with Post-LN as values of an experiment)
and the presets (nn/presets.cpp, which name placements as values) are excepted.
"""
import os
import re
import sys

PATTERN = re.compile(r"case NormPlacement::|[=!]=\s*NormPlacement::|norm_placement\s*[=!]=|"
                     r"placement\s*[=!]=\s*\"(post|pre|none|sandwich|deepnorm|admin|mix_ln|b2t)\"")
LIBRARIES = ["core", "autograd", "nn", "optim", "config", "data", "io", "stats", "train", "sweep", "hf", "plot",
             "dist", "cli", "python/bindings"]
EXCEPTED = {"nn/placement.cpp", "nn/presets.cpp"}


def main():
    root = sys.argv[1]
    problems = []
    for library in LIBRARIES:
        for folder, _, names in os.walk(os.path.join(root, library)):
            for name in sorted(names):
                path = os.path.relpath(os.path.join(folder, name), root)
                if not name.endswith((".cpp", ".h", ".cu")) or path in EXCEPTED:
                    continue
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if PATTERN.search(line.split("//")[0]):
                            problems.append(f"{path}:{number}: branches on a placement: {line.strip()}")
    for p in problems:
        print(p)
    print(f"{len(problems)} branch(es) on a placement outside its table" if problems else "no branch on a placement")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
