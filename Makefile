# embtrain — top-level entry points. Everything goes through CMake in build/.
#   make run     install deps, build, make a synthetic dataset, train tiny_gr00t on 2 ranks
#   make test    install deps, build, run the whole test suite (ctest)
#   make bench   benchmarks; JSON results in outputs/bench/
#   make asan    AddressSanitizer+UBSan build in build-asan/ and its unit tests
#   make cuda    the standalone CUDA kernel tests and benchmarks (needs a GPU to run)
#   make regress weak/strong scaling drivers (regression/)
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
NP ?= 2
CMAKE_FLAGS ?=
DECK ?= inputs/tiny_gr00t.in

# MPI as root inside containers, shared-memory transport, no oversubscription errors
# (MACHINE.md "Running MPI here"); the glibc tunables stop Open MPI's large collectives
# from first-touching fresh pages every call.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_pml ?= ob1
export OMPI_MCA_btl ?= self,vader
export OMPI_MCA_rmaps_base_oversubscribe := 1
export GLIBC_TUNABLES ?= glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
MPIRUN := mpirun -np $(NP) --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1

.PHONY: all deps configure build run test bench asan cuda regress clean

all: build

deps:
	@bash scripts/install_deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/make_run.sh $(BUILD) $(NP) $(DECK)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600

bench: build
	@bash scripts/bench.sh $(BUILD)

asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEMBTRAIN_ASAN=ON -DEMBTRAIN_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -LE "mpi|python|slow"

cuda:
	$(MAKE) -C kernels/cuda test bench

regress: build
	@bash regression/run_scaling.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan
