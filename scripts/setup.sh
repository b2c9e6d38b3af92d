#!/usr/bin/env bash
# Installs what a fresh machine lacks to build and test petscspmv (idempotent, needs root):
# PETSc 3.22.5 (CUDA 13) from ../shared/petsc (and 3.25.4 when PETSC_DIR=/opt/petsc-3.25-cuda, as
# in `make check PETSC_DIR=/opt/petsc-3.25-cuda BUILD=build-3.25`; 3.25.4 with 64-bit indices when
# PETSC_DIR=/opt/petsc-3.25-cuda-int64), and the Debian packages the build and tests use.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${PETSCSPMV_SHARED:-$top/../shared}
# Debian packages first: PETSc's archive is unpacked with xz, and it needs Open MPI and LAPACK.
pkgs="xz-utils cmake make g++ clang-format pkg-config libgtest-dev zlib1g-dev python3-numpy python3-scipy libopenmpi-dev openmpi-bin liblapack3 libblas3"
missing=""
for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ ! -f /opt/petsc-cuda/lib/libpetsc.so ] || ! grep -q "libmpi.so.40 " <<< "$(ldconfig -p)"; then
  sh "$shared/petsc/install.sh"
fi
if [ "${PETSC_DIR:-}" = /opt/petsc-3.25-cuda ] && [ ! -f /opt/petsc-3.25-cuda/lib/libpetsc.so ]; then
  sh "$shared/petsc/install.sh" 3.25
fi
if [ "${PETSC_DIR:-}" = /opt/petsc-3.25-cuda-int64 ] && [ ! -f /opt/petsc-3.25-cuda-int64/lib/libpetsc.so ]; then
  sh "$shared/petsc/install.sh" 3.25-int64
fi
