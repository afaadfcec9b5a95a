// Linear layers y = x W + b through CBLAS sgemm, W stored [in, out] (MODEL.md).
#pragma once
#include <cstdint>

namespace emb::cpu {

// y[N, out] += b[out] on every row (b may be null: nothing to add).
void add_bias(float* y, const float* b, int64_t N, int64_t out);
// y[N, out] = x[N, in] · W[in, out] + b[out]   (b may be null)
void linear_forward(const float* x, const float* W, const float* b, float* y, int64_t N, int in, int out);
// dx += dy · Wᵀ ; dW += xᵀ · dy ; db += Σ_rows dy   (any of dx, dW, db may be null)
void linear_backward(const float* x, const float* W, const float* dy, float* dx, float* dW, float* db,
                     int64_t N, int in, int out);

// Per-embodiment linear: row i uses W[emb[i]] [in, out] and b[emb[i]] [out].
// Rows are grouped by embodiment (stable order) so each group is one sgemm; the rows of a group
// are gathered into scratch (at most N·(in + out) floats, allocated per call) and scattered back.
// An id outside [0, E) throws emb::Error.
void linear_emb_forward(const float* x, const float* W, const float* b, const int32_t* emb, float* y,
                        int64_t N, int in, int out, int E);
void linear_emb_backward(const float* x, const float* W, const int32_t* emb, const float* dy, float* dx,
                         float* dW, float* db, int64_t N, int in, int out, int E);

}  // namespace emb::cpu
