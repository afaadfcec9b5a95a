#include "model/image_embedding.hpp"

namespace emb {

void ImageEmbedding::add_params(ParamRegistry& reg, int d_clip, int D) {
  d_clip_ = d_clip, D_ = D;
  ln1_ = reg.add_layernorm("img_emb.ln1", d_clip);
  fc1_ = reg.add_linear("img_emb.fc1", d_clip, d_clip);
  fc2_ = reg.add_linear("img_emb.fc2", d_clip, D);
  ln2_ = reg.add_layernorm("img_emb.ln2", D);
}

void ImageEmbedding::plan(ActivationPlan& plan, int64_t rows) {
  for (float** p : {&ln1_out_, &fc1_pre_, &fc1_out_, &dfc1_out_, &dln1_out_}) *p = plan.floats(rows * d_clip_);
  for (float** p : {&fc2_out_, &dfc2_out_}) *p = plan.floats(rows * D_);
  for (float** p : {&mean1_, &rstd1_, &mean2_, &rstd2_}) *p = plan.floats(rows);
}

void ImageEmbedding::forward(Ops& ops, const ParamAccess& P, const View& clip, const View& out) {
  const int64_t N = clip.rows, Dc = d_clip_, D = D_;
  ops.layernorm_forward(clip, P.pv(ln1_.weight), P.pv(ln1_.bias), view(ln1_out_, N, Dc), view(mean1_, N, 1),
                        view(rstd1_, N, 1), kClipNormEps);
  ops.linear_forward(view(ln1_out_, N, Dc), P.pv(fc1_.weight), P.pv(fc1_.bias), Activation::gelu_erf,
                     view(fc1_pre_, N, Dc), view(fc1_out_, N, Dc));
  ops.linear_forward(view(fc1_out_, N, Dc), P.pv(fc2_.weight), P.pv(fc2_.bias), Activation::none, View{},
                     view(fc2_out_, N, D));
  ops.layernorm_forward(view(fc2_out_, N, D), P.pv(ln2_.weight), P.pv(ln2_.bias), out, view(mean2_, N, 1),
                        view(rstd2_, N, 1), kClipNormEps);
}

void ImageEmbedding::backward(Ops& ops, const ParamAccess& P, const View& clip, const View& dout) {
  const int64_t N = clip.rows, Dc = d_clip_, D = D_;
  const View dfc2_out = view(dfc2_out_, N, D), dfc1_out = view(dfc1_out_, N, Dc), dln1_out = view(dln1_out_, N, Dc);
  ops.zero(dfc2_out), ops.zero(dfc1_out), ops.zero(dln1_out);
  ops.layernorm_backward(view(fc2_out_, N, D), P.pv(ln2_.weight), view(mean2_, N, 1), view(rstd2_, N, 1), dout,
                         dfc2_out, P.gv(ln2_.weight), P.gv(ln2_.bias));
  ops.linear_backward(view(fc1_out_, N, Dc), P.pv(fc2_.weight), Activation::none, View{}, dfc2_out, dfc1_out,
                      P.gv(fc2_.weight), P.gv(fc2_.bias));
  ops.linear_backward(view(ln1_out_, N, Dc), P.pv(fc1_.weight), Activation::gelu_erf, view(fc1_pre_, N, Dc),
                      dfc1_out, dln1_out, P.gv(fc1_.weight), P.gv(fc1_.bias));
  ops.layernorm_backward(clip, P.pv(ln1_.weight), view(mean1_, N, 1), view(rstd1_, N, 1), dln1_out, View{},
                         P.gv(ln1_.weight), P.gv(ln1_.bias));
}

}  // namespace emb
