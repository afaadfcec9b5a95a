// embpack: converts robot datasets to the packed HDF5 format embtrain reads (DATA.md).
//   embpack synth --family gr00t|wan --episodes N [...] -o out.h5
//   embpack libero SRC.hdf5... -o out.h5
//   embpack video VIDEO... --table steps.json|csv -o out.h5
//   embpack lerobot DIR... [--modality modality.json] [--embodiment-tag TAG] -o out.h5   (mpirun -np N for N ranks)
//   (lerobot and features also take --relative-actions KEYS [--relative-chunk N]: /stats/action_relative)
//   embpack features --backbone CHECKPOINT in.h5 -o out.h5         (mpirun -np N for N ranks)
//   embpack features --dreamzero CHECKPOINT in.h5 -o out.h5        (mpirun -np N for N ranks)
//   embpack info FILE | embpack verify FILE
// Errors are one line on stderr naming the file and the path inside it; exit code != 0.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/world.hpp"
#include "backbone_features.hpp"
#include "dreamzero_features.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/data_verify.hpp"
#include "data/packed_verify.hpp"
#include "info.hpp"
#include "lerobot.hpp"
#include "libero.hpp"
#include "packed_writer.hpp"
#include "relative_action_stats.hpp"
#include "synth.hpp"
#include "video.hpp"

namespace {

std::string command_line(int argc, char** argv) {
  std::string s = "embpack 1.0:";
  for (int i = 0; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

// The options every converter takes after its own: the file it writes and the progress bar.
void add_output_options(CLI::App* converter, std::string& out, bool& progress) {
  converter->add_option("-o,--output", out, "output .h5 file")->required();
  converter->add_flag("--progress", progress, "show a progress bar even when stderr is not a terminal");
}

// The statistics of DreamZero's relative actions (data.relative_action_keys) that lerobot and
// features write.
void add_relative_action_options(CLI::App* converter, emb::RelativeActionOptions& o) {
  converter->add_option("--relative-actions", o.keys,
                        "action sub-keys (of the modality attribute) to write /stats/action_relative for, e.g. "
                        "joint_position as DreamZero's DROID recipe (data.relative_action_keys)")
      ->delimiter(',');
  converter->add_option("--relative-chunk", o.chunk,
                        "--relative-actions: steps per relative chunk, the run's model.actions_per_block (default 24)");
}

// The converters of recorded data (not synth) compute vl features with a stand-in encoder.
void add_stand_in_encoder_options(CLI::App* converter, int& d_vl, int& vl_grid) {
  converter->add_option("--d-vl", d_vl, "vl feature dim (Dvl) of the stand-in encoder");
  converter->add_option("--vl-grid", vl_grid, "vl tokens per view = grid²");
}

// The converters that run under MPI (mpirun -np N, or alone as one rank): `convert` makes this
// rank's share and writes it (collectively); an error the ranks agreed on is printed once (by
// rank 0), any other by the rank that met it, and every rank exits with the highest code.
template <class Convert>
int run_parallel(Convert convert) {
  return emb::run_in_world("embpack", nullptr, nullptr, [&](const emb::World& world) {
    int code = 0;
    try {
      convert(world);
    } catch (const emb::Error& e) {
      if (world.rank == 0 || !dynamic_cast<const emb::AgreedError*>(&e)) std::cerr << "embpack: " << e.what() << "\n";
      code = e.exit_code();
    } catch (const std::exception& e) {
      std::cerr << "embpack: " << e.what() << "\n";
      code = emb::kExitFailure;
    }
    return int(emb::max_over_ranks(world.comm, int64_t(code)));
  });
}

int run_lerobot(const emb::LerobotOptions& o, const emb::RelativeActionOptions& relative, const std::string& out,
                const std::string& created_by) {
  return run_parallel([&](const emb::World& world) {
    emb::LerobotReport report;
    emb::PackedData share = emb::convert_lerobot(o, world.comm, report);
    emb::apply_relative_action_options(relative, share);
    if (world.rank == 0)
      for (const std::string& w : report.warnings) std::cerr << "embpack: warning: " << w << "\n";
    emb::write_packed(share, out, created_by, world.comm);
    if (world.rank == 0)
      std::printf("%s: %lld episodes, %lld steps, %lld frames decoded in %.2f s (%d rank(s) x %d thread(s)): "
                  "%.1f frames/s per core\n",
                  out.c_str(), (long long)report.episodes, (long long)report.steps, (long long)report.frames_decoded,
                  report.seconds, report.ranks, report.threads, report.frames_per_core_second());
  });
}

// The features commands' throughput: steps per second after loading the encoders.
double steps_per_second(int64_t steps, double seconds, double load_seconds) {
  return seconds > load_seconds ? double(steps) / (seconds - load_seconds) : 0.0;
}

int run_features(const emb::FeaturesOptions& o, const emb::RelativeActionOptions& relative, const std::string& out,
                 const std::string& created_by) {
  return run_parallel([&](const emb::World& world) {
    emb::FeaturesReport report;
    emb::PackedData share = emb::compute_backbone_features(o, world, report);
    emb::apply_relative_action_options(relative, share);
    emb::write_packed(share, out, created_by, world.comm);
    if (world.rank == 0)
      std::printf("%s: vl features of %lld steps (%lld tokens) by the backbone %s (%s, digest %s) in %.2f s on %d "
                  "rank(s), %s: %.2f steps/s (backbone load %.2f s)\n",
                  out.c_str(), (long long)report.steps, (long long)report.tokens, o.backbone.c_str(),
                  report.dims.c_str(), report.digest.c_str(), report.seconds, report.ranks, o.device.c_str(),
                  steps_per_second(report.steps, report.seconds, report.load_seconds), report.load_seconds);
  });
}

int run_dreamzero_features(const emb::DreamZeroFeaturesOptions& o, const emb::RelativeActionOptions& relative,
                           const std::string& out, const std::string& created_by) {
  return run_parallel([&](const emb::World& world) {
    emb::DreamZeroFeaturesReport report;
    emb::PackedData share = emb::compute_dreamzero_features(o, world, report);
    emb::apply_relative_action_options(relative, share);
    emb::write_packed(share, out, created_by, world.comm);
    if (world.rank == 0)
      std::printf("%s: DreamZero features of %lld steps (%lld latent frames, %lld text rows) by the encoders of %s "
                  "(%s; digest %s) in %.2f s on %d rank(s), %s: %.2f steps/s (encoders load %.2f s)\n",
                  out.c_str(), (long long)report.steps, (long long)report.latent_frames, (long long)report.text_rows,
                  o.checkpoint.c_str(), report.dims.c_str(), report.digest.c_str(), report.seconds, report.ranks,
                  o.device.c_str(),
                  steps_per_second(report.steps, report.seconds, report.load_seconds), report.load_seconds);
  });
}

// Every option of every converter, as parsed.
struct Options {
  std::string out, file;
  emb::SynthOptions synth;
  std::vector<std::string> libero_inputs;
  emb::LiberoOptions libero;
  emb::VideoOptions video;
  emb::LerobotOptions lerobot;
  emb::FeaturesOptions features;
  emb::DreamZeroFeaturesOptions dreamzero;
  emb::RelativeActionOptions relative;
};

struct Subcommands {
  CLI::App *synth, *libero, *video, *lerobot, *features, *info, *verify;
};

CLI::App* add_synth(CLI::App& app, Options& o) {
  emb::SynthOptions& so = o.synth;
  CLI::App* synth = app.add_subcommand("synth", "generate a synthetic dataset");
  synth->add_option("--family", so.family, "gr00t or wan")->required();
  synth->add_option("--episodes", so.episodes, "number of episodes")->required();
  synth->add_option("--seed", so.seed, "random seed");
  synth->add_option("--views", so.views, "maximum number of camera views (1..3)");
  synth->add_option("--min-steps", so.min_steps, "shortest episode");
  synth->add_option("--max-steps", so.max_steps, "longest episode");
  synth->add_option("--embodiments", so.embodiments, "number of embodiments");
  synth->add_option("--tasks", so.tasks, "number of distinct instructions");
  synth->add_option("--state-dim", so.state_dim, "state width of the widest embodiment");
  synth->add_option("--action-dim", so.action_dim, "action width of the widest embodiment");
  synth->add_option("--fps", so.fps, "steps per second");
  synth->add_option("--d-vl", so.d_vl, "gr00t: vl feature dim (Dvl)");
  synth->add_option("--vl-tokens-per-view", so.vl_tokens_per_view, "gr00t: vl tokens per camera view");
  synth->add_option("--d-txt", so.d_txt, "wan: text feature dim (Dtxt)");
  synth->add_option("--latent-channels", so.latent_channels, "wan: latent channels C");
  synth->add_option("--latent-height", so.latent_height, "wan: latent height Hl");
  synth->add_option("--latent-width", so.latent_width, "wan: latent width Wl");
  synth->add_option("--steps-per-latent", so.steps_per_latent, "wan: steps per latent frame");
  add_output_options(synth, o.out, so.progress);
  return synth;
}

// `embpack features --dreamzero`'s own options (the input, device, views and progress are shared
// with --backbone and copied over in run()).
void add_dreamzero_options(CLI::App* features, emb::DreamZeroFeaturesOptions& dz) {
  features->add_option("--dreamzero", dz.checkpoint,
                       "DreamZero's frozen encoders: a Wan2.1 checkpoint folder (Wan2.1_VAE, "
                       "models_t5_umt5-xxl-enc-bf16, models_clip_open-clip-xlm-roberta-large-vit-huge-14 as .pth or "
                       ".safetensors; google/umt5-xxl/spiece.model): VAE latents with the I2V y, CLIP and umT5 "
                       "features for DreamZero's layout");
  features->add_option("--vae", dz.files.vae, "--dreamzero: the VAE weights (default: the folder's)");
  features->add_option("--t5", dz.files.t5, "--dreamzero: the umT5 weights (default: the folder's)");
  features->add_option("--clip", dz.files.clip, "--dreamzero: the CLIP weights (default: the folder's)");
  features->add_option("--tokenizer", dz.files.tokenizer, "--dreamzero: umT5's spiece.model (default: the folder's)");
  features->add_option("--tiling", dz.tiling, "--dreamzero: the grid of views, RxC (default 2x2, RLinf's DROID)");
  features->add_option("--tile", dz.tile, "--dreamzero: each view's size in the grid, HxW (default 176x320)");
  features->add_option("--frames", dz.frames, "--dreamzero: frames T = 1 + 4k of each step's clip (default 33)");
  features->add_option("--frame-stride", dz.frame_stride, "--dreamzero: steps between a clip's frames (default 3: upstream's DROID)");
  features->add_option("--vae-chunk", dz.chunk_frames,
                       "--dreamzero: frames per VAE chunk after frame 0 (a multiple of 4; 0 = one pass)");
  features->add_option("--robot", dz.robot, "--dreamzero: DreamZero's prompt template (default oxe_droid)");
}

// `embpack features`: the gr00t vl features by GR00T-N1.5's Eagle backbone, or DreamZero's.
CLI::App* add_features(CLI::App& app, Options& o) {
  emb::FeaturesOptions& fo = o.features;
  CLI::App* features = app.add_subcommand(
      "features", "compute frozen-encoder features: --backbone (GR00T-N1.5's Eagle 2.5: replaces /features/vl) or "
                  "--dreamzero (DreamZero's VAE, umT5 and CLIP: a wan file in the DreamZero layout)");
  features->add_option("input", fo.input, "packed file with camera frames (/video/<view>)")->required();
  CLI::Option* backbone = features->add_option(
      "--backbone", fo.backbone, "GR00T-N1.5 checkpoint folder (backbone.eagle_model.* tensors and config.json)");
  add_dreamzero_options(features, o.dreamzero);
  backbone->excludes(features->get_option("--dreamzero"));
  features->add_option("--eagle", fo.eagle_folder,
                       "Isaac-GR00T's eagle2_hg_model folder: the Eagle config and tokenizer (default: "
                       "CHECKPOINT/eagle2_hg_model)");
  features->add_option("--device", fo.device, "cpu or cuda (one GPU per local rank)")->check(CLI::IsMember({"cpu", "cuda"}));
  features->add_option("--precision", fo.precision, "auto (cpu fp32, cuda bf16 as upstream deploys), fp32 or bf16");
  features->add_option("--views", fo.views, "the /video views in prompt (or tiling) order (default: the file's)")
      ->delimiter(',');
  features->add_option("--batch", fo.batch, "steps per backbone forward");
  features->add_option("--augment", fo.augment,
                       "also store K variants of every step's features under GR00T's training crop and colour "
                       "jitter (/features/vl_aug<k>; train with data.vl_augment = on)");
  features->add_option("--seed", fo.seed, "seed of the augmentations' draws");
  add_relative_action_options(features, o.relative);
  add_output_options(features, o.out, fo.progress);
  return features;
}

// The converters of recorded data: libero, video and lerobot; features; then info and verify.
Subcommands add_subcommands(CLI::App& app, Options& o) {
  Subcommands c{};
  c.synth = add_synth(app, o);
  c.libero = app.add_subcommand("libero", "convert robomimic/LIBERO HDF5 files");
  c.libero->add_option("inputs", o.libero_inputs, "source .hdf5 files")->required();
  c.libero->add_option("--fps", o.libero.fps, "steps per second of the demos");
  add_stand_in_encoder_options(c.libero, o.libero.d_vl, o.libero.vl_grid);
  add_output_options(c.libero, o.out, o.libero.progress);

  emb::VideoOptions& vo = o.video;
  c.video = app.add_subcommand("video", "decode videos aligned to a step table");
  c.video->add_option("inputs", vo.videos, "video files, one per view")->required();
  c.video->add_option("--table", vo.table, "steps table (.json or .csv) with one frame index per step and view")->required();
  c.video->add_option("--height", vo.height, "output frame height");
  c.video->add_option("--width", vo.width, "output frame width");
  c.video->add_option("--threads", vo.threads, "decoder threads");
  add_stand_in_encoder_options(c.video, vo.d_vl, vo.vl_grid);
  add_output_options(c.video, o.out, vo.progress);

  emb::LerobotOptions& ro = o.lerobot;
  c.lerobot = app.add_subcommand("lerobot", "convert LeRobot v2.1 / v3.0 datasets (Parquet + AV1/H.264 videos)");
  c.lerobot->add_option("inputs", ro.dirs, "dataset folders (holding meta/info.json)")->required();
  c.lerobot->add_option("--modality", ro.modality, "GR00T modality.json (default: each dataset's meta/modality.json)");
  c.lerobot->add_option("--state-keys", ro.keys.state,
                        "state sub-keys of modality.json to keep, in this order, as an upstream GR00T data config's "
                        "state_keys list them (fourier_gr1_arms_only: left_arm,right_arm,left_hand,right_hand; "
                        "default: all, in modality.json's order)")
      ->delimiter(',');
  c.lerobot->add_option("--action-keys", ro.keys.action,
                        "action sub-keys of modality.json to keep, in this order, as the config's action_keys")
      ->delimiter(',');
  c.lerobot->add_option("--embodiment-tag", ro.embodiment_tag,
                        "GR00T embodiment tag of the data (new_embodiment to fine-tune GR00T-N1.5; default: id 0)");
  c.lerobot->add_option("--height", ro.height, "output frame height");
  c.lerobot->add_option("--width", ro.width, "output frame width");
  c.lerobot->add_option("--threads", ro.threads, "decoding threads per rank");
  add_stand_in_encoder_options(c.lerobot, ro.d_vl, ro.vl_grid);
  add_relative_action_options(c.lerobot, o.relative);
  add_output_options(c.lerobot, o.out, ro.progress);

  c.features = add_features(app, o);
  c.info = app.add_subcommand("info", "summarise a packed file");
  c.info->add_option("file", o.file)->required();
  c.verify = app.add_subcommand(
      "verify", "check every invariant and value of a packed file; a clean file records the verify (data.verify)");
  c.verify->add_option("file", o.file)->required();
  return c;
}

int run(const Subcommands& c, const Options& o, const std::string& created_by) {
  if (*c.synth) {
    emb::write_packed(emb::synthesize(o.synth), o.out, created_by);
  } else if (*c.libero) {
    emb::write_packed(emb::convert_libero(o.libero_inputs, o.libero), o.out, created_by);
  } else if (*c.video) {
    emb::write_packed(emb::convert_video(o.video), o.out, created_by);
  } else if (*c.lerobot) {
    return run_lerobot(o.lerobot, o.relative, o.out, created_by);
  } else if (*c.features) {
    if (o.dreamzero.checkpoint.empty() == o.features.backbone.empty())
      throw emb::Error("features: give one of --backbone CHECKPOINT (gr00t) or --dreamzero CHECKPOINT (DreamZero)",
                       emb::kExitInput);
    if (o.features.backbone.empty()) {
      emb::DreamZeroFeaturesOptions dz = o.dreamzero;
      dz.input = o.features.input, dz.device = o.features.device, dz.views = o.features.views;
      dz.progress = o.features.progress;
      return run_dreamzero_features(dz, o.relative, o.out, created_by);
    }
    return run_features(o.features, o.relative, o.out, created_by);
  } else if (*c.info) {
    emb::print_info(o.file, std::cout);
  } else if (*c.verify) {
    // The small arrays, then every bulk value; a clean file records the verify (data.verify).
    emb::PackedSummary s = emb::verify_small_values(emb::H5File::open(o.file));
    emb::verify_data_files(MPI_COMM_NULL, {o.file}, emb::DataVerify::full);
    std::cout << o.file << ": ok (" << s.family << ", " << s.episodes << " episodes, " << s.steps << " steps)\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"embpack: packs robot datasets into embpack/1 HDF5 files for embtrain"};
  app.require_subcommand(1);
  Options o;
  const Subcommands c = add_subcommands(app, o);
  CLI11_PARSE(app, argc, argv);
  try {
    return run(c, o, command_line(argc, argv));
  } catch (const emb::Error& e) {
    std::cerr << "embpack: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "embpack: " << e.what() << "\n";
    return emb::kExitFailure;
  }
}
