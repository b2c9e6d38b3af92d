#!/usr/bin/env bash
# Tests of the installed tree (tests/install/CMakeLists.txt runs each step as one CTest test):
#   install_test.sh install        cmake --install the build tree into $PREFIX and check its layout
#   install_test.sh pkgconfig      build downstream.c with `pkg-config --cflags --libs petscspmv`, run it
#   install_test.sh find_package   build downstream.c with find_package(petscspmv CONFIG), run it
#   install_test.sh dll_append     downstream.c linked with PETSc only, run with -dll_append $PREFIX/lib/libpetscspmv.so
# Environment: BUILD_DIR (the petscspmv build tree), PREFIX, WORK (scratch dir of the step), SOURCE_DIR
# (this folder), PETSC_DIR, PETSC_LIBDIR (where libpetsc is), VERSION (project() VERSION), CMAKE, MPIEXEC (command and options), LIBDIR (lib);
# DOCDIR (share/doc/petscspmv) and DATADIR (share) as GNUInstallDirs set them, these defaults when unset.
# Any missing file or wrong field fails the step (exit 1) with a message naming it.
set -euo pipefail
step=${1:?usage: install_test.sh install|pkgconfig|find_package|dll_append}
for v in BUILD_DIR PREFIX WORK SOURCE_DIR PETSC_DIR PETSC_LIBDIR VERSION CMAKE MPIEXEC LIBDIR; do
  [ -n "${!v:-}" ] || { echo "install_test.sh: $v is not set" >&2; exit 1; }
done
major=${VERSION%%.*}
lib=$PREFIX/$LIBDIR
DOCDIR=${DOCDIR:-share/doc/petscspmv}
DATADIR=${DATADIR:-share}
fail() { echo "FAIL ($step): $*" >&2; exit 1; }
run() { echo "+ $*"; "$@"; }
# run_pass <log> <command...>: runs it; it must succeed and print PASS
run_pass() {
  local log=$1 rc=0; shift
  echo "+ $*"
  "$@" > "$log" 2>&1 || rc=$?
  cat "$log"
  [ $rc -eq 0 ] || fail "exit code $rc from: $*"
  grep -q '^PASS$' "$log" || fail "no PASS from: $*"
}
# the program must load libpetscspmv.so.<major> from the installed tree, not from the build tree
check_loads_installed() {
  local where
  where=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '$1 == "libpetscspmv.so.'"$major"'" { print $3 }')
  [ "$where" = "$lib/libpetscspmv.so.$major" ] || fail "$1 loads libpetscspmv.so.$major from '${where:-nowhere}', not $lib"
}
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"

case $step in
install)
  rm -rf "$PREFIX"
  run "$CMAKE" --install "$BUILD_DIR" --prefix "$PREFIX"
  echo "installed:"; (cd "$PREFIX" && find . | sort)
  for f in include/petscspmv.h include/petscspmvversion.h "$LIBDIR/pkgconfig/petscspmv.pc" \
           "$LIBDIR/cmake/petscspmv/petscspmvConfig.cmake" "$LIBDIR/cmake/petscspmv/petscspmvConfigVersion.cmake" \
           "$LIBDIR/cmake/petscspmv/petscspmvTargets.cmake"; do
    [ -f "$PREFIX/$f" ] || fail "$PREFIX/$f is missing"
  done
  # the versioned names: .so -> .so.<major> -> .so.<version>
  [ -f "$lib/libpetscspmv.so.$VERSION" ] && [ ! -L "$lib/libpetscspmv.so.$VERSION" ] || fail "$lib/libpetscspmv.so.$VERSION is missing or not a file"
  [ "$(readlink "$lib/libpetscspmv.so.$major")" = "libpetscspmv.so.$VERSION" ] || fail "$lib/libpetscspmv.so.$major is not a link to libpetscspmv.so.$VERSION"
  [ "$(readlink "$lib/libpetscspmv.so")" = "libpetscspmv.so.$major" ] || fail "$lib/libpetscspmv.so is not a link to libpetscspmv.so.$major"
  dyn=$(readelf -d "$lib/libpetscspmv.so.$VERSION")
  echo "$dyn" | grep -E 'SONAME|RUNPATH|RPATH|NEEDED'
  grep -q "(SONAME) *Library soname: \[libpetscspmv.so.$major\]" <<< "$dyn" || fail "SONAME is not libpetscspmv.so.$major"
  rpath=$(echo "$dyn" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  case ":$rpath:" in *":$PETSC_LIBDIR:"*) ;; *) fail "RUNPATH '$rpath' lacks PETSc's $PETSC_LIBDIR";; esac
  case ":$rpath:" in *':$ORIGIN:'*) ;; *) fail "RUNPATH '$rpath' lacks \$ORIGIN";; esac
  case ":$rpath:" in *":$BUILD_DIR"*) fail "RUNPATH '$rpath' points into the build tree";; esac
  missing=$(env -u LD_LIBRARY_PATH ldd "$lib/libpetscspmv.so.$VERSION" | grep 'not found' || true)
  [ -z "$missing" ] || fail "libraries not found by the installed library: $missing"
  # the -dll_append entry point and the package initializer are exported
  syms=$(nm -D --defined-only "$lib/libpetscspmv.so.$VERSION")
  for s in PetscDLLibraryRegister_petscspmv PetscSpMVInitializePackage PetscSpMVFinalizePackage MatSpMVGetStats; do
    grep -q " T $s\$" <<< "$syms" || fail "$s is not exported by the installed library"
  done
  # every header the public headers include is installed or one of PETSc's
  for h in petscspmv.h petscspmvversion.h; do
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$PREFIX/include/$h"); do
      [ -f "$PREFIX/include/$inc" ] || [ -f "$PETSC_DIR/include/$inc" ] || fail "$h includes $inc, which is neither installed nor PETSc's"
    done
  done
  # the version, from project() VERSION
  for f in MAJOR:"$major" MINOR:"$(echo "$VERSION" | cut -d. -f2)" SUBMINOR:"$(echo "$VERSION" | cut -d. -f3)"; do
    grep -Eq "^#define PETSCSPMV_VERSION_${f%%:*} +${f#*:}\$" "$PREFIX/include/petscspmvversion.h" || fail "petscspmvversion.h: PETSCSPMV_VERSION_${f%%:*} is not ${f#*:}"
  done
  grep -q '^#define PETSCSPMV_VERSION_GE(MAJOR, MINOR, SUBMINOR)' "$PREFIX/include/petscspmvversion.h" || fail "petscspmvversion.h lacks PETSCSPMV_VERSION_GE"
  pc=$lib/pkgconfig/petscspmv.pc
  cat "$pc"
  grep -q '^prefix=${pcfiledir}/' "$pc" || fail "$pc: prefix is not relative to the .pc file"
  [ "$(PKG_CONFIG_PATH=$lib/pkgconfig:$PETSC_LIBDIR/pkgconfig pkg-config --variable=includedir petscspmv)" -ef "$PREFIX/include" ] || fail "$pc: includedir does not resolve to $PREFIX/include"
  grep -qx "Version: $VERSION" "$pc" || fail "$pc: Version is not $VERSION"
  grep -Eqx 'Requires: PETSc = [0-9]+\.[0-9]+\.[0-9]+' "$pc" || fail "$pc: no 'Requires: PETSc = <the version built with>'"
  grep -qx 'Libs: -L${libdir} -lpetscspmv' "$pc" || fail "$pc: Libs"
  grep -qx 'Cflags: -I${includedir}' "$pc" || fail "$pc: Cflags"
  top=$(cd "$SOURCE_DIR/../.." && pwd)
  # the man pages (docs/manual, as scripts/manpages.py rendered them): the index, the solver's and
  # the four types', and every page of docs/manual unchanged
  man=$PREFIX/$DOCDIR/manual
  for p in README.md KSPMIXEDCG.md PCMIXEDKRYLOV.md MATRGCSR.md MATPACKSELL.md MATRGCSRCUDA.md MATPACKSELLCUDA.md; do
    [ -f "$man/$p" ] || fail "the man page $man/$p is missing"
  done
  pages=0
  for p in "$top"/docs/manual/*.md; do
    cmp -s "$p" "$man/${p##*/}" || fail "$man/${p##*/} is missing or differs from docs/manual/${p##*/}"
    pages=$((pages + 1))
  done
  # every page the index links to is installed
  for p in $(sed -n 's/^- \[[^]]*\](\([^)]*\))$/\1/p' "$man/README.md"); do
    [ -f "$man/$p" ] || fail "$man/README.md links to $p, which is not installed"
  done
  echo "man pages: $pages in $man"
  # the tutorials' sources, with the headers they include (the build files are not installed)
  tut=$PREFIX/$DATADIR/petscspmv/tutorials
  for f in ex1.c ex2.c; do
    [ -f "$tut/$f" ] || fail "the tutorial $tut/$f is missing"
    cmp -s "$top/tutorials/$f" "$tut/$f" || fail "$tut/$f differs from tutorials/$f"
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$tut/$f"); do
      [ -f "$tut/$inc" ] || fail "$f includes \"$inc\", which is not installed beside it"
    done
  done
  [ ! -e "$tut/CMakeLists.txt" ] || fail "$tut/CMakeLists.txt is installed (it builds only inside the project)"
  echo "tutorials: $(cd "$tut" && echo *)"
  # nothing installed refers to the build or source tree (but for the prefix, which here lies in the build tree)
  while IFS= read -r f; do
    text=$(cat "$f")
    text=${text//"$PREFIX"/}
    case $text in *"$BUILD_DIR"* | *"$top/"*) fail "$f names the build tree $BUILD_DIR or the source tree $top";; esac
  done < <(find "$PREFIX/include" "$lib/pkgconfig" "$lib/cmake" "$man" "$tut" -type f)
  echo PASS
  ;;
pkgconfig)
  export PKG_CONFIG_PATH=$lib/pkgconfig:$PETSC_LIBDIR/pkgconfig
  run pkg-config --exists --print-errors petscspmv || fail "pkg-config does not find petscspmv with PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
  [ "$(pkg-config --modversion petscspmv)" = "$VERSION" ] || fail "pkg-config --modversion petscspmv is not $VERSION"
  flags=$(pkg-config --cflags --libs petscspmv)
  echo "pkg-config --cflags --libs petscspmv: $flags"
  # the prefix is relative to the .pc file: compare the directories the flags name
  has_inc=no has_lib=no
  for f in $flags; do
    case $f in -I*) [ "${f#-I}" -ef "$PREFIX/include" ] && has_inc=yes ;; -L*) [ "${f#-L}" -ef "$lib" ] && has_lib=yes ;; esac
  done
  [ $has_inc = yes ] || fail "no -I for $PREFIX/include"
  [ $has_lib = yes ] || fail "no -L for $lib"
  case " $flags " in *" -lpetsc "*) ;; *) fail "no -lpetsc (Requires: PETSc)";; esac
  # PETSc's compiler (its PETSc.pc says which: the MPI wrapper, so mpi.h is found)
  cc=$(pkg-config --variable=ccompiler PETSc)
  # shellcheck disable=SC2086
  run ${cc:-mpicc} -o downstream "$SOURCE_DIR/downstream.c" $flags -Wl,-rpath,"$lib" -Wl,-rpath,"$PETSC_LIBDIR"
  check_loads_installed ./downstream
  for np in 1 2; do
    # shellcheck disable=SC2086
    run_pass np$np.log $MPIEXEC -n $np ./downstream -expect_version "$VERSION"
  done
  ;;
find_package)
  # a fresh CMake project that knows only the prefix; the package registries are off so only
  # the installed tree can be found
  run "$CMAKE" -S "$SOURCE_DIR/downstream" -B build -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF > configure.log 2>&1 || { cat configure.log; fail "configure"; }
  cat configure.log
  grep -q "petscspmv $VERSION in $lib/cmake/petscspmv " configure.log || fail "find_package did not find petscspmv $VERSION in $lib/cmake/petscspmv"
  run "$CMAKE" --build build || fail "build"
  check_loads_installed build/downstream
  for np in 1 2; do
    # shellcheck disable=SC2086
    run_pass np$np.log $MPIEXEC -n $np build/downstream -expect_version "$VERSION"
  done
  # petscspmvConfigVersion.cmake refuses an incompatible version
  if "$CMAKE" -S "$SOURCE_DIR/downstream" -B build-v99 -DCMAKE_PREFIX_PATH="$PREFIX" -DPETSCSPMV_REQUIRED_VERSION=99.0 \
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF > v99.log 2>&1; then
    cat v99.log; fail "find_package(petscspmv 99.0) succeeded"
  fi
  grep -q "version: $VERSION" v99.log || { cat v99.log; fail "find_package(petscspmv 99.0) failed, but not for the version"; }
  echo "find_package(petscspmv 99.0) is refused (installed: $VERSION)"
  ;;
dll_append)
  export PKG_CONFIG_PATH=$PETSC_LIBDIR/pkgconfig
  cc=$(pkg-config --variable=ccompiler PETSc)
  # shellcheck disable=SC2086
  run ${cc:-mpicc} -DPETSCSPMV_DOWNSTREAM_DLL -o downstream_dll "$SOURCE_DIR/downstream.c" -I"$PREFIX/include" \
    $(pkg-config --cflags --libs PETSc) -Wl,-rpath,"$PETSC_LIBDIR"
  if grep -q 'libpetscspmv' <<< "$(readelf -d downstream_dll)"; then fail "downstream_dll is linked with libpetscspmv"; fi
  for np in 1 2; do
    # shellcheck disable=SC2086
    run_pass np$np.log $MPIEXEC -n $np ./downstream_dll -dll_append "$lib/libpetscspmv.so" -expect_version "$VERSION"
  done
  # without the library the types do not exist: what -dll_append changes
  # shellcheck disable=SC2086
  if $MPIEXEC -n 1 ./downstream_dll > without.log 2>&1; then cat without.log; fail "downstream_dll passed without -dll_append"; fi
  grep -q "Unknown Mat type given: rgcsr" without.log || { cat without.log; fail "without -dll_append: not the unknown-type error"; }
  echo "without -dll_append: $(grep -m1 'Unknown Mat type given' without.log)"
  echo PASS
  ;;
*)
  fail "unknown step"
  ;;
esac
