#!/usr/bin/env python3
"""No code outside the placement table branches on a placement (issue "architecture v3").

Usage: placement_is_a_table.py SOURCE_DIR

A placement is a row of nn/placement.cpp; the libraries read the row (its wiring, final norm,
scales), never test which placement a config names. This fails on a `case NormPlacement::...`,
a comparison with a NormPlacement value, or a placement name compared as a string, in the library
sources. The study's arms (xiong/, which compare Pre-LN with Post-LN as values of an experiment)
and the presets (nn/presets.cpp, which name placements as values) are excepted.
"""
import re
import sys

from source_scan import matching_lines

PATTERN = re.compile(r"case NormPlacement::|[=!]=\s*NormPlacement::|norm_placement\s*[=!]=|"
                     r"placement\s*[=!]=\s*\"(post|pre|none|sandwich|deepnorm|admin|mix_ln|b2t)\"")
LIBRARIES = ["core", "autograd", "nn", "optim", "config", "data", "io", "stats", "train", "sweep", "hf", "plot",
             "dist", "cli", "python/bindings"]
EXCEPTED = {"nn/placement.cpp", "nn/presets.cpp"}


def main():
    root = sys.argv[1]
    problems = [f"{path}:{number}: branches on a placement: {line}"
                for path, number, line in matching_lines(root, PATTERN, LIBRARIES, EXCEPTED)]
    for p in problems:
        print(p)
    print(f"{len(problems)} branch(es) on a placement outside its table" if problems else "no branch on a placement")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
