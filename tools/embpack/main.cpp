// embpack: converts robot datasets to the packed HDF5 format embtrain reads (DATA.md).
//   embpack synth --family gr00t|wan --episodes N [...] -o out.h5
//   embpack libero SRC.hdf5... -o out.h5
//   embpack video VIDEO... --table steps.json|csv -o out.h5
//   embpack lerobot DIR... [--modality modality.json] -o out.h5   (mpirun -np N for N ranks)
//   embpack features --backbone CHECKPOINT in.h5 -o out.h5         (mpirun -np N for N ranks)
//   embpack info FILE | embpack verify FILE
// Errors are one line on stderr naming the file and the path inside it; exit code != 0.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cstdio>
#include <iostream>

#include "backbone_features.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_verify.hpp"
#include "info.hpp"
#include "lerobot.hpp"
#include "libero.hpp"
#include "packed_writer.hpp"
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

// The converters of recorded data (not synth) compute vl features with a stand-in encoder.
void add_stand_in_encoder_options(CLI::App* converter, int& d_vl, int& vl_grid) {
  converter->add_option("--d-vl", d_vl, "vl feature dim (Dvl) of the stand-in encoder");
  converter->add_option("--vl-grid", vl_grid, "vl tokens per view = grid²");
}

// The converters that run under MPI (mpirun -np N, or alone as one rank): `convert` makes this
// rank's share and writes it (collectively); an error is printed once (by the rank that met it)
// and every rank exits with the highest code.
template <class Convert>
int run_parallel(Convert convert) {
  MPI_Init(nullptr, nullptr);
  int code = 0;
  try {
    convert(MPI_COMM_WORLD);
  } catch (const emb::Error& e) {
    if (*e.what()) std::cerr << "embpack: " << e.what() << "\n";  // empty: another rank reported it
    code = e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "embpack: " << e.what() << "\n";
    code = emb::kExitFailure;
  }
  MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int run_lerobot(const emb::LerobotOptions& o, const std::string& out, const std::string& created_by) {
  return run_parallel([&](MPI_Comm comm) {
    emb::LerobotReport report;
    emb::PackedData share = emb::convert_lerobot(o, comm, report);
    if (rank_of(comm) == 0)
      for (const std::string& w : report.warnings) std::cerr << "embpack: warning: " << w << "\n";
    emb::write_packed(share, out, created_by, comm);
    if (rank_of(comm) == 0)
      std::printf("%s: %lld episodes, %lld steps, %lld frames decoded in %.2f s (%d rank(s) x %d thread(s)): "
                  "%.1f frames/s per core\n",
                  out.c_str(), (long long)report.episodes, (long long)report.steps, (long long)report.frames_decoded,
                  report.seconds, report.ranks, report.threads, report.frames_per_core_second());
  });
}

int run_features(const emb::FeaturesOptions& o, const std::string& out, const std::string& created_by) {
  return run_parallel([&](MPI_Comm comm) {
    emb::FeaturesReport report;
    emb::PackedData share = emb::compute_backbone_features(o, comm, report);
    emb::write_packed(share, out, created_by, comm);
    if (rank_of(comm) == 0)
      std::printf("%s: vl features of %lld steps (%lld tokens) by the backbone %s (%s, digest %s) in %.2f s on %d "
                  "rank(s), %s: %.2f steps/s (backbone load %.2f s)\n",
                  out.c_str(), (long long)report.steps, (long long)report.tokens, o.backbone.c_str(),
                  report.dims.c_str(), report.digest.c_str(), report.seconds, report.ranks, o.device.c_str(),
                  report.seconds > report.load_seconds ? double(report.steps) / (report.seconds - report.load_seconds)
                                                       : 0.0,
                  report.load_seconds);
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"embpack: packs robot datasets into embpack/1 HDF5 files for embtrain"};
  app.require_subcommand(1);
  std::string out;

  emb::SynthOptions so;
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
  add_output_options(synth, out, so.progress);

  std::vector<std::string> libero_inputs;
  emb::LiberoOptions lo;
  CLI::App* libero = app.add_subcommand("libero", "convert robomimic/LIBERO HDF5 files");
  libero->add_option("inputs", libero_inputs, "source .hdf5 files")->required();
  libero->add_option("--fps", lo.fps, "steps per second of the demos");
  add_stand_in_encoder_options(libero, lo.d_vl, lo.vl_grid);
  add_output_options(libero, out, lo.progress);

  emb::VideoOptions vo;
  CLI::App* video = app.add_subcommand("video", "decode videos aligned to a step table");
  video->add_option("inputs", vo.videos, "video files, one per view")->required();
  video->add_option("--table", vo.table, "steps table (.json or .csv) with one frame index per step and view")->required();
  video->add_option("--height", vo.height, "output frame height");
  video->add_option("--width", vo.width, "output frame width");
  video->add_option("--threads", vo.threads, "decoder threads");
  add_stand_in_encoder_options(video, vo.d_vl, vo.vl_grid);
  add_output_options(video, out, vo.progress);

  emb::LerobotOptions ro;
  CLI::App* lerobot = app.add_subcommand("lerobot", "convert LeRobot v2.1 / v3.0 datasets (Parquet + AV1/H.264 videos)");
  lerobot->add_option("inputs", ro.dirs, "dataset folders (holding meta/info.json)")->required();
  lerobot->add_option("--modality", ro.modality, "GR00T modality.json (default: each dataset's meta/modality.json)");
  lerobot->add_option("--height", ro.height, "output frame height");
  lerobot->add_option("--width", ro.width, "output frame width");
  lerobot->add_option("--threads", ro.threads, "decoding threads per rank");
  add_stand_in_encoder_options(lerobot, ro.d_vl, ro.vl_grid);
  add_output_options(lerobot, out, ro.progress);

  emb::FeaturesOptions fo;
  CLI::App* features = app.add_subcommand(
      "features", "compute gr00t vl features with GR00T-N1.5's Eagle 2.5 backbone (replaces /features/vl)");
  features->add_option("input", fo.input, "packed gr00t file with camera frames (/video/<view>)")->required();
  features->add_option("--backbone", fo.backbone,
                       "GR00T-N1.5 checkpoint folder (backbone.eagle_model.* tensors and config.json)")
      ->required();
  features->add_option("--eagle", fo.eagle_folder,
                       "Isaac-GR00T's eagle2_hg_model folder: the Eagle config and tokenizer (default: "
                       "CHECKPOINT/eagle2_hg_model)");
  features->add_option("--device", fo.device, "cpu or cuda (one GPU per local rank)")->check(CLI::IsMember({"cpu", "cuda"}));
  features->add_option("--precision", fo.precision, "auto (cpu fp32, cuda bf16 as upstream deploys), fp32 or bf16");
  features->add_option("--views", fo.views, "the /video views in prompt order (default: the file's)")->delimiter(',');
  features->add_option("--batch", fo.batch, "steps per backbone forward");
  features->add_option("--augment", fo.augment,
                       "also store K variants of every step's features under GR00T's training crop and colour "
                       "jitter (/features/vl_aug<k>; train with data.vl_augment = on)");
  features->add_option("--seed", fo.seed, "seed of the augmentations' draws");
  add_output_options(features, out, fo.progress);

  std::string file;
  CLI::App* info = app.add_subcommand("info", "summarise a packed file");
  info->add_option("file", file)->required();
  CLI::App* verify = app.add_subcommand("verify", "check every invariant of a packed file");
  verify->add_option("file", file)->required();

  CLI11_PARSE(app, argc, argv);
  try {
    std::string created_by = command_line(argc, argv);
    if (*synth) {
      emb::write_packed(emb::synthesize(so), out, created_by);
    } else if (*libero) {
      emb::write_packed(emb::convert_libero(libero_inputs, lo), out, created_by);
    } else if (*video) {
      emb::write_packed(emb::convert_video(vo), out, created_by);
    } else if (*lerobot) {
      return run_lerobot(ro, out, created_by);
    } else if (*features) {
      return run_features(fo, out, created_by);
    } else if (*info) {
      emb::print_info(file, std::cout);
    } else if (*verify) {
      emb::PackedSummary s = emb::verify_packed(emb::H5File::open(file));
      std::cout << file << ": ok (" << s.family << ", " << s.episodes << " episodes, " << s.steps << " steps)\n";
    }
  } catch (const emb::Error& e) {
    std::cerr << "embpack: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "embpack: " << e.what() << "\n";
    return emb::kExitFailure;
  }
  return 0;
}
