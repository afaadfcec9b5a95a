// Philox4x32-10 (Salmon et al. 2011) and the counter layout of core/rng.hpp's CounterRng, as
// plain inline functions that host code and CUDA kernels both compile: a draw a kernel makes on
// a GPU is bit for bit the draw the CPU backend makes for the same (seed, stream, a, b, i), which
// is what lets the two backends drop the same dropout elements (kernels/dropout_keep.hpp).
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define EMB_PHILOX_HD __host__ __device__
#else
#define EMB_PHILOX_HD
#endif

namespace emb::philox {

struct Block {
  uint32_t w[4];
};

// One Philox4x32-10 block: 4 random 32-bit words for a 128-bit counter and a 64-bit key.
EMB_PHILOX_HD inline Block block(Block c, uint64_t key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kMul0) * c.w[0], p1 = uint64_t(kMul1) * c.w[2];
    const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0), hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c = Block{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

// The counter of word i of CounterRng(seed, stream, a, b): the block holds words i & ~3 .. i | 3,
// so four consecutive words (i a multiple of 4) cost one block. Each (stream, a, b) has 2^58
// words; the stream takes the counter's low 8 bits of word 1.
EMB_PHILOX_HD inline Block counter(uint32_t stream, uint64_t a, uint64_t b, uint64_t i) {
  return Block{{uint32_t(i >> 2), stream ^ uint32_t(i >> 34) << 8, uint32_t(a) ^ uint32_t(b >> 32) * 0x85EBCA6Bu,
                uint32_t(b) ^ uint32_t(a >> 32) * 0xC2B2AE35u}};
}

// Word i of CounterRng(seed, stream, a, b).
EMB_PHILOX_HD inline uint32_t word(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b, uint64_t i) {
  return block(counter(stream, a, b, i), seed).w[i & 3];
}

}  // namespace emb::philox
