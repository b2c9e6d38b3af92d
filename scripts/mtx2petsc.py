#!/usr/bin/env python3
"""Convert a Matrix Market file (.mtx or .mtx.gz) to a PETSc binary matrix file.

Usage:
  mtx2petsc.py IN.mtx[.gz] OUT.petsc [--laplacian] [--seed S] [--progress-min-bytes N]
               [--indices auto|32|64]

Reads with scipy.io.mmread and writes with PETSc's own PetscBinaryIO
($PETSC_DIR/lib/petsc/bin), as a real double AIJ matrix with columns sorted inside
each row. Its integers (header and indices) have the size of $PETSC_DIR's PetscInt
(--indices auto, the default: a PETSc built --with-64-bit-indices reads 64-bit files
only), or the size given. Symmetric and skew-symmetric files are expanded to
both triangles (scipy does this). Explicitly stored zeros of coordinate files are
kept; dense (array format) files keep their nonzeros only.

Pattern-only files have no values: they get deterministic values (fixed seed),
uniform in [0.5, 1.5] with random signs, so products are meaningful.
--laplacian replaces the values of a square matrix by the graph Laplacian of its
symmetrised pattern plus the identity (L + I: symmetric positive definite), which is
how the mesh and graph files of ../shared/matrices are made solvable by CG.

Errors are one line on stderr, never a traceback:
  exit 2  the input cannot be converted: missing or unreadable file, not Matrix Market,
          complex or hermitian values (petscspmv is real-only), a header that does not
          parse, fewer or more entries than the header says, unparsable numbers,
          indices out of range, non-square matrix with --laplacian, too large for
          32-bit indices (when they are 32-bit)
  exit 1  the output cannot be written, PETSc's PetscBinaryIO is not found, or (--indices auto)
          $PETSC_DIR's petscconf.h cannot be read
The output is written to a temporary file and renamed, so a failed run leaves none.

Progress: a file of at least --progress-min-bytes on disk (default 16 MiB; compressed
size for .gz) gets lines on stderr: one before the read (sizes from the header), one
each time another tenth of the file has been read, one before the conversion and the
write. Smaller files print nothing on stderr unless there is an error (then its line is
the last one). stdout only ever holds the one summary line of a successful run.
"""
import argparse
import contextlib
import gzip
import io
import os
import sys
import time
import zlib

PROG = "mtx2petsc"
PROGRESS_MIN_BYTES = 16 << 20  # default of --progress-min-bytes


def progress(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


class ProgressFile(io.RawIOBase):
    """The bytes of a file on disk; reports on stderr each further tenth of it read."""

    def __init__(self, path):
        super().__init__()
        self._fh = open(path, "rb", buffering=0)
        self._path = path
        self._size = max(os.fstat(self._fh.fileno()).st_size, 1)
        self._tenths = 0  # tenths reported so far
        self._t0 = time.time()

    def readable(self):
        return True

    def readinto(self, b):
        n = self._fh.readinto(b)
        pos = self._fh.tell()
        while self._tenths < 10 and pos * 10 >= (self._tenths + 1) * self._size:
            self._tenths += 1
            progress(f"reading {self._path}: {10 * self._tenths}% of {self._size / 2**20:.1f} MiB ({time.time() - self._t0:.1f} s)")
        return n

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        return self._fh.seek(offset, whence)

    def tell(self):
        return self._fh.tell()

    def close(self):
        if not self.closed:
            self._fh.close()
        super().close()


def open_for_read(path, report, stack):
    """The decompressed bytes of path (binary file object, closed with stack); report: with
    progress lines (of the bytes read from disk, compressed for .gz)."""
    if not report:
        return stack.enter_context(opener(path)(path, "rb"))
    raw = stack.enter_context(io.BufferedReader(ProgressFile(path)))
    if path.endswith(".gz"):
        return stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw


class InputError(Exception):
    """The input file cannot be converted (exit 2)."""


class OutputError(Exception):
    """The output cannot be written (exit 1)."""


def petsc_binary_io():
    petsc_dir = os.environ.get("PETSC_DIR", "/opt/petsc-cuda")
    sys.path.insert(0, os.path.join(petsc_dir, "lib", "petsc", "bin"))
    try:
        import PetscBinaryIO  # noqa: E402  (PETSc's own writer)
    except ImportError as exc:
        raise OutputError(f"cannot import PetscBinaryIO from {petsc_dir}/lib/petsc/bin ({exc}); set PETSC_DIR")
    return PetscBinaryIO


def index_bits(choice):
    """32 or 64: the choice, or for "auto" the size of PetscInt in $PETSC_DIR's petscconf.h."""
    if choice != "auto":
        return int(choice)
    petsc_dir = os.environ.get("PETSC_DIR", "/opt/petsc-cuda")
    conf = os.path.join(petsc_dir, "include", "petscconf.h")
    if not os.path.isfile(conf):
        conf = os.path.join(petsc_dir, os.environ.get("PETSC_ARCH", ""), "include", "petscconf.h")
    try:
        with open(conf) as fh:
            return 64 if any(line.split()[:3] == ["#define", "PETSC_USE_64BIT_INDICES", "1"] for line in fh) else 32
    except OSError as exc:
        raise OutputError(f"cannot read {conf} for the size of PetscInt ({exc.strerror or exc}); set PETSC_DIR or give --indices 32|64")


def opener(path):
    return gzip.open if path.endswith(".gz") else open


def read_header(path):
    """Parses the banner and the size line: returns (format, field, symmetry, rows, cols, entries)."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a Matrix Market file")
    with opener(path)(path, "rb") as fh:
        banner = fh.readline().decode("ascii", "replace").strip()
        tokens = banner.lower().split()
        if len(tokens) < 1 or tokens[0] != "%%matrixmarket":
            raise InputError(f"{path}: not a Matrix Market file (the first line does not start with %%MatrixMarket)")
        if len(tokens) != 5:
            raise InputError(f"{path}: bad Matrix Market banner '{banner}' (expected: %%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric)")
        _, obj, fmt, field, symmetry = tokens
        if obj != "matrix":
            raise InputError(f"{path}: Matrix Market object '{obj}' is not supported (only 'matrix')")
        if fmt not in ("coordinate", "array"):
            raise InputError(f"{path}: Matrix Market format '{fmt}' is not supported (coordinate or array)")
        if field == "complex":
            raise InputError(f"{path}: complex matrices are not supported (petscspmv and this PETSc are real double only)")
        if symmetry == "hermitian":
            raise InputError(f"{path}: hermitian matrices are not supported (complex values; petscspmv is real double only)")
        if field not in ("real", "double", "integer", "pattern"):
            raise InputError(f"{path}: Matrix Market field '{field}' is not supported (real, integer or pattern)")
        if symmetry not in ("general", "symmetric", "skew-symmetric"):
            raise InputError(f"{path}: Matrix Market symmetry '{symmetry}' is not supported (general, symmetric or skew-symmetric)")
        if fmt == "array" and field == "pattern":
            raise InputError(f"{path}: a pattern matrix in array format is not valid Matrix Market")
        line = b"%"
        while line.startswith(b"%") or not line.strip():
            line = fh.readline()
            if not line:
                raise InputError(f"{path}: truncated: no size line after the header")
        parts = line.split()
        want = 3 if fmt == "coordinate" else 2
        try:
            sizes = [int(p) for p in parts]
        except ValueError:
            sizes = []
        if len(sizes) != want or min(sizes) < 0:
            raise InputError(f"{path}: bad size line '{line.decode('ascii', 'replace').strip()}' (expected {want} non-negative integers)")
    rows, cols = sizes[0], sizes[1]
    entries = sizes[2] if fmt == "coordinate" else (rows * cols if symmetry == "general" else None)
    return fmt, field, symmetry, rows, cols, entries


def read_matrix_market(path, progress_min_bytes=PROGRESS_MIN_BYTES):
    """Returns (CSR float64 matrix, pattern?) or raises InputError."""
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    try:
        fmt, field, symmetry, rows, cols, entries = read_header(path)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
    try:
        report = os.path.getsize(path) >= progress_min_bytes
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    # PETSc's 32-bit indices, checked on the header before reading (a size line beyond them must
    # not make scipy allocate for it); the expanded nnz of a symmetric file is checked after
    stored_max = entries if entries is not None else rows * cols
    if max(rows, cols) >= 2**31 or stored_max >= 2**31:
        raise InputError(f"{path}: matrix too large for 32-bit PETSc indices ({rows} x {cols}, {stored_max} stored entries in the header)")
    if report:
        what = f"{entries} entries" if entries is not None else "dense"
        progress(f"reading {path}: {rows} x {cols}, {what} ({field} {symmetry})")
    try:
        with contextlib.ExitStack() as stack:
            A = scipy.io.mmread(open_for_read(path, report, stack))
    except (EOFError, zlib.error, OSError) as exc:
        msg = " ".join(str(getattr(exc, "strerror", None) or exc).split()) or type(exc).__name__
        raise InputError(f"{path}: cannot read ({msg})")
    except (ValueError, IndexError, TypeError, OverflowError, UnicodeDecodeError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"{path}: malformed or truncated Matrix Market data ({msg})")
    if fmt == "coordinate":
        A = sp.coo_matrix(A)
        # scipy versions differ in what they check: count the entries again (the diagonal of a
        # symmetric file is stored once, the off-diagonal entries twice after expansion)
        if symmetry == "general":
            got = A.nnz
        else:
            got = (A.nnz + int(np.count_nonzero(A.row == A.col))) // 2
        if got != entries:
            raise InputError(f"{path}: the header says {entries} entries, the file holds {got}")
    elif not sp.issparse(A):
        A = sp.coo_matrix(A)
    if A.shape != (rows, cols):
        raise InputError(f"{path}: the header says {rows} x {cols}, scipy read {A.shape[0]} x {A.shape[1]}")
    if np.iscomplexobj(A.data):
        raise InputError(f"{path}: complex values are not supported (petscspmv is real double only)")
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.nnz and not np.all(np.isfinite(A.data)):
        bad = int(np.count_nonzero(~np.isfinite(A.data)))
        raise InputError(f"{path}: {bad} entries are Inf or NaN")
    return A, field == "pattern"


def laplacian_plus_identity(A):
    import numpy as np
    import scipy.sparse as sp

    if A.shape[0] != A.shape[1]:
        raise InputError(f"--laplacian needs a square matrix, this one is {A.shape[0]} x {A.shape[1]}")
    P = sp.csr_matrix(A, copy=True)
    P.data[:] = 1.0
    P = ((P + P.T) > 0).astype(np.float64)
    P = sp.csr_matrix(sp.triu(P, 1) + sp.tril(P, -1))  # drop self loops
    degree = np.asarray(P.sum(axis=1)).ravel()
    return sp.csr_matrix(sp.diags(degree + 1.0) - P)


def convert(args):
    import numpy as np

    t0 = time.time()
    A, pattern = read_matrix_market(args.input, args.progress_min_bytes)
    if os.path.getsize(args.input) >= args.progress_min_bytes:
        progress(f"read {args.input} in {time.time() - t0:.1f} s; converting and writing {args.output}")
    if args.laplacian:
        A = laplacian_plus_identity(A)
    elif pattern:
        rng = np.random.default_rng(args.seed)
        A.data = rng.uniform(0.5, 1.5, A.nnz) * rng.choice([-1.0, 1.0], A.nnz)
    A.sum_duplicates()
    A.sort_indices()
    bits = index_bits(args.indices)
    if bits == 32 and (A.nnz >= 2**31 or max(A.shape) >= 2**31):
        raise InputError(f"{args.input}: matrix too large for 32-bit PETSc indices ({A.shape[0]} x {A.shape[1]}, nnz {A.nnz}); "
                         "use a PETSc built --with-64-bit-indices")
    itype = np.int32 if bits == 32 else np.int64
    A.indptr = A.indptr.astype(itype)
    A.indices = A.indices.astype(itype)

    io = petsc_binary_io().PetscBinaryIO(precision="double", indices=f"{bits}bit", complexscalars=False)
    tmp = f"{args.output}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            io.writeMatSciPy(fh, A)
        os.replace(tmp, args.output)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"cannot write {args.output}: {exc.strerror or exc}")
    print(f"{args.input}: {A.shape[0]} x {A.shape[1]}, nnz {A.nnz} -> {args.output} ({time.time() - t0:.1f} s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--laplacian", action="store_true", help="write the graph Laplacian of the pattern plus I (SPD)")
    ap.add_argument("--seed", type=int, default=20261129, help="seed of the values given to pattern-only files")
    ap.add_argument("--indices", choices=["auto", "32", "64"], default="auto",
                    help="size of the file's integers: auto (the default) takes $PETSC_DIR's PetscInt")
    ap.add_argument("--progress-min-bytes", type=int, default=PROGRESS_MIN_BYTES, metavar="N",
                    help="report the progress of the read on stderr for input files of at least N bytes on disk (default 16 MiB)")
    args = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import scipy.io  # noqa: F401
        import scipy.sparse  # noqa: F401
    except ImportError as exc:
        print(f"{PROG}: error: {exc.name or 'numpy/scipy'} is missing from {sys.executable}: install python3-numpy and python3-scipy "
              "(Debian), or run the script with /usr/bin/python3", file=sys.stderr)
        return 1
    try:
        convert(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OutputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{PROG}: error: out of memory converting {args.input}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
