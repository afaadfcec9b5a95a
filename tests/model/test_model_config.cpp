// Presets, deck overrides and their validation, and the --plan report.
#define BOOST_TEST_MODULE model_config
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "kernels/cpu/attention.hpp"
#include "model/model.hpp"
#include "plan/model_cost.hpp"
#include "app/run_config_from_deck.hpp"
#include "model/presets.hpp"
#include "model/synthetic_batch.hpp"

using namespace emb;

namespace {

// Writes a deck under this build's test folder in /tmp and returns its path.
std::string write_deck(const std::string& name, const std::string& model_lines) {
  std::filesystem::create_directories(EMBTRAIN_TEST_TMP);
  const std::string path = std::string(EMBTRAIN_TEST_TMP) + "/model_test_" + name + ".in";
  std::ofstream(path) << "[model]\n" << model_lines;
  return path;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_preset_is_valid) {
  for (const char* name :
       {"tiny_gr00t", "tiny_wan", "tiny_dreamzero", "gr00t_n1.5_3b", "dreamzero_14b_droid", "dreamzero_5b_droid",
        "dreamzero5b", "dreamzero14b"}) {
    const ModelConfig c = preset_config(name);
    BOOST_CHECK_NO_THROW(validate_model_config(c, name));
    BOOST_TEST(make_model(c, nullptr)->params().total() > 0);
  }
}

// The released GR00T-N1.5-3B action head: upstream's 314 action_head tensors and 1,068,806,144
// parameters (tests/upstream/test_references.py counts upstream's own).
BOOST_AUTO_TEST_CASE(gr00t_preset_is_the_release) {
  const ModelConfig c = preset_config("gr00t_n1.5_3b");
  const std::unique_ptr<Model> m = make_model(c, nullptr);
  BOOST_TEST(m->params().size() == 314);
  BOOST_TEST(m->params().total() == 1068806144);
  BOOST_TEST(m->params().get("pos_emb").shape[0] == 1024);  // max_seq_len rows
  BOOST_TEST(!m->params().contains("blocks.0.norm3.weight"));  // no affine in the DiT's norm3
  BOOST_TEST(m->dropout_sites().size() == size_t(4 * (4 + 16)));  // 80 masks per sample
}

// The released DreamZero 5B DROID and 14B DROID: upstream's DiT tensors and parameters
// (tests/upstream/dreamzero_reference.py's shapes of upstream_presets.py's configs), the CLIP
// context (img_emb and every block's k_img, v_img, norm_k_img) and the 14B's y channels included.
BOOST_AUTO_TEST_CASE(dreamzero_5b_preset_is_the_release) {
  const ModelConfig c = preset_config("dreamzero_5b_droid");
  const std::unique_ptr<Model> m = make_model(c, nullptr);
  BOOST_TEST(m->params().size() == 997);
  BOOST_TEST(m->params().total() == 5606692832);
  BOOST_TEST(m->params().get("state_enc.fc1.weight").shape[0] == 64);  // max_state_dim
  BOOST_TEST(m->params().get("img_emb.fc1.weight").shape[0] == 1280);  // CLIP ViT-H/14's width
}

BOOST_AUTO_TEST_CASE(dreamzero_14b_preset_is_the_release) {
  const ModelConfig c = preset_config("dreamzero_14b_droid");
  const std::unique_ptr<Model> m = make_model(c, nullptr);
  BOOST_TEST(m->params().size() == 1317);
  BOOST_TEST(m->params().total() == 16484292448);
  BOOST_TEST(m->params().get("patch_embed.weight").shape[0] == 36 * 4);  // upstream's in_dim 36, 2x2 patches
  BOOST_TEST(m->params().get("head.proj.weight").shape[1] == 16 * 4);    // out_dim 16
}

// gr00t's FFN width and output width follow d_model and d_hidden_enc (upstream's ties), and a
// deck that breaks a tie is refused naming the key.
BOOST_AUTO_TEST_CASE(gr00t_ties_follow_the_overrides) {
  const std::string path = write_deck("ties", "preset = tiny_gr00t\nd_model = 128\nd_hidden_enc = 48\n");
  const ModelConfig c = run_config_from_deck(load_deck(path)).model;
  BOOST_TEST(c.d_ff == 512);
  BOOST_TEST(c.d_out == 48);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(deck_overrides_replace_preset_values) {
  const std::string path = write_deck("override", "preset = tiny_wan\nd_model = 96\nn_heads = 2\npatch = 1, 1, 1\n");
  const ModelConfig c = run_config_from_deck(load_deck(path)).model;
  BOOST_TEST(c.d_model == 96);
  BOOST_TEST(c.n_heads == 2);
  BOOST_TEST(c.patch[1] == 1);
  BOOST_TEST(c.d_ff == preset_config("tiny_wan").d_ff);  // 0 keeps the preset value
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(bad_shapes_are_one_line_input_errors) {
  struct Case {
    const char* lines;
    const char* key;
  };
  // The message points at the deck line of the key the user wrote (line 3), also when the
  // check names another key that keeps its preset value.
  for (const Case& k : {Case{"preset = tiny_gr00t\nn_heads = 3\n", "model.n_heads"},
                        Case{"preset = tiny_gr00t\nd_model = 66\n", "model.n_heads"},
                        Case{"preset = tiny_wan\nn_heads = 16\n", "model.n_heads"},  // hd 4: 2 rotary pairs
                        Case{"preset = tiny_wan\nlatent_height = 5\n", "model.latent_height"},
                        Case{"preset = tiny_wan\npatch = 1, 3, 2\n", "model.latent_height"},
                        Case{"preset = tiny_gr00t\nn_heads_vl = 5\n", "model.n_heads_vl"},
                        Case{"preset = tiny_gr00t\nd_ff = 200\n", "model.d_ff"},
                        Case{"preset = tiny_gr00t\nd_out = 64\n", "model.d_out"},
                        Case{"preset = tiny_gr00t\nmax_seq_len = 4\n", "model.max_seq_len"},
                        Case{"preset = tiny_wan\ndropout = 0.1\n", "model.dropout"},
                        Case{"preset = tiny_wan\nout_channels = 8\n", "model.out_channels"}}) {
    const std::string path = write_deck("bad", k.lines);
    try {
      run_config_from_deck(load_deck(path)).model;
      BOOST_ERROR("no error for " << k.lines);
    } catch (const Error& e) {
      const std::string msg = e.what();
      BOOST_TEST(e.exit_code() == kExitInput);
      BOOST_TEST(msg.rfind(path + ":3: " + k.key + ": ", 0) == 0, msg);
      BOOST_TEST(msg.find('\n') == std::string::npos);
    }
    std::remove(path.c_str());
  }
}

// Upstream's backbone tuning flags: tune_llm is refused; tune_visual needs features the step
// computes (offline ones are fixed) and, for now, no CUDA graphs. One line naming the deck line,
// exit 2. Accepted, it is ModelConfig::tune_visual.
BOOST_AUTO_TEST_CASE(backbone_tuning_is_refused_in_one_line) {
  struct Case {
    const char* lines;
    const char* message;
  };
  for (const Case& k :
       {Case{"[train]\ntune_llm = on\n", "train.tune_llm = on: embtrain keeps the Eagle LLM frozen"},
        Case{"[train]\ntune_visual = on\n", "train.tune_visual = on needs model.backbone = online"},
        Case{"backbone = online\nbackbone_dir = /tmp/eagle\n[run]\ncuda_graphs = on\n[train]\ntune_visual = on\n",
             "train.tune_visual = on with run.cuda_graphs = on"}}) {
    const std::string path = write_deck("tuning", std::string("preset = tiny_gr00t\n") + k.lines);
    try {
      run_config_from_deck(load_deck(path));
      BOOST_ERROR("no error for " << k.lines);
    } catch (const Error& e) {
      const std::string msg = e.what();
      BOOST_TEST(e.exit_code() == kExitInput);
      BOOST_TEST(msg.rfind(path + ":", 0) == 0, msg);
      BOOST_TEST(msg.find(k.message) != std::string::npos, msg);
      BOOST_TEST(msg.find('\n') == std::string::npos);
    }
    std::remove(path.c_str());
  }
  const std::string path =
      write_deck("tuning", "preset = tiny_gr00t\nbackbone = online\nbackbone_dir = /tmp/eagle\n[train]\ntune_visual = on\n");
  BOOST_TEST(run_config_from_deck(load_deck(path)).model.tune_visual);
  std::remove(path.c_str());
}

// The big presets have the sizes their names promise, and the plan's GEMM FLOPs follow the
// 2·params·tokens rule of thumb (within what context-width layers and time embeddings add).
BOOST_AUTO_TEST_CASE(plan_of_the_large_presets) {
  const auto t0 = std::chrono::steady_clock::now();
  const PlanReport p14 = make_plan(preset_config("dreamzero14b"), 64, 32768);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(seconds < 2.0, "dreamzero14b plan took " << seconds << " s");
  BOOST_TEST(p14.n_params > 13.5e9);
  BOOST_TEST(p14.n_params < 15.0e9);
  const PlanReport p5 = make_plan(preset_config("dreamzero5b"), 8, 16384);
  BOOST_TEST(p5.n_params > 4.5e9);
  BOOST_TEST(p5.n_params < 5.5e9);
  for (const PlanReport* p : {&p14, &p5}) {
    const double ratio = p->gemm_flops_fwd / (2.0 * double(p->n_params) * double(p->tokens_per_sample));
    BOOST_TEST(ratio > 0.8, p->preset << " GEMM FLOPs / (2·N·tokens) = " << ratio);
    BOOST_TEST(ratio < 1.2, p->preset << " GEMM FLOPs / (2·N·tokens) = " << ratio);
    BOOST_TEST(p->self_pairs_per_sample < p->tokens_per_sample * p->tokens_per_sample);  // block causal
    BOOST_TEST(p->state_bytes[2] < p->state_bytes[1]);
    BOOST_TEST(p->state_bytes[1] < p->state_bytes[0]);
  }
}

// The activation estimate is the model's own arena layout: it grows linearly in the tokens.
BOOST_AUTO_TEST_CASE(activation_bytes_scale_with_tokens) {
  const ModelConfig cfg = preset_config("tiny_wan");
  std::unique_ptr<Model> m = make_model(cfg, nullptr);
  auto bytes = [&](int samples) {
    std::vector<int64_t> ids(static_cast<size_t>(samples));
    for (int i = 0; i < samples; ++i) ids[size_t(i)] = i;
    return double(m->activation_bytes(make_synthetic_batch(cfg, ids, true, 1), DType::f32).total);
  };
  const double one = bytes(4), two = bytes(8);
  BOOST_TEST(two / one > 1.9);
  BOOST_TEST(two / one < 2.1);
}

// The plan's class-wise pair count equals the attention kernel's own count, packed or padded.
BOOST_AUTO_TEST_CASE(flop_pair_counts_match_the_kernels) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan"}) {
    const ModelConfig cfg = preset_config(preset);
    for (bool packed : {true, false}) {
      const PackedBatch b = make_synthetic_batch(cfg, {0, 1, 2, 3}, packed, 11);
      const StepFlops f = batch_flops(cfg, b);
      const cpu::AttnMask mask = cfg.family == Family::wan ? cpu::AttnMask::block_causal : cpu::AttnMask::full;
      const cpu::AttnIndex self{mask,         b.seq.data(), b.blk.data(), b.grp.data(),
                                b.seq.data(), b.blk.data(), b.grp.data(), {}};
      const cpu::AttnIndex cross{cpu::AttnMask::cross, b.seq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr,
                                 {}};
      BOOST_TEST(f.self_pairs == cpu::attn_allowed_pairs(self, b.n_tokens, b.n_tokens), preset);
      BOOST_TEST(f.cross_pairs == cpu::attn_allowed_pairs(cross, b.n_tokens, b.n_context), preset);
      BOOST_TEST(f.fwd > f.gemm_fwd);
    }
  }
}

// data.prefetch = auto loads ahead on a thread where a GPU rank's node has spare cores, and on
// demand on CPU ranks, whose thread would share the rank's core; a number is kept on either.
BOOST_AUTO_TEST_CASE(prefetch_auto_loads_ahead_on_cuda_and_on_demand_on_cpu) {
  const std::string deck = "[model]\npreset = tiny_gr00t\n";
  BOOST_TEST(run_config_from_deck(load_deck_text(deck, "cpu.in")).data.prefetch == 0);
  BOOST_TEST(run_config_from_deck(load_deck_text(deck, "cuda.in", {"run.device=cuda"})).data.prefetch == 2);
  BOOST_TEST(run_config_from_deck(load_deck_text(deck, "cpu3.in", {"data.prefetch=3"})).data.prefetch == 3);
}
