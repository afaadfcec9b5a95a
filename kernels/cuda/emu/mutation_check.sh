#!/usr/bin/env bash
# Shows that the emulated kernel tests catch the bugs the emulation exists for. In a scratch
# copy of the working tree it builds the emulated tests (plain and ASan), runs the tests on the
# real code (every test, or with ONLY those of the selected files), then for each mutant
# rebuilds and runs the tests of the mutated file, and the ASan build when they pass. Mutants:
# every __syncthreads() of the SIMT attention kernels (attention.cu) and of the tensor-core
# pipeline (async_pipeline.cuh) removed in turn; tile bounds shifted by one; a wrong
# cp_async_wait depth, pipeline stage, fragment index or tile summary in the tensor-core kernels
# (attention_mma.cu, attention_rows.cuh, async_pipeline.cuh, mma_tiles.cuh); a missing wgmma
# fence or wait, a stage released before its wgmma retired, an mbarrier arrival or wait, a wrong
# expect_tx byte count or a wrong descriptor, tile counts shifted or tile skipping removed, the
# atomic dQ's dS buffers, halves, key range and columns wrong in
# the Hopper kernels (attention_wgmma.cu, attention_wgmma_backward.cu, attention_wgmma_ring.cuh); in the
# memory-bound kernels (norm_modulate.cu, column_sum.cuh, residual.cu, adamw.cu, vector_access.cuh)
# a wrong vector bound or stride, a dropped scalar head or tail, a vector path taken where rows are
# not aligned, a fused residual that loses its gate or its store, a row block a warp short or a
# thread's later vectors unmodulated, an accumulated gradient overwritten, a column sum's row
# chunk that drops or repeats a row, a dropped chunk or a missing barrier; around
# the GEMMs (linear.cu, blas.cu) a cached plan that keeps its first call's bias pointer, a wrong
# GELU aux leading dimension, a BGRADA bias gradient that is not accumulated.
# Prints a table (mutant, result, what caught it); exits 0 when the real code passes and every
# mutant fails.
# Usage: kernels/cuda/emu/mutation_check.sh [scratch-dir]   (JOBS=2 by default; an existing
# scratch-dir is reused as it is, build included; ONLY=<extended regex> keeps the mutants whose
# file matches it, e.g. ONLY='norm_modulate|residual|adamw|vector_access|linear|blas')
set -uo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
# The default scratch is inside the checkout (git-ignored as /build*/): under ccache's base_dir
# (when that is above the checkout) each run's objects hash as those of the last run's scratch,
# whose relative layout is the same, so ccache reuses every object a mutant does not change.
scratch=${1:-$(mktemp -d "$root/build-mutants.XXXXXX")}
jobs=${JOBS:-2}
only=${ONLY:-.}
files=(attention.cu attention_mma.cu attention_rows.cuh attention_wgmma.cu attention_wgmma_backward.cu
  attention_wgmma_ring.cuh async_pipeline.cuh mma_tiles.cuh
  norm_modulate.cu column_sum.cuh residual.cu adamw.cu vector_access.cuh linear.cu blas.cu)
if [ ! -d "$scratch/src" ]; then
  mkdir -p "$scratch/src" "$scratch/orig"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$scratch/src")
  for f in "${files[@]}"; do cp "$scratch/src/kernels/cuda/$f" "$scratch/orig/$f"; done
fi
restore() {  # every mutated file back to its original
  local f
  for f in "${files[@]}"; do
    cmp -s "$scratch/orig/$f" "$scratch/src/kernels/cuda/$f" || cp "$scratch/orig/$f" "$scratch/src/kernels/cuda/$f"
  done
}
restore
cmake -S "$scratch/src" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DEMBTRAIN_CUDA=EMULATE >"$scratch/configure.log" 2>&1 ||
  { echo "mutation_check: configure failed, see $scratch/configure.log" >&2; exit 2; }

# run_suite LOG FILTER: runs the filtered kernel tests on the current sources; prints "pass" or
# "FAIL (<what caught it>)".
run_suite() {
  local log=$scratch/$1.log filter=$2 plain=0 asan=0
  if ! cmake --build "$scratch/build" -j "$jobs" --target cuda_test_kernels >"$log" 2>&1; then
    echo "FAIL (build)"; return
  fi
  (cd "$scratch/src" && timeout 900 "$scratch/build/tests/kernels/cuda/cuda_test_kernels" "$filter") >>"$log" 2>&1 || plain=$?
  if [ $plain -eq 0 ]; then
    if ! cmake --build "$scratch/build" -j "$jobs" --target cuda_test_kernels_asan >>"$log" 2>&1; then
      echo "FAIL (build)"; return
    fi
    (cd "$scratch/src" && ASAN_OPTIONS=detect_leaks=0 timeout 900 "$scratch/build/tests/kernels/cuda/cuda_test_kernels_asan" \
      "$filter") >>"$log" 2>&1 || asan=1
  fi
  if [ $plain -eq 0 ] && [ $asan -eq 0 ]; then echo "pass"; return; fi
  local why=()
  grep -q "FAIL .*copies differing between schedules" "$log" && why+=("schedules differ")
  grep -q "^FAIL attention.* \(out\|lse\|dq\|dk\|dv\) " "$log" && why+=("vs reference")
  grep -q "^FAIL attention.*(mismatch" "$log" && why+=("edge case")
  # grep -c reads all its input: grep -q would stop early and, under pipefail, fail the pipe.
  [ "$(grep "^FAIL .* err " "$log" | grep -vc "^FAIL attention\|between schedules")" -gt 0 ] && why+=("vs reference")
  grep -q "^FAIL exception" "$log" && why+=("exception")
  grep -q "emulated CUDA:" "$log" && why+=("emulation fault")
  grep -q "AddressSanitizer" "$log" && why+=("ASan")
  grep -q "runtime error:" "$log" && why+=("UBSan")
  [ $plain -gt 128 ] && why+=("killed by signal $((plain - 128))")
  [ $plain -eq 124 ] && why+=("timeout")
  local IFS=,
  echo "FAIL (${why[*]:-exit status})"
}

mutate() {  # mutate FILE NAME PYTHON-EXPRESSION-ON-s: applies it to the original FILE
  restore
  python3 - "$scratch/orig/$1" "$scratch/src/kernels/cuda/$1" "$3" <<'PY' || { echo "mutation_check: mutant $2 does not apply" >&2; exit 2; }
import sys
s = open(sys.argv[1]).read()
t = eval(sys.argv[3])
assert t != s, "no change"
open(sys.argv[2], "w").write(t)
PY
}

# The tests of each file's kernels (test names contain the filter; "" runs them all).
filter_of() {
  case $1 in
  attention.cu) echo "attention " ;;
  attention_mma.cu | async_pipeline.cuh | mma_tiles.cuh) echo attention_mma ;;
  attention_wgmma.cu | attention_wgmma_backward.cu | attention_wgmma_ring.cuh) echo attention_wgmma ;;
  attention_rows.cuh) echo attention_ ;;
  norm_modulate.cu) echo norm_modulate ;;
  column_sum.cuh) echo column_sum ;;
  residual.cu) echo residual ;;
  adamw.cu) echo adamw ;;
  linear.cu | blas.cu) echo linear ;;
  *) echo "" ;;
  esac
}

failures=0
n=0
report() {  # report NAME RESULT
  printf '%-78s %s\n' "$1" "$2"
  [[ $2 == FAIL* ]] || failures=$((failures + 1))
}
printf '%-78s %s\n' "mutant" "result"
# The real code runs the tests the selected mutants run: all of them without ONLY, else each
# selected file's filter once.
real_filters=("")
if [ "$only" != . ]; then
  mapfile -t real_filters < <(for f in "${files[@]}"; do [[ $f =~ $only ]] && filter_of "$f"; done | sort -u)
  for filter in "${real_filters[@]}"; do [ -n "$filter" ] || real_filters=(""); done  # "" runs them all
fi
real=pass
for ((k = 0; k < ${#real_filters[@]}; ++k)); do
  result=$(run_suite "real$k" "${real_filters[$k]}")
  [ "$result" = pass ] || real=$result
done
printf '%-78s %s\n' "real code (tests: ${real_filters[*]:-all})" "$real"
[ "$real" = pass ] || failures=$((failures + 1))

for f in attention.cu async_pipeline.cuh; do
  [[ $f =~ $only ]] || continue
  n_sync=$(grep -c "__syncthreads();" "$scratch/orig/$f")
  for ((k = 0; k < n_sync; ++k)); do
    line=$(grep -n "__syncthreads();" "$scratch/orig/$f" | sed -n "$((k + 1))p" | cut -d: -f1)
    mutate "$f" "sync$k" "(lambda p: s[:p[$k]] + '/* removed */' + s[p[$k] + len('__syncthreads();'):])([i for i in range(len(s)) if s.startswith('__syncthreads();', i)])"
    n=$((n + 1))
    report "remove __syncthreads() at $f:$line" "$(run_suite "m$n" "$(filter_of "$f")")"
  done
done

# file|name|python expression on the file's text s
mutants=(
  "attention.cu|forward: key tiles kt < tiles_of(Tk) - 1|s.replace('for (int64_t kt = 0; kt < tiles_of(p.Tk); ++kt) {\n    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;  // uniform', 'for (int64_t kt = 0; kt < tiles_of(p.Tk) - 1; ++kt) {\n    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;  // uniform', 1)"
  "attention.cu|load_tile: rows row0 + r <= T (one row past the end)|s.replace('row0 + r < T_ ?', 'row0 + r <= T_ ?', 1)"
  "attention.cu|forward: writes rows i > Tq (one row past the end)|s.replace('if (i >= p.Tq) return;', 'if (i > p.Tq) return;', 1)"
  "attention.cu|dkdv: query tiles qt < tiles_of(Tq) - 1|s.replace('qt < tiles_of(p.Tq); ++qt', 'qt < tiles_of(p.Tq) - 1; ++qt', 1)"
  "async_pipeline.cuh|cp_async_wait<STAGES> (one group too many in flight)|s.replace('cp_async_wait<STAGES - 1>();', 'cp_async_wait<STAGES>();', 1)"
  "async_pipeline.cuh|final cp_async_wait<0> removed|s.replace('  cp_async_wait<0>();\n}', '}', 1)"
  "async_pipeline.cuh|next tile issued into the stage being computed|s.replace('issue((stage + STAGES - 1) % STAGES, to_load);', 'issue(stage, to_load);', 1)"
  "async_pipeline.cuh|load_rows_async: rows row0 + r <= T (one row past the end)|s.replace('if (row0 + r < T)', 'if (row0 + r <= T)', 1)"
  "attention_mma.cu|forward: key tiles (Tk / 64, the partial tile dropped)|s.replace('(p.Tk + kKeyTile - 1) / kKeyTile,', 'p.Tk / kKeyTile,', 1)"
  "attention_mma.cu|dq: key tiles (Tk / 64, the partial tile dropped)|(lambda i: s[:i] + s[i:].replace('(p.Tk + kKeyTile - 1) / kKeyTile,', 'p.Tk / kKeyTile,', 1))(s.index('attention_mma_dq_kernel('))"
  "attention_mma.cu|dkdv: query tiles (Tq / QT, the partial tile dropped)|s.replace('(p.Tq + QT - 1) / QT,', 'p.Tq / QT,', 1)"
  "attention_rows.cuh|forward epilogue: writes rows i > Tq (one row past the end)|s.replace('if (i >= p.Tq) continue;', 'if (i > p.Tq) continue;', 1)"
  "attention_rows.cuh|span_summary: its last 32-token summary left out|s.replace('(first + count) / kAttnTile < n ? (first + count) / kAttnTile : n', '(first + count) / kAttnTile - 1 < n ? (first + count) / kAttnTile - 1 : n', 1)"
  "attention_rows.cuh|key_tile_allowed: every key tile loaded (no skipping)|s.replace('return tiles_may_attend(p.mask, q_span, span_summary(p.k_tiles, kt * KEY_TILE, KEY_TILE, p.Tk));', 'return kt >= 0;', 1)"
  "attention_mma.cu|dkdv: every query tile loaded (no skipping)|s.replace('return tiles_may_attend(p.mask, span_summary(p.q_tiles, qt * QT, QT, p.Tq), k_span);', 'return qt >= 0;', 1)"
  "attention_wgmma.cu|key tiles (Tk / 64, the partial tile dropped)|s.replace('(p.Tk + kTileRows - 1) / kTileRows}', 'p.Tk / kTileRows}', 1)"
  "attention_wgmma.cu|wgmma_fence() before O += P·V removed|s.replace('    wgmma_fence();  // o was rescaled by the softmax\n', '', 1)"
  "attention_wgmma.cu|a warpgroup's first S read one group early (wgmma_wait<1> with no P·V held)|s.replace('    } else {\n      wgmma_wait<0>();\n      corrections = to_p();', '    } else {\n      wgmma_wait<1>();\n      corrections = to_p();', 1)"
  "attention_wgmma.cu|overlap: S_j+1 read before it retired (wgmma_wait<2> after P_j·V_j is issued)|s.replace('      issue_held();\n      wgmma_wait<1>();', '      issue_held();\n      wgmma_wait<2>();', 1)"
  "attention_wgmma.cu|overlap: P_j·V_j not retired before its stage is released and o rescaled (wgmma_wait<1>)|s.replace('      corrections = to_p();\n      wgmma_wait<0>();', '      corrections = to_p();\n      wgmma_wait<1>();', 1)"
  "attention_wgmma.cu|overlap: tile j's stage released one tile early (at the end of its own iteration, before P_j·V_j)|s.replace('    ring.release(held_stage);\n', '', 1).replace('    held_stage = s;\n  });', '    held_stage = s;\n    ring.release(s);\n  });', 1)"
  "attention_wgmma.cu|overlap: a skipped tile does not retire the held one first|s.replace('    if (!attend) retire_held();\n', '', 1)"
  "attention_wgmma.cu|wgmma_wait<0> removed where a held P·V is retired (the last tile's, or before a skipped tile)|s.replace('    issue_held();\n    wgmma_wait<0>();\n    release_held();\n', '    issue_held();\n    release_held();\n', 1)"
  "attention_wgmma.cu|a warpgroup reads tiles only the other one's rows may attend (own-span skip removed)|s.replace('const bool attend = tiles.allowed(own_span, kt);', 'const bool attend = kt >= 0;', 1)"
  "attention_wgmma.cu|a warpgroup passes the ping-pong turn on only for the tiles it skips|s.replace('    mbarrier_arrive(&turn[1 - g]);\n    const TokenIndex* kj', '    const TokenIndex* kj', 1)"
  "attention_wgmma_ring.cuh|consumers read a stage without waiting for its full mbarrier|s.replace('    mbarrier_wait(&ring.full[s], ring.parity(use));\n', '', 1)"
  "attention_wgmma_ring.cuh|consumer warps never release a stage (empty arrival removed)|s.replace('before the warp releases it\n    if (threadIdx.x % 32 == 0) mbarrier_arrive(&empty[s]);', 'before the warp releases it', 1)"
  "attention_wgmma_ring.cuh|producer refills a stage without waiting for its release|s.replace('    mbarrier_wait(&ring.empty[s], ring.parity(use) ^ 1u);\n', '', 1)"
  "attention_wgmma_ring.cuh|full mbarrier expects one streamed tile too few (the last lands late)|s.replace('mbarrier_arrive_expect_tx(&ring.full[s], Layout::kStreamed * Layout::kTileBytes);', 'mbarrier_arrive_expect_tx(&ring.full[s], (Layout::kStreamed - 1) * Layout::kTileBytes);', 1)"
  "attention_wgmma_ring.cuh|full mbarrier expects one streamed tile too many|s.replace('mbarrier_arrive_expect_tx(&ring.full[s], Layout::kStreamed * Layout::kTileBytes);', 'mbarrier_arrive_expect_tx(&ring.full[s], (Layout::kStreamed + 1) * Layout::kTileBytes);', 1)"
  "attention_wgmma_ring.cuh|resident mbarrier expects one tile too few|s.replace('mbarrier_arrive_expect_tx(ring.resident, RESIDENT * kGroups * Layout::kTileBytes);', 'mbarrier_arrive_expect_tx(ring.resident, (RESIDENT * kGroups - 1) * Layout::kTileBytes);', 1)"
  "attention_wgmma_ring.cuh|consumers read the resident tiles without waiting for their mbarrier|s.replace('  mbarrier_wait(ring.resident, 0);\n', '', 1)"
  "attention_wgmma_ring.cuh|K-major descriptor: LBO and SBO swapped|s.replace('wgmma_descriptor(tile + 2 * kk * kChunkBytes, kChunkBytes, kCoreBytes)', 'wgmma_descriptor(tile + 2 * kk * kChunkBytes, kCoreBytes, kChunkBytes)', 1)"
  "attention_wgmma_ring.cuh|N-major descriptor: core matrices along K 256 bytes apart|s.replace('wgmma_descriptor(tile + 2 * kk * kCoreBytes, kCoreBytes, kChunkBytes)', 'wgmma_descriptor(tile + 2 * kk * kCoreBytes, 2 * kCoreBytes, kChunkBytes)', 1)"
  "attention_wgmma_ring.cuh|query tiles: every one loaded and read (dK/dV tile skipping removed)|s.replace(': query_tile_allowed<kTileRows>(p, rows_span, t);', ': t >= 0;', 1)"
  "attention_wgmma_backward.cu|dq: key tiles (Tk / 64, the partial tile dropped)|s.replace('(p.Tk + kTileRows - 1) / kTileRows}', 'p.Tk / kTileRows}', 1)"
  "attention_wgmma_backward.cu|dkdv: query tiles (Tq / 64, the partial tile dropped)|s.replace('(p.Tq + kTileRows - 1) / kTileRows}', 'p.Tq / kTileRows}', 1)"
  "attention_wgmma_backward.cu|dq: S and dP read one group early (wgmma_wait<1>)|s.replace('wgmma_wait<0>();\n    wgmma_fence_operand(sc);', 'wgmma_wait<1>();\n    wgmma_fence_operand(sc);', 1)"
  "attention_wgmma_backward.cu|dkdv: Sᵀ and dPᵀ read one group early (wgmma_wait<1>)|s.replace('wgmma_wait<0>();\n    wgmma_fence_operand(st);', 'wgmma_wait<1>();\n    wgmma_fence_operand(st);', 1)"
  "attention_wgmma_backward.cu|dq: wgmma_fence() before dQ += dS·K removed|s.replace('    wgmma_fence();\n    wgmma_fence_operand(acc);\n', '    wgmma_fence_operand(acc);\n', 1)"
  "attention_wgmma_backward.cu|dkdv: wgmma_fence() before dV += Pᵀ·dO removed|s.replace('    wgmma_fence();\n    wgmma_fence_operand(dv_acc);\n', '    wgmma_fence_operand(dv_acc);\n', 1)"
  "attention_wgmma_backward.cu|dq: wgmma_wait<0> after dQ += dS·K removed|s.replace('    issue_pb<HD>(acc, ds, k_s);\n    wgmma_commit();\n    wgmma_wait<0>();\n', '    issue_pb<HD>(acc, ds, k_s);\n    wgmma_commit();\n', 1)"
  "attention_wgmma_backward.cu|dkdv: wgmma_wait<0> after dV, dK removed (stage released in flight)|s.replace('    else\n      wgmma_wait<0>();\n', '', 1)"
  "attention_wgmma_backward.cu|dq: a warpgroup reads key tiles only the other one's rows may attend|s.replace('    if (!tiles.allowed(own_span, kt)) return;  // uniform per warpgroup\n', '', 1)"
  "attention_wgmma_backward.cu|dkdv: a warpgroup reads query tiles only the other one's keys may attend|s.replace('if (!attends[g]) {', 'if (false) {', 1)"
  "attention_wgmma_backward.cu|atomic dq: dS read before the other warpgroup wrote its half (mbarrier wait removed)|s.replace('  mbarrier_wait(written, unsigned(dq_use >> 1 & 1));\n', '', 1)"
  "attention_wgmma_backward.cu|atomic dq: one dS buffer (written while the other warpgroup's dQ may read it)|s.replace('L::scratch(base) + int(dq_use & 1) * kDsBytes', 'L::scratch(base)', 1)"
  "attention_wgmma_backward.cu|atomic dq: dS of a warpgroup stored over the other's half|s.replace('(8 * g + 2 * (threadIdx.x / 32 % 4)) * kChunkBytes', '(2 * (threadIdx.x / 32 % 4)) * kChunkBytes', 1)"
  "attention_wgmma_backward.cu|atomic dq: the keys of a warpgroup that skips the tile in dS·K|s.replace('const int first = attends[0] ? 0 : kGroupRows / 16, last = attends[1] ? kBlockRows / 16 : kGroupRows / 16;', 'const int first = 0, last = kBlockRows / 16;', 1)"
  "attention_wgmma_backward.cu|atomic dq: a warpgroup's half added at the other's columns|s.replace('int64_t(h) * HD + g * (HD / 2), lane,', 'int64_t(h) * HD + (1 - g) * (HD / 2), lane,', 1)"
  "attention_wgmma_backward.cu|atomic dq: wgmma_fence() before dQ = dS·K removed|s.replace('  wgmma_fence();\n#pragma unroll\n  for (int kk = 0; kk < kBlockRows / 16;', '#pragma unroll\n  for (int kk = 0; kk < kBlockRows / 16;', 1)"
  "attention_wgmma_backward.cu|atomic dq: dQ read in flight (its wgmma_wait<0> removed)|s.replace('  wgmma_commit();\n  wgmma_wait<0>();\n  wgmma_fence_operand(dq);\n', '  wgmma_commit();\n  wgmma_fence_operand(dq);\n', 1)"
  "attention_wgmma_backward.cu|atomic dq: a warpgroup that skips the tile forms no dQ half|s.replace('if (attends[1 - g]) add_dq(attends, qt);', 'if (false) add_dq(attends, qt);', 1)"
  "mma_tiles.cuh|P as A operand: a[1] and a[2] swapped|s.replace('pack_bf16x2(acc[2 * kk][2], acc[2 * kk][3]),\n          pack_bf16x2(acc[2 * kk + 1][0], acc[2 * kk + 1][1]),', 'pack_bf16x2(acc[2 * kk + 1][0], acc[2 * kk + 1][1]),\n          pack_bf16x2(acc[2 * kk][2], acc[2 * kk][3]),', 1)"
  "mma_tiles.cuh|A fragment: ldmatrix row/column halves swapped|s.replace('ldmatrix_x4(af, a + ((i % 2) * 8 + r) * STRIDE + kk * 16 + (i / 2) * 8);', 'ldmatrix_x4(af, a + ((i / 2) * 8 + r) * STRIDE + kk * 16 + (i % 2) * 8);', 1)"
  "mma_tiles.cuh|accumulator element column 8n + 2t + e / 2 instead of e % 2|s.replace('8 * n + 2 * (lane % 4) + e % 2', '8 * n + 2 * (lane % 4) + e / 2', 1)"
  "norm_modulate.cu|row blocks: a thread's vectors k·blockDim elements apart, not k·blockDim vectors (vectors overlap)|s.replace('return (int(threadIdx.x) + k * int(blockDim.x)) * V;', 'return int(threadIdx.x) * V + k * int(blockDim.x);', 1)"
  "norm_modulate.cu|forward: the last vector of the row left out (c + V >= C skipped)|(lambda i: s[:i].replace('if (c >= C) continue;', 'if (c + V >= C) continue;') + s[i:])(s.index('norm_modulate_backward_kernel'))"
  "norm_modulate.cu|fused residual: the gate ignored (x += r)|s.replace('(a.gate ? g[k][j] : 1.0f) * rv[k][j]', 'rv[k][j]', 1)"
  "norm_modulate.cu|fused residual: updated x not stored|s.replace('      store_vector<V>(xi + c, v[k]);\n', '', 1)"
  "norm_modulate.cu|row blocks: one warp too few (the row's last vectors on no thread)|s.replace('const int threads = ((vectors + K - 1) / K + 31) / 32 * 32;', 'const int threads = ((vectors + K - 1) / K + 31) / 32 * 32 - 32;', 1)"
  "norm_modulate.cu|forward: scale and shift of a thread's first vector only (k = 0)|s.replace('    if (a.scale) {\n      load_vector<V>(a.scale', '    if (a.scale && k == 0) {\n      load_vector<V>(a.scale', 1)"
  "norm_modulate.cu|backward: dx pass leaves out the last vector (c + V >= C skipped)|(lambda i: s[:i] + s[i:].replace('if (c >= C) continue;', 'if (c + V >= C) continue;', 1))(s.index('if (!a.dx) return;'))"
  "norm_modulate.cu|backward: mean(g) term dropped|s.replace('a.layer ? block_sum(g_sum, scratch) / C : 0.0f', '0.0f * block_sum(g_sum, scratch)', 1)"
  "norm_modulate.cu|backward: dx's old value not loaded (overwritten, not accumulated)|s.replace('    if (a.dx) load_vector<V>(a.dx + i * C + c, dx[k]);\n', '', 1)"
  "norm_modulate.cu|backward: scale of a thread's first vector only (k = 0)|s.replace('if (a.scale) load_vector<V>(a.scale + i * a.ld_mod + c, sc[k]);', 'if (a.scale && k == 0) load_vector<V>(a.scale + i * a.ld_mod + c, sc[k]);', 1)"
  "norm_modulate.cu|dweight: scale at row stride C instead of ld_mod|s.replace('load_vector<V>(scale + i * ld_mod + c, sc);', 'load_vector<V>(scale + i * C + c, sc);', 1)"
  "column_sum.cuh|each chunk but the last leaves out its last row|s.replace('first + chunk_rows < N ? first + chunk_rows : N;', 'first + chunk_rows < N ? first + chunk_rows - 1 : N;', 1)"
  "column_sum.cuh|unrolled rows up to the chunk end inclusive (a row counted in two chunks)|s.replace('i + u * kColumnSumThreadRows < end', 'i + u * kColumnSumThreadRows <= end')"
  "column_sum.cuh|the last, shorter chunk dropped (chunk count rounded down)|s.replace('int(std::max<int64_t>(1, (N + chunk_rows - 1) / chunk_rows))', 'int(std::max<int64_t>(1, N / chunk_rows))', 1)"
  "column_sum.cuh|second pass leaves out the last chunk|s.replace('k < chunks; k += kChunkSumRows', 'k < chunks - 1; k += kChunkSumRows', 1)"
  "column_sum.cuh|thread rows' partials summed without the barrier after they are written|s.replace('  __syncthreads();\n', '', 1)"
  "column_sum.cuh|a thread's vector at threadIdx.x columns, not threadIdx.x vectors (vectors overlap)|s.replace('const int c = tile_column + int(threadIdx.x) * V;', 'const int c = tile_column + int(threadIdx.x);', 1)"
  "column_sum.cuh|MatrixEntry takes vectors whatever its row stride|s.replace('rows_vectorizable<kWidth>(C, {ld}, {m})', 'rows_vectorizable<kWidth>(C, {}, {m})', 1)"
  "vector_access.cuh|rows_vectorizable ignores C % width (vector path on unaligned rows)|s.replace('if (C % V) return false;', '', 1)"
  "residual.cu|forward: the last vector left out (N*C/V - 1 vectors)|s.replace('const int64_t vectors = N * C / V;', 'const int64_t vectors = N * C / V - 1;', 1)"
  "residual.cu|backward: one vector past the end (N*C/V + 1 vectors)|(lambda i: s[:i] + s[i:].replace('const int64_t vectors = N * C / V;', 'const int64_t vectors = N * C / V + 1;', 1))(s.index('gated_residual_backward_kernel('))"
  "residual.cu|backward: dgate at row stride C instead of ld_gate|s.replace('load_vector<V>(dgate + i * ld_gate + c, acc);', 'load_vector<V>(dgate + i * C + c, acc);', 1).replace('store_vector<V>(dgate + i * ld_gate + c, acc);', 'store_vector<V>(dgate + i * C + c, acc);', 1)"
  "adamw.cu|scalar tail dropped|s.replace('  for (int64_t e = tail + first; e < t.n; e += stride) scalar(e);\n', '', 1)"
  "adamw.cu|scalar head dropped|s.replace('  for (int64_t e = first; e < head; e += stride) scalar(e);\n', '', 1)"
  "adamw.cu|one vector past the end ((n - head + V - 1) / V vectors)|s.replace('vectors = (t.n - head) / V,', 'vectors = (t.n - head + V - 1) / V,', 1)"
  "adamw.cu|vectors although the gradient's offset differs|s.replace('return aligned ? head : t.n;', 'return aligned || true ? head : t.n;', 1)"
  "blas.cu|cached plan keeps its first call's bias pointer|(lambda i: s[:i] + s[i:].replace('  if (ops.bias) set_matmul_attribute(p.descs.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, ops.bias, \"bias pointer\");\n', '', 1))(s.index('bool Blas::gemm('))"
  "linear.cu|GELU aux leading dimension m + 8|s.replace('s.aux_ld = aux ? m : 0;', 's.aux_ld = aux ? m + 8 : 0;', 1)"
  "linear.cu|BGRADA bias gradient not accumulated (db = 2 x the epilogue's)|s.replace('if (db_done) add(db, 0,', 'if (db_done) add(static_cast<const G*>(bias_grad), 0,', 1)"
)
for entry in "${mutants[@]}"; do
  f=${entry%%|*}
  rest=${entry#*|}
  name=${rest%%|*}
  [[ $f =~ $only ]] || continue
  mutate "$f" "$name" "${rest#*|}"
  n=$((n + 1))
  report "$f: $name" "$(run_suite "m$n" "$(filter_of "$f")")"
done
restore
echo "logs: $scratch"
exit $((failures > 0))
