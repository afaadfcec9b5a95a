// The storage and statistics rules of the CudaOps entries (op_entry.hpp).
#include "kernels/cuda/op_entry.hpp"

#include "core/error.hpp"

namespace emb::cuda::entry {

DType storage(const OpCheck& c, std::initializer_list<const View*> data) {
  const View* first = nullptr;
  for (const View* v : data) {
    if (v->absent()) continue;
    if (!first) first = v;
    c.expect(v->dtype == first->dtype, "the data views must share one dtype (fp32 or bf16) on CUDA");
  }
  c.expect(first != nullptr, "no data view is present");
  c.expect(first->dtype == DType::f32 || first->dtype == DType::bf16,
           "dtype ", dtype_name(first->dtype), " is unsupported on CUDA (fp32, bf16)");
  return first->dtype;
}

namespace {
// gradient_storage and residual_storage, `what` naming the views in the error.
DType wide_storage(const OpCheck& c, DType data, const char* what, std::initializer_list<const View*> views) {
  const View* first = nullptr;
  for (const View* v : views) {
    if (v->absent()) continue;
    if (!first) first = v;
    c.expect(v->dtype == first->dtype, "the ", what, " must share one dtype on CUDA");
  }
  if (!first) return data;
  c.expect(first->dtype == data || (data == DType::bf16 && first->dtype == DType::f32),
           what, " of dtype ", dtype_name(first->dtype), " beside ", dtype_name(data),
               " data are unsupported on CUDA (the data's dtype, or fp32 beside bf16)");
  return first->dtype;
}
}  // namespace

DType gradient_storage(const OpCheck& c, DType data, std::initializer_list<const View*> gradients) {
  return wide_storage(c, data, "parameter gradients", gradients);
}
DType residual_storage(const OpCheck& c, DType data, std::initializer_list<const View*> residual) {
  return wide_storage(c, data, "residual stream views", residual);
}

void fp32_views(const OpCheck& c, std::initializer_list<std::pair<const char*, const View*>> views) {
  for (const auto& [name, v] : views)
    if (!v->absent()) c.expect(v->dtype == DType::f32, name, " must be fp32 on CUDA, not ", dtype_name(v->dtype));
}

}  // namespace emb::cuda::entry
