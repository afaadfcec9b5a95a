# embtrain — top-level entry points. Everything goes through CMake in build/.
#   make run     install deps, build, make a synthetic dataset, train tiny_gr00t on 2 ranks
#   make test    install deps, build, run the whole test suite (ctest), then the emulated CUDA suites
#   make emu     the whole project in build-emu/ with kernels/cuda on the CUDA emulation
#                (EMBTRAIN_CUDA=EMULATE, no GPU needed), and its CUDA suites (ctest -L cuda)
#   make bench   benchmarks; JSON results in outputs/bench/
#   make asan    AddressSanitizer+UBSan build in build-asan/ and its unit tests, and the emulated
#                CUDA kernels' test under them (build-emu/)
#   make cuda    the standalone CUDA kernel tests and benchmarks (needs a GPU to run)
#   make regress weak/strong scaling drivers, compared with regression/baselines (regression/)
#   make closed-loop  collect expert demos in MuJoCo, train a small gr00t, evaluate it in closed loop
#   make rl-bench     asynchronous RL on push: sync vs async throughput table and learning curves
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
NP ?= 2
CMAKE_FLAGS ?=
DECK ?= inputs/tiny_gr00t.in
EMU_BUILD ?= build-emu
EMU_TARGET ?= all
EMU_TESTS ?= -L cuda

# The scripts behind run, bench and regress set the MPI environment (scripts/mpi_env.sh).

.PHONY: all deps configure build run test emu bench asan cuda regress closed-loop rl-bench clean

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

# The emulated suites build only what they run (EMU_TARGET=cuda_tests, whose ctest leaves out
# the ASan kernel test that `make asan` runs); objects shared with $(BUILD) come from ccache.
# ctest runs $(JOBS) processors' worth of tests at once: a test takes as many as it has ranks,
# and the timing-sensitive ones run alone (cmake/embtrain.cmake's embtrain_schedule_test).
test: build
	source scripts/mpi_env.sh && cd $(BUILD) && ctest --output-on-failure --timeout 600 -j $(JOBS)
	$(MAKE) emu EMU_TARGET=cuda_tests EMU_TESTS="-L cuda -LE asan"

emu: deps
	cmake -S . -B $(EMU_BUILD) -DCMAKE_BUILD_TYPE=Release -DEMBTRAIN_CUDA=EMULATE $(CMAKE_FLAGS)
	cmake --build $(EMU_BUILD) -j $(JOBS) --target $(EMU_TARGET)
	source scripts/mpi_env.sh && cd $(EMU_BUILD) && ctest --output-on-failure --timeout 600 -j $(JOBS) $(EMU_TESTS)

bench: build
	@bash scripts/bench.sh $(BUILD)

asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEMBTRAIN_ASAN=ON -DEMBTRAIN_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	source scripts/mpi_env.sh && cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -LE "mpi|python|slow"
	$(MAKE) emu EMU_TARGET=cuda_test_kernels_asan EMU_TESTS="-L asan"

cuda:
	$(MAKE) -C kernels/cuda test bench

regress: build
	@bash regression/regress.sh $(BUILD)

closed-loop: build
	@bash scripts/closed_loop.sh $(BUILD) $(NP)

rl-bench: build
	@bash scripts/rl_bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan $(EMU_BUILD)
