# Thin wrapper around CMake/CTest. `make run` solves a real matrix with the new formats,
# `make check` runs the tests; both install what a fresh machine lacks first.
PETSC_DIR ?= /opt/petsc-cuda
BUILD     ?= build
JOBS      ?= $(shell nproc)
SHARED    ?= $(CURDIR)/../shared
MPIEXEC   ?= mpiexec --allow-run-as-root --oversubscribe
NP        ?= 2
MATRIX    ?= $(SHARED)/matrices/bcsstk16.mtx.gz
RUNOPTS   ?= -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -ksp_max_it 5000
# bcsstk16's entries reach 2e9, past FP16's 65504: PackSELL FP16 scales them by a power of two
PACKSELL  ?= -mat_packsell_scaling auto
export PETSC_DIR

.PHONY: all setup build check check-gpu run run-gpu clean
all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DPETSC_DIR=$(PETSC_DIR) -DPETSCSPMV_MATRIX_DIR=$(SHARED)/matrices
	cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest -L "unit|petsc" -j $(JOBS) --output-on-failure

check-gpu: build
	cd $(BUILD) && ctest -L gpu --output-on-failure

$(BUILD)/main.petsc: build
	/usr/bin/python3 scripts/mtx2petsc.py $(MATRIX) $@

run: $(BUILD)/main.petsc
	@for t in rgcsr "packsell $(PACKSELL)"; do \
	  $(MPIEXEC) -n $(NP) $(BUILD)/tutorials/ex1 -f $(BUILD)/main.petsc -mat_type $$t $(RUNOPTS) || exit 1; done

run-gpu: $(BUILD)/main.petsc
	@for t in rgcsrcuda "packsellcuda $(PACKSELL)"; do \
	  $(MPIEXEC) -n $(NP) $(BUILD)/tutorials/ex1 -f $(BUILD)/main.petsc -mat_type $$t -use_gpu_aware_mpi 0 $(RUNOPTS) || exit 1; done

clean:
	rm -rf $(BUILD)
