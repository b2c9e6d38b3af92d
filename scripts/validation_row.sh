#!/usr/bin/env bash
# Appends one row to a GPU-validation results CSV (docs/bench/gpu-validation.csv's columns):
#
#   scripts/validation_row.sh CSV CHECK COMMAND RESULT [NOTES]
#   scripts/validation_row.sh --merge FROM.csv TO.csv
#
# Columns: date (UTC, of the run), commit, machine, petsc, check, command, result, notes.
#   commit:  $GIT_COMMIT, else `git rev-parse --short HEAD` (with "-dirty" when the work tree
#            differs from it), else "unknown"
#   machine: $VALIDATION_MACHINE, else the first GPU's name from nvidia-smi, else "unknown"
#   petsc:   $PETSC_VERSION (gpu_validate.sh's setting: 3.22, 3.25 or 3.25-int64; default 3.22)
#   check:   a short name (ctest-gpu, memcheck, racecheck, main-job, ...); RESULT: pass, fail,
#            or a count such as "428/428 passed"; NOTES: anything short a reader needs.
# The CSV and its header are created when missing. Fields are quoted as RFC 4180 says, newlines
# turned into spaces. --merge appends FROM's rows (not its header) to TO, leaving out rows
# TO already holds: how the rows a GPU run wrote into OUTDIR/gpu-validation.csv reach
# docs/bench/gpu-validation.csv.
set -euo pipefail

header='date,commit,machine,petsc,check,command,result,notes'

if [[ ${1:-} == --merge ]]; then
  from=${2:?usage: validation_row.sh --merge FROM.csv TO.csv}
  to=${3:?usage: validation_row.sh --merge FROM.csv TO.csv}
  [[ -s $to ]] || echo "$header" > "$to"
  added=0
  while IFS= read -r line; do
    [[ $line == "$header" || -z $line ]] && continue
    if ! grep -qxF -- "$line" "$to"; then
      printf '%s\n' "$line" >> "$to"
      added=$((added + 1))
    fi
  done < "$from"
  echo "validation_row: $added row(s) appended to $to"
  exit 0
fi

csv=${1:?usage: validation_row.sh CSV CHECK COMMAND RESULT [NOTES]}
check=${2:?check name}
command=${3:?command}
result=${4:?result}
notes=${5:-}

field() {
  local s=${1//$'\n'/ }
  s=${s//$'\r'/ }
  if [[ $s == *[,\"]* || $s == " "* || $s == *" " ]]; then
    s=\"${s//\"/\"\"}\"
  fi
  printf '%s' "$s"
}

commit=${GIT_COMMIT:-}
if [[ -z $commit ]] && commit=$(git rev-parse --short HEAD 2> /dev/null); then
  git diff-index --quiet HEAD -- 2> /dev/null || commit=$commit-dirty
fi
commit=${commit:-unknown}
machine=${VALIDATION_MACHINE:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1 || true)}
machine=${machine:-unknown}

[[ -s $csv ]] || echo "$header" > "$csv"
row=""
for v in "$(date -u +%F)" "$commit" "$machine" "${PETSC_VERSION:-3.22}" "$check" "$command" "$result" "$notes"; do
  row+="$(field "$v"),"
done
printf '%s\n' "${row%,}" >> "$csv"
