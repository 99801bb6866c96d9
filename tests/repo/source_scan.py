"""The library sources' code lines (comments after // left out) that match a pattern: shared by the
repository checks that forbid a construct outside its one place (placement_is_a_table.py,
roles_not_names.py)."""
import os


def matching_lines(root, pattern, libraries, excepted=()):
    """(path relative to root, line number, stripped line) for each C++/CUDA source line matching `pattern`."""
    found = []
    for library in libraries:
        for folder, _, names in os.walk(os.path.join(root, library)):
            for name in sorted(names):
                path = os.path.relpath(os.path.join(folder, name), root)
                if not name.endswith((".cpp", ".h", ".cu")) or path in excepted:
                    continue
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if pattern.search(line.split("//")[0]):
                            found.append((path, number, line.strip()))
    return found
