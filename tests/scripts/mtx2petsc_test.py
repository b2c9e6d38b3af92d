#!/usr/bin/env python3
"""One case of the mtx2petsc.py test (CTest mtx2petsc_<case>, label unit).

Bad inputs: mtx2petsc.py must exit with code 2, print exactly one line on stderr that starts
with "mtx2petsc: error:" and names the problem, no "Traceback", and write no output file.
roundtrip: real files of the shared matrix folder (a general and a symmetric one) are
converted and read back with PETSc's PetscBinaryIO; every entry must equal the one parsed
here from the Matrix Market text (a parser independent of scipy), and nothing is printed on
stderr (small files: no progress). Exit 77 (skipped) when the shared matrices are absent.
progress: a generated file (plain and gzipped) converted with --progress-min-bytes below its
size reports on stderr (the header line, each tenth read up to 100%, the write), stdout holds
only the summary line, and the result is the one converted without progress; above its size
nothing is printed on stderr.
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys

BANNER = "%%MatrixMarket matrix coordinate"
# case -> (file name, bytes, words the error must contain)
BAD = {
    "complex": ("c.mtx", f"{BANNER} complex general\n2 2 2\n1 1 1.0 0.5\n2 2 2.0 -1.0\n", ["complex"]),
    "hermitian": ("h.mtx", f"{BANNER} complex hermitian\n2 2 2\n1 1 1.0 0.0\n2 1 2.0 1.0\n", ["complex"]),
    "missing": ("does_not_exist.mtx.gz", None, ["no such file"]),
    "not_mm": ("n.mtx", "this is not\na matrix market file\n", ["not a Matrix Market file"]),
    "garbage_gz": ("g.mtx.gz", b"\x1f\x8b\x08\x00garbage that is not deflate", ["cannot read"]),
    "truncated": ("t.mtx", f"{BANNER} real general\n3 3 5\n1 1 1.0\n2 2 2.0\n3 3 3.0\n", ["entries"]),
    "truncated_gz": ("t.mtx.gz", "gz-truncated", ["cannot read"]),
    "bad_number": ("b.mtx", f"{BANNER} real general\n3 3 3\n1 1 1.0\n2 2 2.x0\n3 3 3.0\n", ["malformed"]),
    "bad_index": ("i.mtx", f"{BANNER} real general\n3 3 3\n1 1 1.0\n2 7 2.0\n3 3 3.0\n", ["malformed"]),
    "bad_banner": ("k.mtx", "%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1.0\n", ["banner"]),
}


def run(script, args):
    return subprocess.run([sys.executable, script] + args, capture_output=True, text=True)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_bad(script, workdir, case):
    name, content, words = BAD[case]
    path = os.path.join(workdir, name)
    if content == "gz-truncated":
        data = gzip.compress(("%s real general\n200 200 200\n" % BANNER + "".join(f"{i} {i} {i}.5\n" for i in range(1, 201))).encode())
        content = data[: len(data) // 2]
    if content is not None:
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(path, mode) as fh:
            fh.write(content)
    out = os.path.join(workdir, "out.petsc")
    p = run(script, [path, out])
    lines = p.stderr.splitlines()
    print(f"{case}: exit {p.returncode}, stderr: {p.stderr!r}")
    if p.returncode != 2:
        fail(f"exit code {p.returncode}, expected 2")
    if "Traceback" in p.stderr:
        fail("a traceback on stderr")
    if len(lines) != 1:
        fail(f"{len(lines)} lines on stderr, expected 1")
    if not lines[0].startswith("mtx2petsc: error:"):
        fail("stderr does not start with 'mtx2petsc: error:'")
    for w in words:
        if w.lower() not in lines[0].lower():
            fail(f"the error does not say '{w}'")
    if os.path.exists(out) or any(f.startswith("out.petsc") for f in os.listdir(workdir)):
        fail("an output file was left behind")


def check_array(script, workdir):
    """A dense array-format file is supported: its nonzeros are converted."""
    path = os.path.join(workdir, "a.mtx")
    with open(path, "w") as fh:
        fh.write("%%MatrixMarket matrix array real general\n2 3\n1\n0\n-2.5\n4\n0\n6\n")  # column-major
    out = os.path.join(workdir, "a.petsc")
    p = run(script, [path, out])
    if p.returncode != 0:
        fail(f"array file: exit {p.returncode}: {p.stderr.strip()}")
    got = read_petsc(out, petsc_index_bits())
    want = {(0, 0): 1.0, (0, 1): -2.5, (1, 1): 4.0, (1, 2): 6.0}
    if got != ((2, 3), want):
        fail(f"array file read back as {got}, expected {want}")
    print("array: ok")


def check_progress(script, workdir):
    n = 2000
    text = "%%MatrixMarket matrix coordinate real general\n" + f"{n} {n} {2 * n}\n"
    text += "".join(f"{i} {i} {i}.25\n{i} {i % n + 1} -{i}.5\n" for i in range(1, n + 1))
    plain = os.path.join(workdir, "p.mtx")
    with open(plain, "w") as fh:
        fh.write(text)
    packed = os.path.join(workdir, "p.mtx.gz")
    with gzip.open(packed, "wt") as fh:
        fh.write(text)
    quiet = os.path.join(workdir, "quiet.petsc")
    p = run(script, [plain, quiet, "--progress-min-bytes", str(os.path.getsize(plain) + 1)])
    if p.returncode != 0 or p.stderr:
        fail(f"below the threshold: exit {p.returncode}, stderr {p.stderr!r} (expected none)")
    with open(quiet, "rb") as fh:
        want = fh.read()
    for src in (plain, packed):
        out = os.path.join(workdir, os.path.basename(src) + ".petsc")
        p = run(script, [src, out, "--progress-min-bytes", "1"])
        print(f"progress {os.path.basename(src)}: exit {p.returncode}, stderr:\n{p.stderr}")
        if p.returncode != 0 or "Traceback" in p.stderr:
            fail(f"{src}: exit {p.returncode}")
        lines = p.stderr.splitlines()
        if not lines or not all(line.startswith("mtx2petsc: ") for line in lines):
            fail(f"{src}: stderr lines must all start with 'mtx2petsc: '")
        if f"{n} x {n}, {2 * n} entries" not in lines[0]:
            fail(f"{src}: the first progress line does not give the header's sizes")
        tenths = [line for line in lines if "% of " in line]
        if [f"{10 * k}% of " in line for k, line in zip(range(1, 11), tenths)] != [True] * 10 or len(tenths) != 10:
            fail(f"{src}: expected one line per tenth read, 10% to 100%, got {tenths}")
        if "writing" not in lines[-1]:
            fail(f"{src}: the last progress line does not announce the write")
        if len(p.stdout.splitlines()) != 1 or "nnz" not in p.stdout:
            fail(f"{src}: stdout must hold only the summary line, got {p.stdout!r}")
        with open(out, "rb") as fh:
            if fh.read() != want:
                fail(f"{src}: the output differs from the one converted without progress")
    print("progress: ok")


def parse_mtx(path):
    """Independent Matrix Market coordinate parser: ((m, n), {(i, j): value}) with duplicates summed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        banner = fh.readline().lower().split()
        symmetric = banner[4] in ("symmetric", "skew-symmetric")
        sign = -1.0 if banner[4] == "skew-symmetric" else 1.0
        line = fh.readline()
        while line.startswith("%") or not line.strip():
            line = fh.readline()
        m, n, _ = (int(t) for t in line.split())
        entries = {}
        for line in fh:
            t = line.split()
            if not t or t[0].startswith("%"):
                continue
            i, j, v = int(t[0]) - 1, int(t[1]) - 1, float(t[2])
            entries[(i, j)] = entries.get((i, j), 0.0) + v
            if symmetric and i != j:
                entries[(j, i)] = entries.get((j, i), 0.0) + sign * v
    return (m, n), entries


def petsc_index_bits():
    """The size of $PETSC_DIR's PetscInt, from its petscconf.h (what --indices auto must give)."""
    with open(os.path.join(os.environ.get("PETSC_DIR", "/opt/petsc-cuda"), "include", "petscconf.h")) as fh:
        return 64 if "#define PETSC_USE_64BIT_INDICES 1" in fh.read() else 32


def read_petsc(path, bits):
    sys.path.insert(0, os.path.join(os.environ.get("PETSC_DIR", "/opt/petsc-cuda"), "lib", "petsc", "bin"))
    import PetscBinaryIO

    # the header's 4 integers are (class id 1211216, rows, cols, nnz) in the file's integer size
    with open(path, "rb") as fh:
        head = fh.read(4 * bits // 8)
    dtype = ">i4" if bits == 32 else ">i8"
    import numpy as np
    if np.frombuffer(head[: bits // 8], dtype=dtype)[0] != 1211216:
        fail(f"{path}: the header is not a Mat class id in {bits}-bit integers")
    io = PetscBinaryIO.PetscBinaryIO(precision="double", indices=f"{bits}bit", complexscalars=False)
    (obj,) = io.readBinaryFile(path, mattype="scipy.sparse")
    A = obj.tocoo()
    return A.shape, {(int(i), int(j)): float(v) for i, j, v in zip(A.row, A.col, A.data)}


def check_roundtrip(script, workdir, matrix_dir):
    files = [f for f in ("west0479.mtx", "bcsstk14.mtx") if os.path.exists(os.path.join(matrix_dir, f))]
    if not files:
        print(f"SKIP: neither west0479.mtx nor bcsstk14.mtx in {matrix_dir}")
        sys.exit(77)
    for f in files:
        src = os.path.join(matrix_dir, f)
        want = parse_mtx(src)
        # --indices auto writes PetscInt's size of $PETSC_DIR; 32 and 64 what they say
        for choice, bits in (("auto", petsc_index_bits()), ("32", 32), ("64", 64)):
            out = os.path.join(workdir, f"{f}.{choice}.petsc")
            p = run(script, [src, out, "--indices", choice])
            if p.returncode != 0 or p.stderr.strip():
                fail(f"{f} --indices {choice}: exit {p.returncode}, stderr {p.stderr!r}")
            got = read_petsc(out, bits)
            if got[0] != want[0]:
                fail(f"{f} --indices {choice}: size {got[0]}, expected {want[0]}")
            if got[1] != want[1]:
                diff = [k for k in set(got[1]) | set(want[1]) if got[1].get(k) != want[1].get(k)]
                fail(f"{f} --indices {choice}: {len(diff)} entries differ, e.g. {diff[:3]}")
            print(f"roundtrip {f} --indices {choice} ({bits}-bit): {got[0][0]} x {got[0][1]}, {len(got[1])} entries identical")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--matrix-dir", required=True)
    ap.add_argument("case", choices=sorted(BAD) + ["array", "roundtrip", "progress"])
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    if a.case == "roundtrip":
        check_roundtrip(a.script, a.workdir, a.matrix_dir)
    elif a.case == "array":
        check_array(a.script, a.workdir)
    elif a.case == "progress":
        check_progress(a.script, a.workdir)
    else:
        check_bad(a.script, a.workdir, a.case)
    print("PASS")


if __name__ == "__main__":
    main()
