# isthmus: `make demo` and `make test` are all a new machine needs.
# MPI=mpich: the same against Debian's MPICH (beside Open MPI) in build-mpich/ (cmake/mpich.cmake).
MPI        ?= openmpi
ifeq ($(MPI),mpich)
BUILD      ?= build-mpich
# the deps also install MPICH and an mpi4py built against it, as a user site of the build tree
DEPS_ARGS   = --mpich $(abspath $(BUILD))/python-user
MPI_CMAKE   = -DISTHMUS_MPI=mpich -DISTHMUS_MPICH_PYTHONUSERBASE=$(abspath $(BUILD))/python-user \
              -DISTHMUS_SMPI_BUILD_DIR=$(abspath $(BUILD))/build-smpi
# tests/mpirun.sh launches through MPICH's mpiexec, its ranks yielding when idle (make demo,
# make bench; ctest sets both itself)
export ISTHMUS_MPIEXEC := mpiexec.mpich
export ISTHMUS_MPICH_PRELOAD := $(abspath $(BUILD))/libisthmus_mpich_yield.so
ifneq ($(filter test-asan test-fuzz,$(MAKECMDGOALS)),)
$(error MPI=mpich: test-asan and test-fuzz are Open MPI's (tests/lsan.supp suppresses Open MPI's leaks))
endif
else ifneq ($(MPI),openmpi)
$(error MPI=$(MPI): openmpi (the default) or mpich)
endif
BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build demo test bench test-asan test-fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh $(DEPS_ARGS)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(MPI_CMAKE) $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== 1. the coupled toy (examples/toy): ocean on ORCA2 (2 ranks) <-> atmosphere on LMDZ (3 ranks)"
	examples/toy/run.sh tests/mpirun.sh tests/data/orca2-lmdz $(BUILD)/demo-toy 2 3 $(BUILD)/examples/toy/toy_c
	$${PYTHON:-python3} examples/toy/plot.py $(BUILD)/demo-toy $(BUILD)/demo-toy/toy.png
	@echo "== 2. redistribution (examples/demo_redist.c): 10 fields between two decompositions, 3 + 5 ranks"
	tests/mpirun.sh 8 $(BUILD)/examples/demo_redist

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 600

bench: build
	bash bench/run_all.sh $(BUILD)

$(BUILD_ASAN)/build.ninja:
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DISTHMUS_SANITIZE=ON $(CMAKE_ARGS)

# Open MPI's own allocations are not ours to fix: leak checking is limited to our code by the
# suppressions in tests/lsan.supp (full unwinding: the fast unwinder loses frames inside MPI).
# intercept_tls_get_addr=0: LeakSanitizer's tracer crashed now and then scanning dynamic TLS
# ("Tracer caught signal 11" in ScanRangeForPointers), likely of MCA components Open MPI loads
# and unloads; the threads' static TLS and stacks are still scanned.
test-asan: deps $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && \
	  ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=0:intercept_tls_get_addr=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ISTHMUS_PYTHON_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  ctest -j $(JOBS) --output-on-failure --timeout 900

# The namcouple and YAML readers under ASan+UBSan: 100,000 mutated configurations (seeded,
# replayable with --only), each read or refused with ISTHMUS_ERR_CONFIG, never a crash or hang.
test-fuzz: deps $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target fuzz_config
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  timeout 3600 $(BUILD_ASAN)/tests/coupler/fuzz_config --runs 100000 --seed 2026 \
	  tests/coupler/data

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-smpi
