// test-backend-ops (after ggml's tests/test-backend-ops.cpp): every Ops operation runs on CpuOps
// and on CudaOps with the same random inputs, forward and backward, and the CUDA results are
// compared with the CPU's. Backward gradients start from random values (they accumulate).
// Shapes include strided views (modulation chunks of a [N, 6C] tensor), index arrays with
// repeated rows, ragged packed batches with padding for every attention mask and head dims
// 8, 16, 48, 64, 128 (attention also on a CudaOps with the atomic dQ of run.deterministic = off).
//
// Tolerances are normwise, max|cuda − cpu| / max|cpu| per output:
//   fp32: 1e-6 for elementwise, row, norm, RoPE, loss and optimizer ops (the same fp32
//         formulas; only the order of a few sums and the math library differ), 1e-5 for the
//         GEMMs and attention (cuBLASLt's and the tiled kernel's summation order against
//         OpenBLAS'). Measured under the emulation: at most 3.3e-7 (attention), 0 for the
//         copies, interpolation, loss and AdamW.
//   bf16: CudaOps stores every data view in bf16 (math fp32) while CpuOps runs fp32 on the
//         same bf16-rounded inputs; the bound is the output rounding 2⁻⁸ = 3.9e-3 plus fp32
//         accumulation: 1e-2 (2e-2 for attention gradients, whose P·dS products round twice).
//         Measured under the emulation: at most 5.4e-3 (residual_norm_modulate's normed: a bf16
//         stream rounds x + gate·r, which the CPU keeps in fp32), 4.4e-3 for the linears.
//   bf16 + fp32 gradients and residual (model.precision = bf16 on CUDA): the ops with parameter
//         gradients or residual stream views run again with those fp32 beside bf16 data, held to
//         the bf16 bound. Measured under the emulation: bf16 outputs as above; the fp32
//         gradients and residual views at most 1.9e-7 where no bf16 value lies between them and
//         the inputs, 1.6e-3 behind a bf16 activation gradient (dW, db after gelu or silu).
// --log_level=message prints every output's error.
// The encoder ops (encoder_attention, rope_half, gated_activation) hold the same bounds; measured
// under the emulation: see the encoder_ops case.
// Runs where CudaOps has a device: under the CUDA emulation in CI (EMBTRAIN_CUDA=EMULATE) and
// on a GPU; a CUDA build on a machine without either reports the test as skipped.
#define BOOST_TEST_MODULE backend_ops
#include <boost/test/unit_test.hpp>
#include <cuda_runtime_api.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/activity.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#include "tests/kernels/cuda/packed_index.hpp"
#include "error_of.hpp"

using namespace emb;
using emb::test::error_of;

namespace {

struct CudaDevice {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    int n = 0;
    boost::test_tools::assertion_result present(cudaGetDeviceCount(&n) == cudaSuccess && n > 0);
    present.message() << "no CUDA device (and not the emulated build)";
    return present;
  }
};

// Both backends, made once; CUDA also with the Hopper attention's atomic dQ (run.deterministic =
// off), which the emulation runs too (it reports compute capability 9.0).
struct Backends {
  CpuOps cpu;
  CudaOps cuda;
  CudaOps cuda_atomic_dq{0, false};
};
Backends& backends() {
  static Backends b;
  return b;
}

float rounded(float x, DType t) { return t == DType::bf16 ? to_float(to_bf16(x)) : x; }

std::vector<float> random_values(size_t n, uint32_t seed, DType t, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = rounded(dist(gen), t);
  return v;
}

// A [rows, cols] matrix with row stride ld in one backend's memory, in dtype t.
class Buffer {
 public:
  Buffer(Ops& ops, const std::vector<float>& host, int64_t rows, int64_t cols, DType t, int64_t ld = 0)
      : ops_(ops), t_(t), rows_(rows), cols_(cols), ld_(ld ? ld : cols) {
    EMB_ASSERT(int64_t(host.size()) == rows_ * ld_);
    bytes_ = host.size() * dtype_size(t);
    data_ = ops.allocate(bytes_ ? bytes_ : 1);
    std::vector<char> raw(bytes_);
    for (size_t i = 0; i < host.size(); ++i) {
      if (t == DType::f32) {
        std::memcpy(raw.data() + 4 * i, &host[i], 4);
      } else {
        const bf16 h = to_bf16(host[i]);
        std::memcpy(raw.data() + 2 * i, &h.bits, 2);
      }
    }
    ops.upload(data_, raw.data(), bytes_);
  }
  ~Buffer() { ops_.deallocate(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  View view() const {
    View v;
    v.data = data_, v.dtype = t_, v.rows = rows_, v.cols = cols_, v.ld = ld_;
    return v;
  }
  std::vector<float> read() const {
    std::vector<char> raw(bytes_);
    ops_.download(raw.data(), data_, bytes_);
    std::vector<float> host(bytes_ / dtype_size(t_));
    for (size_t i = 0; i < host.size(); ++i) {
      if (t_ == DType::f32) {
        std::memcpy(&host[i], raw.data() + 4 * i, 4);
      } else {
        bf16 h;
        std::memcpy(&h.bits, raw.data() + 2 * i, 2);
        host[i] = to_float(h);
      }
    }
    return host;
  }

 private:
  Ops& ops_;
  DType t_;
  int64_t rows_, cols_, ld_;
  size_t bytes_ = 0;
  void* data_ = nullptr;
};

// int32 arrays in one backend's memory.
class Indices {
 public:
  Indices(Ops& ops, const std::vector<int32_t>& host) : ops_(ops), n_(int64_t(host.size())) {
    data_ = static_cast<int32_t*>(ops.allocate(host.size() * 4 + 4));
    ops.upload(data_, host.data(), host.size() * 4);
  }
  ~Indices() { ops_.deallocate(data_); }
  Indices(const Indices&) = delete;
  Indices& operator=(const Indices&) = delete;
  const int32_t* get() const { return data_; }
  RowIndex rows() const { return {data_, n_}; }

 private:
  Ops& ops_;
  int64_t n_;
  int32_t* data_ = nullptr;
};

using Outputs = std::vector<std::vector<float>>;
// One op case on a backend: inputs drawn with values rounded to `values`, data views stored as
// `storage`, parameter gradients as `gradients`, the residual stream as `residual` (the CPU gets
// fp32 storage with the same bf16-rounded values); returns the outputs.
struct Run {
  Ops& ops;
  DType storage, values, gradients, residual;
  std::vector<float> random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) const {
    return random_values(n, seed, values, lo, hi);
  }
  std::unique_ptr<Buffer> data(const std::vector<float>& host, int64_t rows, int64_t cols, int64_t ld = 0) const {
    return std::make_unique<Buffer>(ops, host, rows, cols, storage, ld);
  }
  // A parameter gradient (dW, db, a norm's dweight and dbias, column sums' out).
  std::unique_ptr<Buffer> gradient(const std::vector<float>& host, int64_t rows, int64_t cols) const {
    return std::make_unique<Buffer>(ops, host, rows, cols, gradients);
  }
  // A view of the residual stream (a norm's x and dx, a gated residual's x and dx, add_rows' dst).
  std::unique_ptr<Buffer> stream(const std::vector<float>& host, int64_t rows, int64_t cols, int64_t ld = 0) const {
    return std::make_unique<Buffer>(ops, host, rows, cols, residual, ld);
  }
  std::unique_ptr<Buffer> stats(const std::vector<float>& host, int64_t rows, int64_t cols) const {
    return std::make_unique<Buffer>(ops, host, rows, cols, DType::f32);
  }
  std::unique_ptr<Indices> index(const std::vector<int32_t>& host) const {
    return std::make_unique<Indices>(ops, host);
  }
};
using Case = std::function<Outputs(const Run& run)>;

double normwise_error(const std::vector<float>& got, const std::vector<float>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(ref[i])) return INFINITY;
    if (std::isinf(ref[i]) && got[i] == ref[i]) continue;  // lse of padding rows: −inf on both
    err = std::max(err, std::fabs(double(got[i]) - ref[i]));
    scale = std::max(scale, std::fabs(double(ref[i])));
  }
  return scale > 0 ? err / scale : err;
}

// fp32 tolerance, or the bf16 one.
struct Tol {
  double fp32, bf16;
};
constexpr Tol kPointwise{1e-6, 1e-2}, kGemm{1e-5, 1e-2}, kAttnGrad{1e-5, 2e-2};

// The CUDA storage of one comparison: data views, parameter gradients, the residual stream.
struct Precision {
  DType storage, gradients, residual;
  const char* name;
};
constexpr Precision kFp32{DType::f32, DType::f32, DType::f32, "f32"},
    kBf16{DType::bf16, DType::bf16, DType::bf16, "bf16"},
    kBf16Mixed{DType::bf16, DType::f32, DType::f32, "bf16 + f32 gradients and residual"};

// Runs the case on both backends in fp32 and bf16, and when the case has parameter gradients or
// residual stream views also as model.precision = bf16 runs it on CUDA (bf16 data, fp32
// gradients and residual stream), held to the bf16 bound; output o is held to tols[o] (or
// tols[0]).
void compare(const std::string& name, const std::vector<Tol>& tols, const Case& run_case, bool mixed_too = false,
             Ops& cuda = backends().cuda) {
  std::vector<Precision> precisions{kFp32, kBf16};
  if (mixed_too) precisions.push_back(kBf16Mixed);
  for (const Precision& p : precisions) {
    const Outputs ref = run_case(Run{backends().cpu, DType::f32, p.storage, DType::f32, DType::f32});
    const Outputs got = run_case(Run{cuda, p.storage, p.storage, p.gradients, p.residual});
    BOOST_TEST_REQUIRE(ref.size() == got.size());
    for (size_t o = 0; o < ref.size(); ++o) {
      const Tol& tol = tols[tols.size() == 1 ? 0 : o];
      const double bound = p.storage == DType::f32 ? tol.fp32 : tol.bf16;
      BOOST_TEST_REQUIRE(ref[o].size() == got[o].size());
      const double err = normwise_error(got[o], ref[o]);
      BOOST_TEST_MESSAGE(name << " " << p.name << " output " << o << ": error " << err);
      BOOST_TEST(err <= bound, name << " " << p.name << " output " << o << ": error " << err << " > " << bound);
    }
  }
}
constexpr bool kAlsoMixed = true;

}  // namespace

BOOST_AUTO_TEST_SUITE(backend_ops, *boost::unit_test::precondition(CudaDevice()))

BOOST_AUTO_TEST_CASE(elementwise_and_rows) {
  const int64_t N = 37, C = 50, ld = 64;
  compare("zero (strided)", {kPointwise}, [&](const Run& r) {
    auto y = r.data(r.random(N * ld, 1), N, C, ld);
    r.ops.zero(y->view());
    return Outputs{y->read()};
  });
  compare("copy (strided)", {kPointwise}, [&](const Run& r) {
    auto x = r.data(r.random(N * ld, 2), N, C, ld);
    auto y = r.data(r.random(N * C, 3), N, C);
    r.ops.copy(x->view(), y->view());
    return Outputs{y->read()};
  });
  compare("add", {kPointwise}, [&](const Run& r) {
    auto a = r.data(r.random(N * ld, 4), N, C, ld), b = r.data(r.random(N * C, 5), N, C);
    auto y = r.data(r.random(N * C, 6), N, C);
    r.ops.add(a->view(), b->view(), y->view());
    return Outputs{y->read()};
  });
  compare("add_bias", {kPointwise}, [&](const Run& r) {
    auto y = r.data(r.random(N * C, 7), N, C), b = r.data(r.random(C, 8), 1, C);
    r.ops.add_bias(y->view(), b->view());
    return Outputs{y->read()};
  });
  // Gather 20 rows in a shuffled order into a strided destination, then sum them back with
  // repeated destination rows (the backward of a gather).
  std::vector<int32_t> src_rows(20), dst_rows(20);
  for (int i = 0; i < 20; ++i) src_rows[i] = (i * 7) % int(N), dst_rows[i] = (i * 3) % 11;
  compare("copy_rows", {kPointwise}, [&](const Run& r) {
    auto src = r.data(r.random(N * C, 9), N, C), dst = r.data(r.random(N * ld, 10), N, C, ld);
    auto si = r.index(src_rows), di = r.index(dst_rows);
    r.ops.copy_rows(src->view(), si->rows(), dst->view(), di->rows());
    auto plain = r.data(r.random(N * C, 11), N, C);
    r.ops.copy_rows(src->view(), RowIndex{}, plain->view(), RowIndex{});
    return Outputs{dst->read(), plain->read()};
  });
  // The destination as a wide view: with bf16 block activations the blocks' gradients of the
  // conditioning and the context are summed into fp32 ones outside the blocks.
  compare(
      "add_rows (repeated destinations)", {kPointwise},
      [&](const Run& r) {
        auto src = r.data(r.random(N * C, 12), N, C), dst = r.stream(r.random(N * ld, 13), N, C, ld);
        auto si = r.index(src_rows), di = r.index(dst_rows);
        r.ops.add_rows(src->view(), si->rows(), dst->view(), di->rows());
        return Outputs{dst->read()};
      },
      kAlsoMixed);
  compare(
      "column_sums", {kPointwise},
      [&](const Run& r) {
        auto x = r.data(r.random(N * ld, 14), N, C, ld), out = r.gradient(r.random(C, 15), 1, C);
        r.ops.column_sums(x->view(), out->view());
        return Outputs{out->read()};
      },
      kAlsoMixed);
}

BOOST_AUTO_TEST_CASE(activations) {
  const int64_t N = 33, C = 70;
  for (Activation act : {Activation::relu, Activation::silu, Activation::gelu_tanh, Activation::gelu_erf}) {
    compare(str("activation ", int(act)), {kPointwise}, [&](const Run& r) {
      auto x = r.data(r.random(N * C, 20, -3, 3), N, C), y = r.data(r.random(N * C, 21), N, C);
      auto dy = r.data(r.random(N * C, 22), N, C), dx = r.data(r.random(N * C, 23), N, C);
      r.ops.activation_forward(act, x->view(), y->view());
      r.ops.activation_backward(act, x->view(), dy->view(), dx->view());
      return Outputs{y->read(), dx->read()};
    });
  }
}

namespace {

// A linear's operands and gradients (x [N, in], W [E·in, out], b [E, out], y, pre and dy
// [N, out], dx, dW, db), drawn from seeds seed .. seed + 8.
struct LinearBuffers {
  std::unique_ptr<Buffer> x, W, b, y, pre, dy, dx, dW, db;
  LinearBuffers(const Run& r, int64_t N, int64_t in, int64_t out, int64_t E, uint32_t seed)
      : x(r.data(r.random(N * in, seed), N, in)), W(r.data(r.random(E * in * out, seed + 1), E * in, out)),
        b(r.data(r.random(E * out, seed + 2), E, out)), y(r.data(r.random(N * out, seed + 3), N, out)),
        pre(r.data(r.random(N * out, seed + 4), N, out)), dy(r.data(r.random(N * out, seed + 5), N, out)),
        dx(r.data(r.random(N * in, seed + 6), N, in)),
        dW(r.gradient(r.random(E * in * out, seed + 7), E * in, out)),
        db(r.gradient(r.random(E * out, seed + 8), E, out)) {}
  // pre's view when the linear has an activation, else absent.
  View pre_of(Activation act) const { return act == Activation::none ? View{} : pre->view(); }
  Outputs read() const { return Outputs{y->read(), dx->read(), dW->read(), db->read()}; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(linears) {
  const int64_t N = 45, in = 40, out = 24;
  for (Activation act : {Activation::none, Activation::gelu_tanh, Activation::gelu_erf})
    for (bool bias : {true, false}) {
      compare(
          str("linear act ", int(act), " bias ", bias), {kGemm},
          [&](const Run& r) {
            const LinearBuffers l(r, N, in, out, 1, 30);
            r.ops.linear_forward(l.x->view(), l.W->view(), bias ? l.b->view() : View{}, act, l.pre_of(act),
                                 l.y->view());
            r.ops.linear_backward(l.x->view(), l.W->view(), act, l.pre_of(act), l.dy->view(), l.dx->view(),
                                  l.dW->view(), bias ? l.db->view() : View{});
            return l.read();
          },
          kAlsoMixed);
    }
  const int E = 3;
  std::vector<int32_t> ids(N);
  for (int64_t i = 0; i < N; ++i) ids[i] = int32_t((i * 5 + i / 7) % E);
  const EmbGrouping grouping = group_rows_by_embodiment(ids.data(), N, E);
  compare(
      "linear_emb silu", {kGemm},
      [&](const Run& r) {
        const LinearBuffers l(r, N, in, out, E, 40);
        auto id = r.index(ids), perm = r.index(grouping.perm);
        const EmbRows emb{id->get(), N, E, perm->get(), grouping.offsets.data()};
        r.ops.linear_emb_forward(l.x->view(), l.W->view(), l.b->view(), emb, Activation::silu, l.pre->view(),
                                 l.y->view());
        r.ops.linear_emb_backward(l.x->view(), l.W->view(), emb, Activation::silu, l.pre->view(), l.dy->view(),
                                  l.dx->view(), l.dW->view(), l.db->view());
        return l.read();
      },
      kAlsoMixed);
}

// The FP8 recipe: quantisation is bit-identical on both backends (fp8_quantize.hpp) and the GEMMs
// sum the same exact E4M3 products in fp32, so fp32 holds to the GEMM bound (measured under the
// emulation: at most 2.8e-6, dx behind gelu). In bf16, dx behind an activation is quantised from
// dpre = act'(pre)·dy already rounded to bf16, which moves some elements across an E4M3 rounding
// boundary (a step of 2⁻³ relative): 5e-2 (measured 1.8e-2); without an activation 4e-3.
// 45 rows take the padded path of kernels/cuda/fp8_linear.hpp (the GEMM needs a multiple of 4),
// 64 the direct one; in = 160 ends in a partial 128-wide block. Also as bf16 activations run it
// (model.precision = bf16 with model.fp8 = on): bf16 data, fp32 dW and db.
BOOST_AUTO_TEST_CASE(fp8_linears) {
  const int64_t in = 160, out = 48;
  const Tol fp8_dgrad{1e-5, 5e-2};
  for (int64_t N : {45, 64})
    for (Activation act : {Activation::none, Activation::gelu_tanh}) {
      compare(
          str("fp8_linear rows ", N, " act ", int(act)), {kGemm, fp8_dgrad, kGemm, kGemm},
          [&](const Run& r) {
            const LinearBuffers l(r, N, in, out, 1, 50);
            r.ops.fp8_linear_forward(l.x->view(), l.W->view(), l.b->view(), act, l.pre_of(act), l.y->view());
            r.ops.fp8_linear_backward(l.x->view(), l.W->view(), act, l.pre_of(act), l.dy->view(), l.dx->view(),
                                      l.dW->view(), l.db->view());
            return l.read();
          },
          kAlsoMixed);
    }
}

// The column sums' row split (column_sum.cuh): one row (one chunk), 333 rows (11 chunks, the last
// one shorter) at a C that is a multiple of every vector width (200) and one that is not (203):
// column_sums and the norms' backward (dx, dweight, dbias) against the CPU.
BOOST_AUTO_TEST_CASE(column_sums_split_rows) {
  for (const int64_t N : {1, 333})
    for (const int64_t C : {200, 203}) {
      compare(
          str("column_sums N ", N, " C ", C), {kPointwise},
          [&](const Run& r) {
            auto x = r.data(r.random(N * C, 80), N, C), out = r.gradient(r.random(C, 81), 1, C);
            r.ops.column_sums(x->view(), out->view());
            return Outputs{out->read()};
          },
          kAlsoMixed);
      compare(
          str("layernorm and rmsnorm backward N ", N, " C ", C), {kPointwise},
          [&](const Run& r) {
            auto x = r.stream(r.random(N * C, 82, -2, 2), N, C), w = r.data(r.random(C, 83), 1, C);
            auto b = r.data(r.random(C, 84), 1, C), y = r.data(r.random(N * C, 85), N, C);
            auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
            auto dy = r.data(r.random(N * C, 86), N, C), dx = r.stream(r.random(N * C, 90), N, C);
            auto dw = r.gradient(r.random(C, 87), 1, C), db = r.gradient(r.random(C, 88), 1, C);
            auto dw_rms = r.gradient(r.random(C, 89), 1, C);
            r.ops.layernorm_forward(x->view(), w->view(), b->view(), y->view(), mean->view(), rstd->view(), 1e-5f);
            r.ops.layernorm_backward(x->view(), w->view(), mean->view(), rstd->view(), dy->view(), dx->view(),
                                     dw->view(), db->view());
            r.ops.rmsnorm_forward(x->view(), w->view(), y->view(), rstd->view());
            r.ops.rmsnorm_backward(x->view(), w->view(), rstd->view(), dy->view(), dx->view(), dw_rms->view());
            return Outputs{dx->read(), dw->read(), db->read(), dw_rms->read()};
          },
          kAlsoMixed);
    }
}

BOOST_AUTO_TEST_CASE(norms_modulation_residual) {
  const int64_t N = 29, C = 96;
  // Affine at GR00T-N1.5's eps, plain at Wan's.
  for (bool affine : {true, false}) {
    const float eps = affine ? 1e-5f : 1e-6f;
    compare(
        str("layernorm affine ", affine), {kPointwise},
        [&](const Run& r) {
          auto x = r.stream(r.random(N * C, 50, -2, 2), N, C), w = r.data(r.random(C, 51), 1, C);
          auto b = r.data(r.random(C, 52), 1, C), y = r.data(r.random(N * C, 53), N, C);
          auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
          auto dy = r.data(r.random(N * C, 54), N, C), dx = r.stream(r.random(N * C, 55), N, C);
          auto dw = r.gradient(r.random(C, 56), 1, C), db = r.gradient(r.random(C, 57), 1, C);
          const View wv = affine ? w->view() : View{}, bv = affine ? b->view() : View{};
          r.ops.layernorm_forward(x->view(), wv, bv, y->view(), mean->view(), rstd->view(), eps);
          r.ops.layernorm_backward(x->view(), wv, mean->view(), rstd->view(), dy->view(), dx->view(),
                                   affine ? dw->view() : View{}, affine ? db->view() : View{});
          return Outputs{y->read(), mean->read(), rstd->read(), dx->read(), dw->read(), db->read()};
        },
        kAlsoMixed);
  }
  // CLIP's and Wan's img_emb LayerNorms: torch's eps 1e-5, on rows of a small variance where it matters.
  compare(
      "layernorm eps 1e-5", {kPointwise},
      [&](const Run& r) {
        auto x = r.stream(r.random(N * C, 58, -5e-3f, 5e-3f), N, C), w = r.data(r.random(C, 51), 1, C);
        auto b = r.data(r.random(C, 52), 1, C), y = r.data(r.random(N * C, 53), N, C);
        auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
        r.ops.layernorm_forward(x->view(), w->view(), b->view(), y->view(), mean->view(), rstd->view(), 1e-5f);
        return Outputs{y->read(), mean->read(), rstd->read()};
      });
  compare(
      "rmsnorm", {kPointwise},
      [&](const Run& r) {
        auto x = r.stream(r.random(N * C, 60, -2, 2), N, C), w = r.data(r.random(C, 61), 1, C);
        auto y = r.data(r.random(N * C, 62), N, C), rstd = r.stats(std::vector<float>(N), N, 1);
        auto dy = r.data(r.random(N * C, 63), N, C), dx = r.stream(r.random(N * C, 64), N, C);
        auto dw = r.gradient(r.random(C, 65), 1, C);
        r.ops.rmsnorm_forward(x->view(), w->view(), y->view(), rstd->view());
        r.ops.rmsnorm_backward(x->view(), w->view(), rstd->view(), dy->view(), dx->view(), dw->view());
        return Outputs{y->read(), rstd->read(), dx->read(), dw->read()};
      },
      kAlsoMixed);
  // scale, shift and gate are chunks of one [N, 6C] modulation tensor (row stride 6C).
  compare(
      "norm_modulate + gated_residual (strided chunks)", {kPointwise},
      [&](const Run& r) {
        auto x = r.stream(r.random(N * C, 70, -2, 2), N, C), mod = r.data(r.random(N * 6 * C, 71), N, 6 * C);
        auto dmod = r.data(r.random(N * 6 * C, 72), N, 6 * C);
        auto normed = r.data(r.random(N * C, 73), N, C), y = r.data(r.random(N * C, 74), N, C);
        auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
        auto dy = r.data(r.random(N * C, 75), N, C), dx = r.stream(r.random(N * C, 76), N, C);
        auto res = r.stream(r.random(N * C, 77), N, C), dres = r.stream(r.random(N * C, 78), N, C);
        const View m = mod->view(), dm = dmod->view();
        r.ops.norm_modulate_forward(x->view(), m.cols_range(C, C), m.cols_range(0, C), normed->view(), y->view(),
                                    mean->view(), rstd->view(), 1e-5f);
        r.ops.norm_modulate_backward(x->view(), normed->view(), m.cols_range(C, C), mean->view(), rstd->view(),
                                     dy->view(), dx->view(), dm.cols_range(C, C), dm.cols_range(0, C));
        r.ops.gated_residual_forward(res->view(), m.cols_range(2 * C, C), y->view());
        r.ops.gated_residual_backward(m.cols_range(2 * C, C), y->view(), dres->view(), dy->view(),
                                      dm.cols_range(2 * C, C));
        return Outputs{normed->read(), y->read(), mean->read(), rstd->read(), dx->read(), dmod->read(), res->read(),
                       dy->read()};
      },
      kAlsoMixed);
  // The fused sublayer boundary, with the gate (a chunk) and without, saving x_in and not; C 96
  // takes the CUDA kernel's vectors, C 99 its scalar path.
  for (const int64_t Cf : {C, C + 3})
    for (bool gated : {true, false})
      for (bool save_input : {true, false})
        compare(
            str("residual_norm_modulate C ", Cf, " gated ", gated, " x_in ", save_input), {kPointwise},
            [&](const Run& r) {
              auto x = r.stream(r.random(N * Cf, 80, -2, 2), N, Cf), mod = r.data(r.random(N * 6 * Cf, 81), N, 6 * Cf);
              auto res = r.data(r.random(N * Cf, 82), N, Cf), x_in = r.stream(r.random(N * Cf, 83), N, Cf);
              auto normed = r.data(r.random(N * Cf, 84), N, Cf), y = r.data(r.random(N * Cf, 85), N, Cf);
              auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
              const View m = mod->view();
              r.ops.residual_norm_modulate_forward(x->view(), gated ? m.cols_range(2 * Cf, Cf) : View{}, res->view(),
                                                   save_input ? x_in->view() : View{}, m.cols_range(Cf, Cf),
                                                   m.cols_range(0, Cf), normed->view(), y->view(), mean->view(),
                                                   rstd->view(), 1e-6f);
              return Outputs{x->read(), x_in->read(), normed->read(), y->read(), mean->read(), rstd->read()};
            },
            kAlsoMixed);
}

// residual_norm_modulate_forward is gated_residual_forward, copy and norm_modulate_forward in one
// op: on each backend, in each storage, the fused op and the three in a row give the same bits
// (each element of x is rounded to the stream's type once, before the statistics read it).
BOOST_AUTO_TEST_CASE(residual_norm_modulate_is_its_unfused_sequence) {
  const int64_t N = 13, C = 200;
  for (const Precision& p : {kFp32, kBf16, kBf16Mixed})
    for (Ops* ops : {static_cast<Ops*>(&backends().cpu), static_cast<Ops*>(&backends().cuda)}) {
      if (ops == &backends().cpu && p.storage != DType::f32) continue;
      const Run r{*ops, p.storage, p.storage, p.gradients, p.residual};
      std::vector<Outputs> runs;
      for (bool fused : {true, false}) {
        auto x = r.stream(r.random(N * C, 90, -2, 2), N, C), mod = r.data(r.random(N * 3 * C, 91), N, 3 * C);
        auto res = r.data(r.random(N * C, 92), N, C), x_in = r.stream(r.random(N * C, 93), N, C);
        auto normed = r.data(r.random(N * C, 94), N, C), y = r.data(r.random(N * C, 95), N, C);
        auto mean = r.stats(std::vector<float>(N), N, 1), rstd = r.stats(std::vector<float>(N), N, 1);
        const View m = mod->view(), gate = m.cols_range(2 * C, C), scale = m.cols_range(C, C),
                   shift = m.cols_range(0, C);
        if (fused) {
          ops->residual_norm_modulate_forward(x->view(), gate, res->view(), x_in->view(), scale, shift,
                                              normed->view(), y->view(), mean->view(), rstd->view(), 1e-5f);
        } else {
          ops->gated_residual_forward(x->view(), gate, res->view());
          ops->copy(x->view(), x_in->view());
          ops->norm_modulate_forward(x->view(), scale, shift, normed->view(), y->view(), mean->view(), rstd->view(),
                                     1e-5f);
        }
        runs.push_back(Outputs{x->read(), x_in->read(), normed->read(), y->read(), mean->read(), rstd->read()});
      }
      for (size_t o = 0; o < runs[0].size(); ++o)
        BOOST_TEST(std::memcmp(runs[0][o].data(), runs[1][o].data(), runs[0][o].size() * sizeof(float)) == 0,
                   ops->name() << " " << p.name << " output " << o << " differs from the unfused ops");
    }
}

// teacher_forcing on DreamZero's sequences (clean and noisy video, actions, states; windows that
// cut blocks), the other masks on clean/noisy blocks.
BOOST_AUTO_TEST_CASE(attention_every_mask_and_head_dim) {
  std::mt19937 rng(5);
  const cuda::testing::PackedIndex blocks = cuda::testing::random_packed_index(3, 3, 9, 17, 7, rng);
  const cuda::testing::PackedIndex dreamzero = cuda::testing::random_dreamzero_index(3, 3, 2, 1, 4, 17, 7, rng);
  const int H = 2;
  for (AttnMask mask : {AttnMask::full, AttnMask::block_causal, AttnMask::prefix, AttnMask::cross,
                        AttnMask::teacher_forcing})
    for (int hd : {8, 16, 48, 64, 72, 128})
      for (Ops* cuda : {static_cast<Ops*>(&backends().cuda), static_cast<Ops*>(&backends().cuda_atomic_dq)}) {
        const cuda::testing::PackedIndex& p = mask == AttnMask::teacher_forcing ? dreamzero : blocks;
        const int64_t Tq = int64_t(p.seq.size()), Tc = int64_t(p.cseq.size());
        const bool cross = mask == AttnMask::cross;
        const int64_t Tk = cross ? Tc : Tq, D = int64_t(H) * hd;
        const char* variant = cuda == &backends().cuda ? "" : " (atomic dq)";
        compare(str("attention ", attn_mask_name(mask), " hd ", hd, variant),
                {kGemm, kGemm, kAttnGrad, kAttnGrad, kAttnGrad}, [&](const Run& r) {
          auto seq = r.index(p.seq), blk = r.index(p.blk), grp = r.index(p.grp), cseq = r.index(p.cseq);
          AttnIndex idx;
          idx.mask = mask;
          idx.q_seq = seq->get(), idx.q_blk = blk->get(), idx.q_grp = grp->get();
          idx.k_seq = cross ? cseq->get() : seq->get();
          idx.k_blk = cross ? nullptr : blk->get(), idx.k_grp = cross ? nullptr : grp->get();
          idx.tf = p.tf;
          auto q = r.data(r.random(Tq * D, 80), Tq, D), k = r.data(r.random(Tk * D, 81), Tk, D);
          auto v = r.data(r.random(Tk * D, 82), Tk, D), out = r.data(std::vector<float>(Tq * D), Tq, D);
          auto lse = r.stats(std::vector<float>(Tq * H), Tq, H);
          auto dout = r.data(r.random(Tq * D, 83), Tq, D), dq = r.data(r.random(Tq * D, 84), Tq, D);
          auto dk = r.data(r.random(Tk * D, 85), Tk, D), dv = r.data(r.random(Tk * D, 86), Tk, D);
          const AttnConfig cfg{H, hd};
          r.ops.attention_forward(q->view(), k->view(), v->view(), out->view(), lse->view(), cfg, idx);
          r.ops.attention_backward(q->view(), k->view(), v->view(), out->view(), lse->view(), dout->view(), dq->view(),
                                   dk->view(), dv->view(), cfg, idx);
          return Outputs{out->read(), lse->read(), dq->read(), dk->read(), dv->read()};
        }, !kAlsoMixed, *cuda);
      }
}

// A row whose every allowed score overflows to -Inf (lr 1e6, init_std 1e10) is NaN on both
// backends, so it reaches train.nan_policy; it is not a row without an allowed key. fp32 runs
// CUDA's SIMT kernels, bf16 at hd 48 its tensor-core ones.
BOOST_AUTO_TEST_CASE(overflowing_attention_row_is_nan_on_both_backends) {
  const int64_t T = 6, row = 2;
  const std::vector<int32_t> seq(T, 0);
  for (const auto& [t, hd] : {std::pair{DType::f32, int64_t{16}}, std::pair{DType::bf16, int64_t{48}}}) {
    std::vector<float> q = random_values(T * hd, 21, t), k = random_values(T * hd, 22, t, 1.0f, 2.0f);
    for (int64_t d = 0; d < hd; ++d) q[size_t(row * hd + d)] = -FLT_MAX;  // every score of the row is -Inf
    for (Ops* ops : {static_cast<Ops*>(&backends().cpu), static_cast<Ops*>(&backends().cuda)}) {
      BOOST_TEST_CONTEXT(ops->name() << " " << dtype_name(t)) {
        const Run r{*ops, ops == &backends().cuda ? t : DType::f32, t, DType::f32, DType::f32};
        auto s = r.index(seq);
        AttnIndex idx;
        idx.q_seq = idx.k_seq = s->get();
        auto qb = r.data(q, T, hd), kb = r.data(k, T, hd), v = r.data(r.random(T * hd, 23), T, hd);
        auto out = r.data(std::vector<float>(T * hd), T, hd), lse = r.stats(std::vector<float>(T), T, 1);
        BOOST_TEST(error_of([&] {
                     ops->attention_forward(qb->view(), kb->view(), v->view(), out->view(), lse->view(),
                                            AttnConfig{1, int(hd)}, idx);
                     ops->check_deferred_errors();
                   }) == "");
        const std::vector<float> o = out->read(), l = lse->read();
        BOOST_TEST(std::isnan(l[size_t(row)]));
        BOOST_TEST(std::isnan(o[size_t(row * hd)]));
        BOOST_TEST(std::isfinite(l[0]));  // the other rows are untouched
        BOOST_TEST(std::isfinite(o[size_t((row + 1) * hd)]));
      }
    }
  }
}

// convert (the mixed-precision copies): fp32 → bf16 → fp32 gives the same bits on both backends,
// rounding to nearest even (ties included) and keeping ±Inf, signed zeros and NaN.
BOOST_AUTO_TEST_CASE(convert_rounds_the_same_on_both_backends) {
  std::vector<float> values = random_values(1000, 11, DType::f32, -3.0f, 3.0f);
  const uint32_t specials[] = {0x3f808000u /* a tie, rounds down to even */, 0x3f818000u /* a tie, rounds up */,
                               0x7f800000u, 0xff800000u, 0x80000000u, 0x7fc00000u, 0x00000001u /* denormal */};
  for (uint32_t bits : specials) {
    float f;
    std::memcpy(&f, &bits, 4);
    values.push_back(f);
  }
  const int64_t n = int64_t(values.size());
  std::vector<std::vector<float>> widened;
  for (Ops* ops : {static_cast<Ops*>(&backends().cpu), static_cast<Ops*>(&backends().cuda)}) {
    Buffer x(*ops, values, 1, n, DType::f32), y(*ops, std::vector<float>(size_t(n)), 1, n, DType::bf16),
        back(*ops, std::vector<float>(size_t(n)), 1, n, DType::f32);
    ops->convert(x.view(), y.view());
    ops->convert(y.view(), back.view());
    widened.push_back(back.read());
    BOOST_TEST(error_of([&] { ops->convert(x.view(), back.view().rows_range(0, 0)); }) != "");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(values[size_t(i)])) {  // NaN stays NaN (its payload is the backend's)
      BOOST_TEST((std::isnan(widened[0][size_t(i)]) && std::isnan(widened[1][size_t(i)])));
      continue;
    }
    uint32_t cpu_bits, cuda_bits, want_bits;
    const float want = to_float(to_bf16(values[size_t(i)]));
    std::memcpy(&cpu_bits, &widened[0][size_t(i)], 4), std::memcpy(&cuda_bits, &widened[1][size_t(i)], 4);
    std::memcpy(&want_bits, &want, 4);
    BOOST_TEST(cpu_bits == want_bits, "element " << i);
    BOOST_TEST(cuda_bits == want_bits, "element " << i);
  }
}

// A real query row without an allowed key (sample 1 lost its context) is the same one line on
// both backends: the CPU throws at the op; CUDA records it without synchronising and throws at
// the step's check_deferred_errors, once (the record starts over).
BOOST_AUTO_TEST_CASE(keyless_row_is_one_error_on_both_backends) {
  const std::vector<int32_t> seq = {0, 0, 0, 1, 1}, cseq = {0, 0, -1};
  const int64_t Tq = 5, Tk = 3, hd = 16;
  std::vector<std::string> errors;
  for (Ops* ops : {static_cast<Ops*>(&backends().cpu), static_cast<Ops*>(&backends().cuda)}) {
    const Run r{*ops, DType::f32, DType::f32, DType::f32, DType::f32};
    auto q_seq = r.index(seq), k_seq = r.index(cseq);
    AttnIndex idx;
    idx.mask = AttnMask::cross;
    idx.q_seq = q_seq->get(), idx.k_seq = k_seq->get();
    auto q = r.data(r.random(Tq * hd, 1), Tq, hd), kv = r.data(r.random(Tk * hd, 2), Tk, hd);
    auto out = r.data(std::vector<float>(Tq * hd), Tq, hd), lse = r.stats(std::vector<float>(Tq), Tq, 1);
    errors.push_back(error_of([&] {
      ops->attention_forward(q->view(), kv->view(), kv->view(), out->view(), lse->view(), AttnConfig{1, int(hd)}, idx);
      ops->check_deferred_errors();
    }));
    BOOST_TEST(error_of([&] { ops->check_deferred_errors(); }) == "");
  }
  BOOST_TEST(errors[0] == "attention: query token 3 (seq 1) has no allowed key under mask cross");
  BOOST_TEST(errors[1] == errors[0]);
}

BOOST_AUTO_TEST_CASE(rope_sinus_flow_loss) {
  const int64_t T = 41;
  std::vector<int32_t> pos(T * 3);
  for (int64_t i = 0; i < T; ++i) pos[i * 3] = int32_t(i % 9), pos[i * 3 + 1] = int32_t(i % 5), pos[i * 3 + 2] = int32_t(i % 7);
  for (RopeMode mode : {RopeMode::d1, RopeMode::d3})
    for (int hd : {8, 16, 48, 64, 128}) {
      compare(str("rope mode ", int(mode), " hd ", hd), {kPointwise}, [&](const Run& r) {
        const int H = 2;
        auto x = r.data(r.random(T * H * hd, 90), T, H * hd), dx = r.data(r.random(T * H * hd, 91), T, H * hd);
        auto p_dev = r.index(pos);
        const RopeConfig cfg{mode, H, hd};
        r.ops.rope_forward(x->view(), p_dev->get(), cfg);
        r.ops.rope_backward(dx->view(), p_dev->get(), cfg);
        return Outputs{x->read(), dx->read()};
      });
    }
  // DreamZero's sequence: video tokens in 3d, action and state tokens in 1d.
  std::vector<int32_t> token_modes(T);
  for (int64_t i = 0; i < T; ++i) token_modes[i] = int32_t(i % 3 == 0 ? RopeMode::d1 : RopeMode::d3);
  for (int hd : {8, 16, 128}) {
    compare(str("rope per-token modes hd ", hd), {kPointwise}, [&](const Run& r) {
      const int H = 2;
      auto x = r.data(r.random(T * H * hd, 90), T, H * hd), dx = r.data(r.random(T * H * hd, 91), T, H * hd);
      auto p_dev = r.index(pos), modes = r.index(token_modes);
      RopeConfig cfg{RopeMode::none, H, hd};
      cfg.token_modes = modes->get();
      r.ops.rope_forward(x->view(), p_dev->get(), cfg);
      r.ops.rope_backward(dx->view(), p_dev->get(), cfg);
      return Outputs{x->read(), dx->read()};
    });
  }
  for (const SinusConfig& cfg : {SinusConfig{true, 0}, SinusConfig{true, 1}, SinusConfig{false, 0}})
    compare(str("sinus_embedding cos_first ", cfg.cos_first, " shift ", cfg.freq_shift), {kPointwise},
            [&](const Run& r) {
              auto t = r.stats(random_values(T, 92, DType::f32, 0.0f, 1000.0f), T, 1);
              auto out = r.data(std::vector<float>(T * 64), T, 64);
              r.ops.sinus_embedding(t->view(), out->view(), cfg);
              return Outputs{out->read()};
            });
  // A timestep as the sum of two floats (the angles in double from the sum).
  compare("sinus_embedding t [T, 2]", {kPointwise}, [&](const Run& r) {
    std::vector<float> t_host = random_values(T * 2, 93, DType::f32, 0.0f, 1000.0f);
    for (int64_t i = 0; i < T; ++i) t_host[i * 2 + 1] *= 1e-7f;
    auto t = r.stats(t_host, T, 2);
    auto out = r.data(std::vector<float>(T * 64), T, 64);
    r.ops.sinus_embedding(t->view(), out->view(), SinusConfig{});
    return Outputs{out->read()};
  });
  const int64_t M = 6, C = 24, Ct = 32;
  std::vector<int32_t> src_rows(T), t_rows(T), tgt_cols(C);
  for (int64_t i = 0; i < T; ++i) src_rows[i] = int32_t((i * 3) % T), t_rows[i] = int32_t(i % M);
  for (int64_t c = 0; c < C; ++c) tgt_cols[c] = int32_t((c * 5) % Ct);
  compare("flow_interpolate", {kPointwise}, [&](const Run& r) {
    auto u = r.data(r.random(T * C, 93), T, C), w = r.data(r.random(T * C, 94), T, C);
    auto t = r.stats(random_values(M, 95, r.values, 0.0f, 1.0f), M, 1), y = r.data(r.random(T * C, 96), T, C);
    auto si = r.index(src_rows), ti = r.index(t_rows);
    r.ops.flow_interpolate(u->view(), w->view(), si->rows(), t->view(), ti->rows(), y->view());
    return Outputs{y->read()};
  });
  // Strided: the latent columns of DreamZero's [latents | y] rows (u and y) and a narrower w.
  compare("flow_interpolate (strided)", {kPointwise}, [&](const Run& r) {
    const int64_t ld = C + 9;
    auto u = r.data(r.random(T * ld, 93), T, C, ld), w = r.data(r.random(T * C, 94), T, C);
    auto t = r.stats(random_values(M, 95, r.values, 0.0f, 1.0f), M, 1), y = r.data(r.random(T * ld, 96), T, C, ld);
    auto si = r.index(src_rows), ti = r.index(t_rows);
    r.ops.flow_interpolate(u->view(), w->view(), si->rows(), t->view(), ti->rows(), y->view());
    return Outputs{y->read()};
  });
  for (bool masked : {true, false})
    for (bool weighted : {true, false}) {
      compare(str("mse_loss mask ", masked, " row weights ", weighted), {kPointwise}, [&](const Run& r) {
        auto pred = r.data(r.random(T * C, 97), T, C), plus = r.data(r.random(M * Ct, 98), M, Ct);
        auto minus = r.data(r.random(M * Ct, 99), M, Ct), dpred = r.data(r.random(T * C, 100), T, C);
        std::vector<float> mask_host(M * Ct);
        for (size_t e = 0; e < mask_host.size(); ++e) mask_host[e] = float((e * 7) % 3 != 0);
        auto mask = r.data(mask_host, M, Ct);
        auto tr = r.index(t_rows), tc = r.index(tgt_cols);
        auto row_weight = r.stats(random_values(T, 101, DType::f32, 0.0f, 2.0f), T, 1);
        auto* sum = static_cast<double*>(r.ops.allocate(sizeof(double)));
        r.ops.mse_loss(pred->view(), plus->view(), minus->view(), masked ? mask->view() : View{}, tr->rows(),
                       tc->rows(), LossConfig{123.0, 0.5, weighted ? row_weight->view() : View{}}, dpred->view(), sum);
        double host_sum = 0;
        r.ops.download(&host_sum, sum, sizeof(double));
        r.ops.deallocate(sum);
        return Outputs{dpred->read(), {float(host_sum)}};
      });
    }
}

// Dropout over packed rows (three samples in shuffled token order, padding rows) draws the same
// keep-mask on both backends: the forward out of place and in place, the backward accumulating.
// C 50 starts rows inside a Philox block of four, C 64 on one. Exact in fp32 (one product each).
BOOST_AUTO_TEST_CASE(dropout_same_mask_on_both_backends) {
  const std::vector<int32_t> seq = {2, 0, 0, -1, 1, 2, 0, 1, -1, 2}, token = {1, 0, 2, 0, 0, 0, 1, 1, 0, 2};
  const std::vector<int64_t> ids = {5, 77, 100000};
  const int64_t N = int64_t(seq.size());
  for (const int64_t C : {50, 64})
    compare(str("dropout C ", C), {kPointwise}, [&](const Run& r) {
      auto s = r.index(seq), t = r.index(token);
      auto* id = static_cast<int64_t*>(r.ops.allocate(ids.size() * sizeof(int64_t)));
      r.ops.upload(id, ids.data(), ids.size() * sizeof(int64_t));
      const DropoutRows rows{s->get(), t->get(), id};
      const DropoutConfig cfg{0.2f, 1234, 17, 42};
      auto x = r.data(r.random(N * C, 120), N, C), y = r.data(r.random(N * C, 121), N, C);
      auto in_place = r.data(r.random(N * C, 120), N, C);
      auto dy = r.data(r.random(N * C, 122), N, C), dx = r.data(r.random(N * C, 123), N, C);
      r.ops.dropout_forward(x->view(), y->view(), cfg, rows);
      r.ops.dropout_forward(in_place->view(), in_place->view(), cfg, rows);
      r.ops.dropout_backward(dy->view(), dx->view(), cfg, rows);
      const Outputs out{y->read(), in_place->read(), dx->read()};
      r.ops.deallocate(id);
      return out;
    });
}

BOOST_AUTO_TEST_CASE(optimizer) {
  const int64_t n = 10007;
  compare("sum_squares", {kPointwise}, [&](const Run& r) {
    auto g = r.data(r.random(n, 110), 1, n);
    auto* out = static_cast<double*>(r.ops.allocate(sizeof(double)));
    r.ops.sum_squares(g->view(), out);
    double host = 0;
    r.ops.download(&host, out, sizeof(double));
    r.ops.deallocate(out);
    return Outputs{{float(host)}};
  });
  compare("adamw_step", {kPointwise}, [&](const Run& r) {
    auto param = r.stats(random_values(n, 111, DType::f32), 1, n), grad = r.data(r.random(n, 112), 1, n);
    auto m = r.stats(random_values(n, 113, DType::f32, -0.1f, 0.1f), 1, n);
    auto v = r.stats(random_values(n, 114, DType::f32, 0.0f, 0.01f), 1, n);
    AdamWConfig cfg;
    cfg.lr = 1e-2f, cfg.weight_decay = 0.1f;
    for (int64_t step = 1; step <= 3; ++step) r.ops.adamw_step(param->view(), grad->view(), m->view(), v->view(), cfg, step, 0.5f, 1.0f);
    return Outputs{param->read(), m->read(), v->read()};
  });
}

// Bad input is one line naming the op and the shapes, the same on both backends where both
// refuse it; a head dim CUDA does not build is refused by CUDA alone.
BOOST_AUTO_TEST_CASE(bad_input_is_a_clear_error) {
  for (Ops* ops : {static_cast<Ops*>(&backends().cpu), static_cast<Ops*>(&backends().cuda)}) {
    const Run r{*ops, DType::f32, DType::f32, DType::f32, DType::f32};
    auto x = r.data(r.random(8 * 16, 1), 8, 16), W = r.data(r.random(12 * 4, 2), 12, 4);
    auto y = r.data(r.random(8 * 4, 3), 8, 4);
    BOOST_TEST(error_of([&] { ops->linear_forward(x->view(), W->view(), View{}, Activation::none, View{}, y->view()); }) ==
               "linear_forward: W must be [in, out]; x [8, 16], W [12, 4], b absent, pre absent, y [8, 4]");
    auto W4 = r.data(r.random(16 * 4, 2), 16, 4);
    BOOST_TEST(error_of([&] {
                 ops->fp8_linear_forward(x->view(), W4->view(), View{}, Activation::none, View{}, y->view());
               }) == "fp8_linear_forward: the FP8 GEMM needs in and out multiples of 16; x [8, 16], W [16, 4], "
                     "b absent, pre absent, y [8, 4]");
    auto stat = r.stats(std::vector<float>(8), 8, 1);
    const View xv = x->view();
    BOOST_TEST(error_of([&] {
                 ops->residual_norm_modulate_forward(xv, View{}, y->view(), View{}, xv, xv, xv, xv, stat->view(),
                                                     stat->view(), 1e-6f);
               }) == "residual_norm_modulate_forward: x and r differ in shape; x [8, 16], gate absent, r [8, 4], "
                     "x_in absent, scale [8, 16], shift [8, 16], normed [8, 16], y [8, 16], mean [8, 1], rstd [8, 1]");
    const std::vector<int32_t> zeros(8, 0);
    auto seq = r.index(zeros);
    const DropoutRows rows{seq->get(), seq->get(), reinterpret_cast<const int64_t*>(seq->get())};
    BOOST_TEST(error_of([&] { ops->dropout_forward(xv, xv, DropoutConfig{1.0f, 0, 0, 0}, rows); }) ==
               "dropout_forward: the drop probability 1 must lie in [0, 1); x [8, 16], y [8, 16]");
    BOOST_TEST(error_of([&] { ops->dropout_backward(xv, y->view(), DropoutConfig{0.2f, 0, 0, 0}, rows); }) ==
               "dropout_backward: dy and dx differ in shape; dy [8, 16], dx [8, 4]");
  }
  const Run r{backends().cuda, DType::f32, DType::f32, DType::f32, DType::f32};
  std::vector<int32_t> seq(4, 0);
  auto s = r.index(seq);
  auto q = r.data(r.random(4 * 12, 4), 4, 12), lse = r.stats(std::vector<float>(4), 4, 1);
  AttnIndex idx;
  idx.q_seq = idx.k_seq = s->get();
  BOOST_TEST(error_of([&] {
               backends().cuda.attention_forward(q->view(), q->view(), q->view(), q->view(), lse->view(),
                                                 AttnConfig{1, 12}, idx);
             }) == "attention_forward: head_dim 12 is not built on CUDA (8, 16, 32, 48, 64, 72, 128); q [4, 12], "
                   "k [4, 12], v [4, 12], out [4, 12], lse [4, 1]");
  // Out of device memory is one line: what was asked, what is held (the scratch of the cases
  // above), what to change.
  const std::string oom = error_of([&] { backends().cuda.allocate(size_t(1) << 50); });
  BOOST_TEST(oom.rfind("CUDA out of memory: CudaOps::allocate asked for 1125899907 MB with ", 0) == 0, oom);
  BOOST_TEST(oom.find(" held by embtrain on this GPU; lower data.tokens_per_mb, set model.recompute = full or "
                      "train.shard = full, or use more GPUs (embtrain DECK --plan estimates the memory per GPU)") !=
                 std::string::npos,
             oom);
  // Inside a phase (the phase timers set it) and a labelled allocation, the line names both.
  set_current_phase("fwd", 12);
  {
    const ActivityLabel allocating("activations");
    const std::string in_phase = error_of([&] { backends().cuda.allocate(size_t(1) << 50); });
    BOOST_TEST(in_phase.rfind("CUDA out of memory in fwd of step 12: activations asked for 1125899907 MB with ", 0) == 0,
               in_phase);
  }
  set_current_phase(nullptr, -1);
  Buffer xb(backends().cuda, r.random(8 * 16, 5), 8, 16, DType::bf16), xf(backends().cuda, r.random(8 * 16, 6), 8, 16,
                                                                          DType::f32);
  BOOST_TEST(error_of([&] { backends().cuda.copy(xb.view(), xf.view()); }) ==
             "copy: the data views must share one dtype (fp32 or bf16) on CUDA; x [8, 16 bf16], y [8, 16]");
  // Parameter gradients and the residual stream may be fp32 beside bf16 data, not bf16 beside fp32.
  Buffer out_b(backends().cuda, r.random(16, 7), 1, 16, DType::bf16);
  BOOST_TEST(error_of([&] { backends().cuda.column_sums(xf.view(), out_b.view()); }) ==
             "column_sums: parameter gradients of dtype bf16 beside fp32 data are unsupported on CUDA (the data's "
             "dtype, or fp32 beside bf16); x [8, 16], out [1, 16 bf16]");
  BOOST_TEST(error_of([&] { backends().cuda.gated_residual_forward(xb.view(), View{}, xf.view()); }) ==
             "gated_residual_forward: residual stream views of dtype bf16 beside fp32 data are unsupported on CUDA "
             "(the data's dtype, or fp32 beside bf16); x [8, 16 bf16], gate absent, y [8, 16]");
}

// The frozen encoders' ops (issue 33): encoder attention at every head dim CUDA builds (SigLIP's
// 72, CLIP's 80, Qwen3's 128, the VAE's 384 and the tiny ones) over ragged segments, causal with
// grouped-query heads (Qwen3), bidirectional multi-head (SigLIP, CLIP, the VAE), unscaled with
// relative-position buckets (umT5) and a dense bias, q/k/v as strided chunks of one fused QKV
// output; the rotate-half RoPE; SwiGLU and gated GELU on strided gate | up halves; the per-head
// RMSNorm as rmsnorm on a [T·H, hd] view.
BOOST_AUTO_TEST_CASE(encoder_ops) {
  struct Shape {
    int Hq, Hkv, hd;
    bool causal;
    AttnBiasKind bias;
  };
  const std::vector<int64_t> offsets = {0, 37, 50, 83};  // segments of 37, 13 and 33 tokens
  const std::vector<int64_t> even = {0, 24, 48};          // a dense bias needs segments of one size
  const std::vector<int32_t> buckets = {0, 1, 2, 3, 4, 4, 5, 6, 7, 7, 7};
  const AttnBiasKind none = AttnBiasKind::none;
  for (const Shape& sh : {Shape{2, 2, 8, false, none}, Shape{4, 2, 16, true, none}, Shape{2, 1, 32, true, none},
                          Shape{2, 2, 64, false, AttnBiasKind::relative_buckets}, Shape{2, 2, 72, false, none},
                          Shape{2, 2, 80, false, AttnBiasKind::dense}, Shape{4, 2, 128, true, none},
                          Shape{1, 1, 384, false, none}, Shape{1, 1, 640, false, none}}) {
    const std::vector<int64_t>& off = sh.bias == AttnBiasKind::dense ? even : offsets;
    const int64_t T = off.back(), wq = sh.Hq * sh.hd, wk = sh.Hkv * sh.hd, ld = wq + 2 * wk;
    const int64_t n_buckets = 8, lq = off[1];
    compare(str("encoder_attention hq ", sh.Hq, " hkv ", sh.Hkv, " hd ", sh.hd, " causal ", sh.causal, " bias ",
                int(sh.bias)),
            {kGemm}, [&](const Run& r) {
              auto qkv = r.data(r.random(T * ld, 120, -2, 2), T, ld);
              auto out = r.data(std::vector<float>(T * wq), T, wq);
              auto lse = r.stats(std::vector<float>(T * sh.Hq), T, sh.Hq);
              auto dense = r.data(r.random(sh.Hq * lq * lq, 121), sh.Hq * lq, lq);
              auto table = r.data(r.random(sh.Hq * n_buckets, 122, -2, 2), sh.Hq, n_buckets);
              auto bucket_map = r.index(buckets);
              View bias;
              AttnBias kind;
              kind.kind = sh.bias;
              if (sh.bias == AttnBiasKind::dense) bias = dense->view();
              if (sh.bias == AttnBiasKind::relative_buckets) {
                bias = table->view();
                kind.buckets = bucket_map->get(), kind.n_rel = int(buckets.size()), kind.rel_zero = 5;
              }
              const View fused = qkv->view();
              const float scale = sh.bias == AttnBiasKind::relative_buckets ? 1.0f : 1.0f / std::sqrt(float(sh.hd));
              r.ops.encoder_attention_forward(fused.cols_range(0, wq), fused.cols_range(wq, wk),
                                              fused.cols_range(wq + wk, wk), bias, kind, out->view(), lse->view(),
                                              EncoderAttnConfig{sh.Hq, sh.Hkv, sh.hd, scale, sh.causal},
                                              AttnSegments{off.data(), nullptr, int(off.size()) - 1});
              return Outputs{out->read(), lse->read()};
            });
  }
  const int64_t T = 41;
  std::vector<int32_t> pos(T);
  for (int64_t i = 0; i < T; ++i) pos[size_t(i)] = int32_t(i * 37 % 1000);
  for (int hd : {16, 128}) {
    compare(str("rope_half hd ", hd), {kPointwise}, [&](const Run& r) {
      const int H = 3;
      auto x = r.data(r.random(T * H * hd, 123), T, H * hd), dx = r.data(r.random(T * H * hd, 124), T, H * hd);
      auto p = r.index(pos);
      const RopeHalfConfig cfg{H, hd, 1e6f};
      r.ops.rope_half_forward(x->view(), p->get(), cfg);
      r.ops.rope_half_backward(dx->view(), p->get(), cfg);
      return Outputs{x->read(), dx->read()};
    });
  }
  for (Activation act : {Activation::silu, Activation::gelu_tanh}) {
    compare(str("gated_activation ", int(act)), {kPointwise}, [&](const Run& r) {
      const int64_t N = 29, C = 45;
      auto gu = r.data(r.random(N * 2 * C, 125, -4, 4), N, 2 * C), y = r.data(r.random(N * C, 126), N, C);
      auto dy = r.data(r.random(N * C, 127), N, C), dgu = r.data(r.random(N * 2 * C, 128), N, 2 * C);
      const View g = gu->view().cols_range(0, C), u = gu->view().cols_range(C, C);
      r.ops.gated_activation_forward(act, g, u, y->view());
      r.ops.gated_activation_backward(act, g, u, dy->view(), dgu->view().cols_range(0, C),
                                      dgu->view().cols_range(C, C));
      return Outputs{y->read(), dgu->read()};
    });
  }
  // Frozen linears: each backend packs W its own way (the CPU's AVX-512 panels, CUDA's W as given).
  compare("packed_linear gelu", {kGemm}, [&](const Run& r) {
    const int64_t M = 37, K = 500, N = 70;
    auto x = r.data(r.random(M * K, 133), M, K), W = r.data(r.random(K * N, 134, -0.2f, 0.2f), K, N);
    auto b = r.data(r.random(N, 135), 1, N), pre = r.data(r.random(M * N, 136), M, N), y = r.data(r.random(M * N, 137), M, N);
    auto packed = r.data(std::vector<float>(size_t(r.ops.packed_linear_elements(K, N))), 1,
                         r.ops.packed_linear_elements(K, N));
    r.ops.pack_linear(W->view(), packed->view());
    r.ops.packed_linear_forward(x->view(), packed->view(), b->view(), Activation::gelu_tanh, pre->view(), y->view());
    return Outputs{y->read(), pre->read()};
  });
  compare("per-head rmsnorm (hd 128)", {kPointwise}, [&](const Run& r) {
    const int64_t H = 4, hd = 128;
    auto x = r.stream(r.random(T * H * hd, 129, -2, 2), T * H, hd), w = r.data(r.random(hd, 130), 1, hd);
    auto y = r.data(r.random(T * H * hd, 131), T * H, hd), rstd = r.stats(std::vector<float>(T * H), T * H, 1);
    r.ops.rmsnorm_forward(x->view(), w->view(), y->view(), rstd->view());
    return Outputs{y->read(), rstd->read()};
  });
  // A head dim CUDA does not build is one line naming the built ones.
  const Run r{backends().cuda, DType::f32, DType::f32, DType::f32, DType::f32};
  auto x = r.data(r.random(4 * 96, 132), 4, 96);
  const std::vector<int64_t> one = {0, 4};
  BOOST_TEST(error_of([&] {
               backends().cuda.encoder_attention_forward(x->view(), x->view(), x->view(), View{}, AttnBias{}, x->view(),
                                                         View{}, EncoderAttnConfig{1, 1, 96, 0.1f, false},
                                                         AttnSegments{one.data(), nullptr, 1});
             }) == "encoder_attention_forward: head_dim 96 is not built on CUDA (8, 16, 32, 64, 72, 80, 128, 384, 640); "
                   "q [4, 96], k [4, 96], v [4, 96], bias absent, out [4, 96], lse absent");
}

// The Wan VAE's and CLIP's video ops (issue 34): conv3d (and its packed form) on the SIMT kernel (fp32, and bf16 with
// 3 input channels: the VAE's conv1) and on tensor cores (bf16 with channels multiples of 8; a
// K of 27 steps of 32 runs the 3-stage pipeline, 240 output rows two row blocks, 24 output
// channels a partial column block), as the VAE's causal k3 over a batch of 2 clips, its stride-2
// Conv2d with (0, 1, 0, 1) padding and its temporal stride-2 conv; pixel_unshuffle as Wan2.2's
// patchify, AvgDown3D's average pooling with a zero frame in front and CLIP-style patch rows;
// bilinear and bicubic resizes, down and up; the channel RMS norm with and without SiLU, in place.
// Measured under the emulation: see --log_level=message.
BOOST_AUTO_TEST_CASE(video_ops) {
  struct Conv {
    int batch, T, H, W, kt, kh, kw, st, sh, sw, pad_front, pad_space, pad_after;
    int64_t Ci, Co;
    const char* what;
  };
  for (const Conv& k : {Conv{2, 3, 4, 5, 3, 3, 3, 1, 1, 1, 2, 1, 1, 16, 24, "causal k3"},
                        Conv{1, 2, 10, 12, 3, 3, 3, 1, 1, 1, 2, 1, 1, 32, 24, "causal k3, 27 k-steps"},
                        Conv{1, 2, 5, 6, 3, 3, 3, 1, 1, 1, 2, 1, 1, 3, 16, "causal k3 from 3 channels"},
                        Conv{1, 2, 6, 8, 1, 3, 3, 1, 2, 2, 0, 0, 1, 16, 16, "conv2d stride 2"},
                        Conv{1, 5, 3, 4, 3, 1, 1, 2, 1, 1, 0, 0, 0, 16, 16, "temporal stride 2"}}) {
    ConvConfig c;
    c.batch = k.batch, c.frames = k.T, c.height = k.H, c.width = k.W, c.kt = k.kt, c.kh = k.kh, c.kw = k.kw;
    c.st = k.st, c.sh = k.sh, c.sw = k.sw, c.pad_front = k.pad_front;
    c.pad_top = c.pad_left = k.pad_space, c.pad_bottom = c.pad_right = k.pad_after;
    // Also the frozen form: packed once per time tap (CPU: the packed micro-kernel's implicit
    // GEMM; CUDA: the weight itself, conv3d_forward).
    for (const bool frozen : {false, true})
      compare(str(frozen ? "packed_conv3d " : "conv3d ", k.what), {kGemm}, [&](const Run& r) {
        auto x = r.data(r.random(c.in_rows() * k.Ci, 140), c.in_rows(), k.Ci);
        auto w = r.data(r.random(c.taps() * k.Ci * k.Co, 141, -0.2f, 0.2f), c.taps() * k.Ci, k.Co);
        auto b = r.data(r.random(k.Co, 142), 1, k.Co);
        auto y = r.data(r.random(c.out_rows() * k.Co, 143), c.out_rows(), k.Co);
        if (!frozen) {
          r.ops.conv3d_forward(x->view(), w->view(), b->view(), y->view(), c);
          return Outputs{y->read()};
        }
        const int64_t elements = r.ops.packed_conv3d_elements(c.kt, int64_t(c.kh) * c.kw * k.Ci, k.Co);
        auto packed = r.data(std::vector<float>(size_t(elements)), 1, elements);
        r.ops.pack_conv3d(w->view(), c.kt, packed->view());
        r.ops.packed_conv3d_forward(x->view(), packed->view(), b->view(), y->view(), c);
        return Outputs{y->read()};
      });
  }
  struct Unshuffle {
    UnshuffleConfig u;
    int64_t C;
    const char* what;
  };
  for (const Unshuffle& k : {Unshuffle{{2, 2, 4, 6, 1, 2, 0, true, 1}, 3, "patchify"},
                             Unshuffle{{1, 5, 4, 4, 2, 2, 1, false, 4}, 8, "avg_down"},
                             Unshuffle{{1, 1, 14, 7, 1, 7, 0, false, 1}, 3, "patch rows"}}) {
    const UnshuffleConfig& u = k.u;
    const int64_t rows = int64_t(u.batch) * u.frames * u.height * u.width;
    const int64_t out_rows = int64_t(u.batch) * u.out_frames() * (u.height / u.fs) * (u.width / u.fs);
    const int64_t cols = k.C * u.ft * u.fs * u.fs / u.group;
    compare(str("pixel_unshuffle ", k.what), {kPointwise}, [&](const Run& r) {
      auto x = r.data(r.random(rows * k.C, 144), rows, k.C), y = r.data(r.random(out_rows * cols, 145), out_rows, cols);
      r.ops.pixel_unshuffle_forward(x->view(), y->view(), u);
      return Outputs{y->read()};
    });
  }
  for (Activation act : {Activation::none, Activation::silu})
    for (int64_t C : {16, 96, 640}) {
      compare(str("channel_rmsnorm act ", int(act), " C ", C), {kPointwise}, [&](const Run& r) {
        const int64_t N = 37;
        auto x = r.data(r.random(N * C, 148, -3, 3), N, C), g = r.data(r.random(C, 149, 0.5f, 1.5f), 1, C);
        r.ops.channel_rmsnorm_forward(x->view(), g->view(), act, x->view());
        return Outputs{x->read()};
      });
    }
}

BOOST_AUTO_TEST_SUITE_END()
