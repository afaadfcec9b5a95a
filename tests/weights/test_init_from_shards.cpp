// Each rank reads only its ZeRO shard of a released checkpoint (issue 32, "Weights in and
// out": ZeRO-3 at 1024 ranks must not make every rank read the whole file). A tiny GR00T-N1.5
// checkpoint in upstream's names and layouts, plus a passthrough backbone tensor as large as
// the action head, is read by init_from on N ranks; every rank gets exactly its owned values,
// and counts the bytes it copied out of the mapping: about 1/N of the action head, never the
// backbone, and all ranks together read the action head about once.
#define BOOST_TEST_MODULE init_from_shards
#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "comm/world_fixture.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "parallel/shard_layout.hpp"
#include "train/freezing.hpp"
#include "train/init_from.hpp"
#include "weights/mapped_tensor.hpp"
#include "weights/safetensors_writer.hpp"
#include "weights/weights_test_util.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

constexpr const char* kBackbone = "backbone.eagle_model.stand_in.weight";

// model.safetensors: every parameter of reg (values `flat`) under its upstream name, layout and
// F32, and kBackbone holding as many F32 elements as all of them.
void write_checkpoint(const std::string& path, const ParamRegistry& reg, const UpstreamNameMap& map,
                      const std::vector<float>& flat) {
  std::vector<TensorSpec> specs{{kBackbone, WeightDType::F32, {reg.total()}}};
  std::vector<UpstreamTensor> upstream;
  for (const ParamInfo& p : reg.all()) {
    upstream.push_back(map.upstream_of(p.name, p.shape));
    specs.push_back({upstream.back().name, WeightDType::F32, upstream.back().shape});
  }
  SafetensorsWriter writer(path, specs, {{"format", "pt"}});
  std::vector<float> theirs;
  for (const TensorSpec& t : writer.order()) {
    if (t.name == kBackbone) {
      writer.write(flat.data(), reg.total());
      continue;
    }
    size_t i = 0;
    while (upstream[i].name != t.name) ++i;
    const ParamInfo& p = reg[int(i)];
    theirs.resize(size_t(p.numel));
    to_upstream_order(upstream[i], flat.data() + p.offset, theirs.data());
    writer.write(theirs.data(), p.numel);
  }
  writer.finish();
}

void check_reads_only_own_shards(ShardMode mode) {
  const World& world = test_world();
  const ModelConfig mc = preset_config("tiny_gr00t");
  const auto model = make_model(mc, nullptr);
  const ParamRegistry& reg = model->params();
  std::vector<float> flat(size_t(reg.total()));
  reg.init(flat.data(), 11, 0.02);
  test::ScratchDir scratch("init_from_shards");  // one per rank: its own copy of the file
  const std::string path = scratch.path() + "/model.safetensors";
  write_checkpoint(path, reg, upstream_map_of(mc), flat);

  const InitFrom init(path, upstream_map_of(mc), reg, "tiny_gr00t");
  const ShardLayout layout(reg, mode, world.rank, world.size);
  std::vector<float> owned(size_t(layout.owned_total())), expected(owned.size());
  init.read_owned(world.comm, reg, layout, owned.data());
  layout.gather_owned(flat.data(), expected.data());
  BOOST_TEST(owned == expected, boost::test_tools::per_element());

  const double head_bytes = double(reg.total()) * sizeof(float), mine = double(init.source().bytes_copied());
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, world.comm);
  BOOST_TEST_MESSAGE("rank " << world.rank << " of " << world.size << " (" << shard_mode_name(mode) << "): read "
                             << mine << " of the action head's " << head_bytes << " bytes; the file holds "
                             << 2 * head_bytes);
  // A transposed tensor split between ranks costs its reader up to one upstream row more.
  BOOST_TEST(mine <= 1.1 * head_bytes / world.size);
  BOOST_TEST(mine >= 0.9 * head_bytes / world.size);
  BOOST_TEST(all >= head_bytes);
  BOOST_TEST(all <= 1.1 * head_bytes);
}

}  // namespace

BOOST_AUTO_TEST_CASE(zero3_rank_reads_its_shards_only) { check_reads_only_own_shards(ShardMode::full); }

// Replicated parameters (DDP): each rank reads 1/N of every bucket and the ranks all-gather.
BOOST_AUTO_TEST_CASE(replicated_ranks_read_a_piece_each) { check_reads_only_own_shards(ShardMode::none); }

// What init_from reads and export writes rests on every parameter having an upstream name: each
// tiny preset's, the DreamZero layout's state encoder (upstream's [1, in, out] slot) and image
// conditioning included.
BOOST_AUTO_TEST_CASE(every_tiny_preset_parameter_has_an_upstream_name) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan", "tiny_dreamzero"}) {
    const ModelConfig mc = preset_config(preset);
    const auto model = make_model(mc, nullptr);
    const UpstreamNameMap map = upstream_map_of(mc);
    for (const ParamInfo& p : model->params().all())
      BOOST_CHECK_NO_THROW(map.upstream_of(p.name, p.shape));
  }
  const ModelConfig dz = preset_config("tiny_dreamzero");
  const auto model = make_model(dz, nullptr);
  const ParamInfo& fc1 = model->params().get("state_enc.fc1.weight");
  const UpstreamTensor up = upstream_map_of(dz).upstream_of(fc1.name, fc1.shape);
  BOOST_TEST(up.name == "action_head.model.state_encoder.layer1.W");
  BOOST_TEST(up.shape == (std::vector<int64_t>{1, fc1.shape[0], fc1.shape[1]}), boost::test_tools::per_element());
  // The image conditioning: the patch embedding over [latents | y] (upstream's in_dim = C + Cy),
  // img_emb's MLPProj and the I2V cross-attention's k_img under Wan's names and layouts.
  const auto upstream = [&](const char* name) {
    const ParamInfo& p = model->params().get(name);
    return upstream_map_of(dz).upstream_of(p.name, p.shape);
  };
  const UpstreamTensor patch = upstream("patch_embed.weight");
  BOOST_TEST(patch.shape == (std::vector<int64_t>{dz.d_model, dz.latent_channels + dz.cond_channels, 1, 2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(upstream("img_emb.ln1.weight").name == "action_head.model.img_emb.proj.0.weight");
  const UpstreamTensor fc2 = upstream("img_emb.fc2.weight");
  BOOST_TEST(fc2.name == "action_head.model.img_emb.proj.3.weight");
  BOOST_TEST(fc2.shape == (std::vector<int64_t>{dz.d_model, dz.d_clip}), boost::test_tools::per_element());
  BOOST_TEST(upstream("img_emb.ln2.bias").name == "action_head.model.img_emb.proj.4.bias");
  BOOST_TEST(upstream("blocks.1.attn2.k_img.weight").name == "action_head.model.blocks.1.cross_attn.k_img.weight");
  BOOST_TEST(upstream("blocks.0.attn2.norm_k_img.weight").name ==
             "action_head.model.blocks.0.cross_attn.norm_k_img.weight");
}
