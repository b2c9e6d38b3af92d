#!/usr/bin/env bash
# Checks the tracked C, C++ and CUDA files against the repository's .clang-format:
# `clang-format --dry-run -Werror` on every file that git tracks under *.c *.h *.cpp *.hpp *.cu *.cuh,
# third-party files excepted (THIRD_PARTY below; none at present). Changes nothing.
#
#   scripts/check_format.sh [SOURCE_DIR] [-- FILE...]
#
# SOURCE_DIR: the repository's root (default: this script's parent directory). FILE...: check only
# these files (paths relative to SOURCE_DIR). CLANG_FORMAT: the program (default clang-format; the
# style is written for clang-format 14, Debian's clang-format package).
# Exit status: 0 every file formatted; 1 some file would change (each is listed, with the first
# lines of clang-format's report); 2 usage or setup error; 77 clang-format or git not found
# (a ctest test can declare SKIP_RETURN_CODE 77).
#
# To see what it would change in one file: clang-format FILE | diff FILE -
# To apply it: clang-format -i FILE...
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -gt 0 && $1 != -- ]]; then
  root=$(cd "$1" && pwd) || exit 2
  shift
fi
files=()
if [[ $# -gt 0 ]]; then
  [[ $1 == -- ]] || { echo "usage: $0 [SOURCE_DIR] [-- FILE...]" >&2; exit 2; }
  shift
  files=("$@")
fi

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check_format: $CLANG_FORMAT not found (Debian: apt-get install clang-format); skipped" >&2
  exit 77
fi
[[ -f $root/.clang-format ]] || { echo "check_format: no .clang-format in $root" >&2; exit 2; }
# An option that this clang-format does not know fails here rather than in every file.
if ! (cd "$root" && "$CLANG_FORMAT" --dump-config >/dev/null); then
  echo "check_format: $CLANG_FORMAT cannot read $root/.clang-format" >&2
  exit 2
fi

# Third-party files: extended regular expression on the path; they keep their own style.
THIRD_PARTY='^(third_party|external|vendor)/'

if [[ ${#files[@]} -eq 0 ]]; then
  if ! command -v git >/dev/null 2>&1 || ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    echo "check_format: $root is not a git work tree (git ls-files lists the files); skipped" >&2
    exit 77
  fi
  mapfile -t files < <(git -C "$root" ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -Ev "$THIRD_PARTY")
fi

bad=0
checked=0
for f in "${files[@]}"; do
  [[ -f $root/$f ]] || continue # deleted in the work tree but still in the index
  checked=$((checked + 1))
  if ! out=$(cd "$root" && "$CLANG_FORMAT" --dry-run -Werror "$f" 2>&1); then
    bad=$((bad + 1))
    echo "not formatted: $f"
    printf '%s\n' "$out" | head -n 6 | sed 's/^/  /'
  fi
done
echo "check_format: $bad of $checked files would change ($("$CLANG_FORMAT" --version | head -n 1))"
[[ $bad -eq 0 ]]
