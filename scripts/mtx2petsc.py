#!/usr/bin/env python3
"""Convert a Matrix Market file (.mtx or .mtx.gz) to a PETSc binary matrix file.

Usage:
  mtx2petsc.py IN.mtx[.gz] OUT.petsc [--laplacian] [--seed S]

Reads with scipy.io.mmread and writes with PETSc's own PetscBinaryIO
($PETSC_DIR/lib/petsc/bin), as a real double AIJ matrix with 32-bit indices and
columns sorted inside each row. Symmetric files are expanded to both triangles
(scipy does this). Explicitly stored zeros are kept.

Pattern-only files have no values: they get deterministic values (fixed seed),
uniform in [0.5, 1.5] with random signs, so products are meaningful.
--laplacian replaces the values of a square matrix by the graph Laplacian of its
symmetrised pattern plus the identity (L + I: symmetric positive definite), which is
how the mesh and graph files of ../shared/matrices are made solvable by CG.
"""
import argparse
import gzip
import os
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp


def petsc_binary_io():
    petsc_dir = os.environ.get("PETSC_DIR", "/opt/petsc-cuda")
    sys.path.insert(0, os.path.join(petsc_dir, "lib", "petsc", "bin"))
    try:
        import PetscBinaryIO  # noqa: E402  (PETSc's own writer)
    except ImportError as exc:
        sys.exit(f"mtx2petsc: cannot import PetscBinaryIO from {petsc_dir}/lib/petsc/bin ({exc}); set PETSC_DIR")
    return PetscBinaryIO


def read_matrix_market(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        header = fh.readline().decode("ascii", "replace").lower()
    pattern = "pattern" in header
    with opener(path, "rb") as fh:
        A = scipy.io.mmread(fh)
    if not sp.issparse(A):
        A = sp.coo_matrix(A)
    return sp.csr_matrix(A, dtype=np.float64), pattern


def laplacian_plus_identity(A):
    if A.shape[0] != A.shape[1]:
        sys.exit("mtx2petsc: --laplacian needs a square matrix")
    P = sp.csr_matrix(A, copy=True)
    P.data[:] = 1.0
    P = ((P + P.T) > 0).astype(np.float64)
    P = sp.csr_matrix(sp.triu(P, 1) + sp.tril(P, -1))  # drop self loops
    degree = np.asarray(P.sum(axis=1)).ravel()
    return sp.csr_matrix(sp.diags(degree + 1.0) - P)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--laplacian", action="store_true", help="write the graph Laplacian of the pattern plus I (SPD)")
    ap.add_argument("--seed", type=int, default=20261129, help="seed of the values given to pattern-only files")
    args = ap.parse_args()

    A, pattern = read_matrix_market(args.input)
    if args.laplacian:
        A = laplacian_plus_identity(A)
    elif pattern:
        rng = np.random.default_rng(args.seed)
        A.data = rng.uniform(0.5, 1.5, A.nnz) * rng.choice([-1.0, 1.0], A.nnz)
    A.sum_duplicates()
    A.sort_indices()
    if A.nnz >= 2**31 or max(A.shape) >= 2**31:
        sys.exit("mtx2petsc: matrix too large for 32-bit PETSc indices")
    A.indptr = A.indptr.astype(np.int32)
    A.indices = A.indices.astype(np.int32)

    io = petsc_binary_io().PetscBinaryIO(precision="double", indices="32bit", complexscalars=False)
    with open(args.output, "wb") as fh:
        io.writeMatSciPy(fh, A)
    print(f"{args.input}: {A.shape[0]} x {A.shape[1]}, nnz {A.nnz} -> {args.output}")


if __name__ == "__main__":
    main()
