// The packed dataset format `embpack/1` (DATA.md "The packed file"), the names shared by
// the writer (embpack), the verifier and the loader. Additions to DATA.md's list, all
// written by embpack and optional for readers:
//   /embodiments/state_dim, /embodiments/action_dim  int32 [n_embodiments]
//        the leading columns of /steps/state and /steps/action that embodiment e uses (the
//        rest are zero); the loader masks the unused action columns (action_mask 0).
//   /features/vl (+ _offsets [S+1])      gr00t: per-step vl tokens (views × tokens per view,
//        then the instruction's tokens), float16 [N, Dvl].
//   /features/txt (+ _offsets [ntask+1]) wan: per-task text tokens, float16 [N, Dtxt].
//   /latents/<view> attribute steps_per_latent: latent frame j of episode e covers steps
//        [j·spl, (j+1)·spl) of it; /latents/<view>_offsets int64 [E+1] gives each episode's
//        latent frames (ceil(len/spl) of them).
//   /stats/<field>/{mean,std,min,max,q01,q99} float32 [dim] for field in state, action,
//        reward (reward dim 1), over all rows.
//   /features/vl string attributes, what produced the features (embpack features; absent: the
//        stand-in encoder of the simulated tasks, tools/embpack/context_features.hpp):
//        backbone ("gr00t-n1.5 eagle2.5"), backbone_digest (eagle_weights_digest of the
//        backbone's tensors: training compares it with its own backbone's, data.vl_backbone),
//        checkpoint (the folder), recipe (the embtrain commit that computed them),
//        preprocessing (the frame pipeline and prompt), views (the /video views in prompt
//        order), dims (the backbone's dimensions), augment (stored augmented variants K; "0":
//        none), augment_seed (their draws' seed, when K > 0).
//   /features/vl_aug<k> (k < K) float16 [N, Dvl]: the same steps' features from frames under
//        the k-th training augmentation (GR00T's random crop and colour jitter, drawn from
//        (augment_seed, step, k)); the rows of /features/vl_offsets (the prompts are the same).
//        Training with data.vl_augment = on reads variant epoch mod K.
//   DreamZero layout (embpack features --dreamzero, tools/embpack/dreamzero_features.hpp):
//   /latents/<view> with attribute clip_frames = F: per step t, the F latent frames of the clip
//        that starts at t (not a stream of frames: the causal VAE encodes each clip from its own
//        first frame, as upstream does per sample), rows [t·F, (t+1)·F) of the episode's, so
//        /latents/<view>_offsets counts F·len per episode; channels [latents (C) | mask (4) |
//        image latents (C)] with attribute cond_channels = C + 4 (the I2V y, never noised);
//        frame_stride (steps between the clip's frames), frames (T = 1 + 4(F − 1)).
//   /features/clip (+ _offsets [S+1]) float16 [S·257, Dclip]: CLIP features of each step's clip's
//        first frame.
//   /features/txt as for wan, umT5's rows of each task's DreamZero prompt (real rows only).
//   These three carry the string attributes encoders, encoders_digest (the encoders' weights,
//        encoders/dreamzero/encoder_folder.hpp: training compares it with data.dreamzero_encoders'),
//        checkpoint, recipe, preprocessing, dims.
//   /stats/action_relative/{mean,std,min,max,q01,q99} float32 [action dim] (embpack
//        --relative-actions KEYS --relative-chunk N): the action statistics of upstream's relative
//        recipe (data/relative_actions.hpp): the columns of each sub-key K of KEYS over every
//        N-step chunk of an episode minus the state.K of its first step (dreamzero ab790c1
//        groot/vla/data/dataset/lerobot.py:613-725), the other columns /stats/action's; string
//        attribute keys (comma-separated) and attribute chunk (N).
//   root string attribute modality (embpack lerobot, from GR00T's meta/modality.json and
//        meta/info.json): JSON {"state"|"action": {sub-key: {"start", "end", "absolute",
//        "rotation_type", "continuous"}} with [start, end) in /steps/state or /steps/action,
//        "video": {view: {"resolution": [w, h], "channels", "fps"}}} of the recorded videos;
//        embtrain export writes it into metadata.json.
#pragma once
#include <array>

namespace emb::packed {

constexpr const char* kFormat = "embpack/1";
constexpr const char* kModality = "modality";
constexpr const char* kEpisodeOffsets = "/episodes/offsets";
constexpr const char* kEpisodeTask = "/episodes/task";
constexpr const char* kEpisodeEmbodiment = "/episodes/embodiment";
constexpr const char* kState = "/steps/state";
constexpr const char* kAction = "/steps/action";
constexpr const char* kReward = "/steps/reward";
constexpr const char* kDone = "/steps/done";
constexpr const char* kTaskText = "/tasks/text";
constexpr const char* kTaskTokens = "/tasks/tokens";
constexpr const char* kTaskTokenOffsets = "/tasks/token_offsets";
constexpr const char* kEmbodimentStateDim = "/embodiments/state_dim";
constexpr const char* kEmbodimentActionDim = "/embodiments/action_dim";
constexpr const char* kVlFeatures = "/features/vl";
constexpr const char* kVlOffsets = "/features/vl_offsets";
constexpr const char* kTxtFeatures = "/features/txt";
constexpr const char* kTxtOffsets = "/features/txt_offsets";
constexpr const char* kLatents = "/latents";
constexpr const char* kVideo = "/video";
constexpr const char* kStepsPerLatent = "steps_per_latent";
constexpr const char* kBackboneDigest = "backbone_digest";
constexpr const char* kClipFeatures = "/features/clip";
constexpr const char* kClipOffsets = "/features/clip_offsets";
constexpr const char* kClipFrames = "clip_frames";
constexpr const char* kFrameStride = "frame_stride";
constexpr const char* kCondChannels = "cond_channels";
constexpr const char* kEncodersDigest = "encoders_digest";
constexpr const char* kAugmentVariants = "augment";
constexpr const char* kActionRelativeStats = "/stats/action_relative";
constexpr const char* kRelativeKeys = "keys";
constexpr const char* kRelativeChunk = "chunk";
constexpr const char* kVlAugmented = "/features/vl_aug";  // + k
constexpr std::array<const char*, 8> kFeatureProvenance{"backbone", "backbone_digest", "checkpoint", "recipe",
                                                        "preprocessing", "views", "dims", "augment"};
constexpr std::array<const char*, 3> kStatFields{"state", "action", "reward"};
constexpr std::array<const char*, 6> kStatNames{"mean", "std", "min", "max", "q01", "q99"};

}  // namespace emb::packed
