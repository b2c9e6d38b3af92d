# Thin wrapper around CMake/CTest. `make run` solves a real matrix with the new formats and PETSc's
# AIJ baseline, each checked by its true residual with the exact matrix,
# `make check` runs the tests; both install what a fresh machine lacks first.
PETSC_DIR ?= /opt/petsc-cuda
# empty for a prefix install (both archives of ../shared/petsc); the build folder of a source tree
PETSC_ARCH ?=
BUILD     ?= build
JOBS      ?= $(shell nproc)
SHARED    ?= $(CURDIR)/../shared
MPIEXEC   ?= mpiexec --allow-run-as-root --oversubscribe
NP        ?= 2
MATRIX    ?= $(SHARED)/matrices/bcsstk16.mtx.gz
RTOL      ?= 1e-8
# The unpreconditioned norm makes rtol bound ||b - A_op x|| / ||b||, the residual CG recurs
# (not the Jacobi-preconditioned one). ex1 then recomputes the TRUE residual with the exact AIJ
# matrix and fails the run above CHECK_TOL = 10 x RTOL: the factor 10 leaves room for the drift
# between CG's recursive residual and the recomputed one (rounding, grows with cond(A)); a lossy
# operator (PackSELL e8m10, the fp16 mantissa, on bcsstk16: 4.3e-4) misses it by orders of magnitude.
CHECK_TOL ?= $(shell awk 'BEGIN { printf "%g", 10 * $(RTOL) }')
RUNOPTS   ?= -ksp_type cg -pc_type jacobi -ksp_norm_type unpreconditioned -ksp_rtol $(RTOL) -ksp_max_it 5000
EXTRA     ?=
# Every run uses the types' DEFAULT options (PackSELL: lossless value format exact). aij and
# aijcusparse are PETSc's own baselines. The GPU types run when nvidia-smi finds a GPU.
CPU_TYPES ?= aij rgcsr packsell
GPU_TYPES ?= aijcusparse rgcsrcuda packsellcuda
HAVE_GPU  := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
RUN_TYPES ?= $(CPU_TYPES) $(if $(HAVE_GPU),$(GPU_TYPES))
export PETSC_DIR PETSC_ARCH

.PHONY: all setup build check check-gpu run run-gpu clean
all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DPETSC_DIR=$(PETSC_DIR) -DPETSC_ARCH=$(PETSC_ARCH) -DPETSCSPMV_MATRIX_DIR=$(SHARED)/matrices
	cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest -L "unit|petsc" -j $(JOBS) --output-on-failure

check-gpu: build
	cd $(BUILD) && ctest -L gpu --output-on-failure

# the matrix is the shared folder's: say where it is looked for when it is not there
$(MATRIX):
	@echo "make: $(MATRIX) not found: the checkout is expected beside the project's shared folder (matrices, petsc archives); elsewhere give SHARED=<that folder>, or MATRIX=<a .mtx or .mtx.gz file>" >&2; exit 1

# order-only on build: the matrix is converted again only when it or the script changed
$(BUILD)/main.petsc: $(MATRIX) scripts/mtx2petsc.py | build
	/usr/bin/python3 scripts/mtx2petsc.py $(MATRIX) $@

# $(call run_types,<mat types>): ex1 once per type (GPU types with -use_gpu_aware_mpi 0), each
# with -check_true_residual $(CHECK_TOL); logs in $(BUILD)/run-<type>.log; then a summary table
# from ex1's machine-readable last lines; exit 1 when any run failed its check or crashed.
define run_types
	@fail=""; \
	for t in $(1); do \
	  case $$t in *cuda*|*cusparse*) gpu="-use_gpu_aware_mpi 0";; *) gpu="";; esac; \
	  cmd="$(MPIEXEC) -n $(NP) $(BUILD)/tutorials/ex1 -f $(BUILD)/main.petsc -mat_type $$t $$gpu $(RUNOPTS) -check_true_residual $(CHECK_TOL) $(EXTRA)"; \
	  echo "== $$cmd"; \
	  $$cmd > $(BUILD)/run-$$t.log 2>&1 || fail="$$fail $$t"; \
	  cat $(BUILD)/run-$$t.log; \
	done; \
	echo; echo "summary: $(notdir $(MATRIX)), $(NP) ranks, rtol $(RTOL), check: true residual (exact AIJ matrix) <= $(CHECK_TOL)"; \
	printf '%-14s %10s %12s %14s %12s  %s\n' mat_type iterations solve_time true_residual error check; \
	for t in $(1); do \
	  case " $$fail " in *" $$t "*) st=FAILED;; *) st=ok;; esac; \
	  grep '^type=' $(BUILD)/run-$$t.log | tail -n 1 | awk -v t=$$t -v st=$$st ' \
	    { for (i = 1; i <= NF; i++) { k = substr($$i, 1, index($$i, "=") - 1); v[k] = substr($$i, index($$i, "=") + 1) } } \
	    END { printf "%-14s %10s %12s %14s %12s  %s\n", t, d(v["iterations"]), d(v["solve_time"]), d(v["true_residual"]), d(v["error"]), st } \
	    function d(s) { return s == "" ? "-" : s }'; \
	done; \
	if [ -n "$$fail" ]; then echo "FAILED:$$fail (see $(BUILD)/run-<type>.log)"; exit 1; fi
endef

# The mixed-precision preconditioner on the same matrix: tutorials/ex2, FP64 CG + Jacobi against
# PCMIXEDKRYLOV with the inner CG and F3R (on the GPU with aijcusparse when there is one), each
# solve checked by its true residual as above; exit 1 when one fails.
define run_mixed
	@mt=$(if $(HAVE_GPU),aijcusparse -use_gpu_aware_mpi 0,aij); \
	cmd="$(MPIEXEC) -n $(NP) $(BUILD)/tutorials/ex2 -f $(BUILD)/main.petsc -mat_type $$mt -rtol $(RTOL) -check_true_residual $(CHECK_TOL)"; \
	echo; echo "== $$cmd"; \
	$$cmd > $(BUILD)/run-mixed.log 2>&1; rc=$$?; \
	grep -E '^(matrix|solver=)' $(BUILD)/run-mixed.log; \
	if [ $$rc -ne 0 ]; then tail -n 20 $(BUILD)/run-mixed.log; echo "FAILED: the mixed-precision preconditioner run (see $(BUILD)/run-mixed.log)"; exit 1; fi; \
	echo "ok: every solve above reached a true residual (exact matrix) <= $(CHECK_TOL)"
endef

run: $(BUILD)/main.petsc
	$(call run_types,$(RUN_TYPES))
	$(call run_mixed)

run-gpu: $(BUILD)/main.petsc
	$(call run_types,$(GPU_TYPES))

clean:
	rm -rf $(BUILD)
