#!/usr/bin/env python3
"""Checks that the includes of src/ run one way, down the layers of docs/architecture.md:

    petsc -> mixed -> formats -> cuda -> core

A file of a layer may include its own layer's headers and those of the layers below it, never
one above (src/cuda including src/formats, say). Quoted includes are resolved as the compiler
does (the including file's folder first, then src/, then src/petsc/ for the glue); system
headers (<...>) are not checked. Exit 1 naming every include that runs back up.

    scripts/check_layers.py [SRC_DIR]
"""
import os
import re
import sys

ORDER = ["core", "cuda", "formats", "mixed", "petsc"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SUFFIXES = (".hpp", ".cuh", ".h", ".cpp", ".cu", ".c")


def layer(path, src):
    rel = os.path.relpath(path, src).split(os.sep)
    return rel[0] if rel[0] in ORDER else None


def resolve(inc, path, src):
    for base in (os.path.dirname(path), src, os.path.join(src, "petsc")):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(p):
            return p
    return None


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "src"))
    bad, checked = [], 0
    for d, _, names in os.walk(src):
        for n in sorted(names):
            if not n.endswith(SUFFIXES):
                continue
            path = os.path.join(d, n)
            own = layer(path, src)
            if own is None:
                continue
            text = open(path, errors="replace").read()
            for m in INCLUDE.finditer(text):
                target = resolve(m.group(1), path, src)
                if target is None or not target.startswith(src + os.sep):
                    continue
                checked += 1
                other = layer(target, src)
                if other is not None and ORDER.index(other) > ORDER.index(own):
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"src/{os.path.relpath(path, src)}:{line}: includes \"{m.group(1)}\" "
                               f"(src/{os.path.relpath(target, src)}): layer {own} must not include layer {other}")
    if bad:
        print("check_layers.py: includes that run back up the layers " + " -> ".join(reversed(ORDER)) + ":\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    print(f"check_layers.py: {checked} includes run one way ({' -> '.join(reversed(ORDER))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
