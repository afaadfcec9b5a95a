// GR00T-N1.5's frame pipeline in front of the Eagle backbone (spec_eagle.md §2; Isaac-GR00T
// data_config.py 171-181, video.py, the Eagle image processor), on the host, in float32 exactly
// as upstream rounds it, because its result is truncated to uint8 before the backbone sees it:
//   x = float32(u8) / 255                                 VideoToTensor
//   crop int(0.95·H) × int(0.95·W): centre (eval) or at a drawn offset (training)
//   antialiased bilinear resize to image × image          VideoResize (encoders/frames/resize)
//   colour jitter (training): brightness, contrast, saturation, hue in a drawn order
//   u8 = trunc(x · 255)                                   VideoToNumpy
//   pixel = (float32(u8) − 127.5) / 127.5                 the Eagle processor (one tile)
// then the pixels as SigLIP's patch rows (the patch convolution's input as a GEMM operand).
// One crop offset and one jitter draw serve every view of a sample (GR00T stacks its views).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace emb::encoders {

constexpr double kGr00tCropScale = 0.95;  // VideoCrop(scale=0.95)

// One draw of torchvision's ColorJitter(brightness 0.3, contrast 0.4, saturation 0.5, hue 0.08):
// factors and the order they apply in (0 brightness, 1 contrast, 2 saturation, 3 hue).
struct ColorJitter {
  float brightness = 1, contrast = 1, saturation = 1, hue = 0;
  std::array<int, 4> order = {0, 1, 2, 3};
};

// A training-time draw for a sample's frames: the crop's top-left corner and the jitter.
struct FrameAugmentation {
  int64_t crop_top = 0, crop_left = 0;
  std::optional<ColorJitter> jitter;
};

// The crop of an H × W frame: int(0.95·H) × int(0.95·W), and the centre offsets (round half to
// even: a 256 frame's 243 crop starts at 6).
struct Crop {
  int64_t height, width, top, left;
};
Crop centre_crop(int64_t H, int64_t W);

// A uniform crop offset and a jitter draw (factors uniform in [1 − r, 1 + r], hue in
// [−0.08, 0.08], the order a uniform permutation), a pure function of (seed, sample, variant):
// the same sample gets the same draw on any rank count; `variant` selects one of K stored
// augmentations (embpack features --augment) or the step (online features).
FrameAugmentation draw_augmentation(int64_t H, int64_t W, uint64_t seed, uint64_t sample, uint64_t variant);

// frames uint8 [N, H, W, 3] (one sample's views, one resolution) → uint8 [N, image, image, 3];
// eval without `augmentation`. Throws emb::Error naming `where` on frames of a bad shape.
std::vector<uint8_t> gr00t_frames(const uint8_t* frames, int64_t N, int64_t H, int64_t W, int image,
                                  const FrameAugmentation* augmentation, const std::string& where);

// uint8 [N, image, image, 3] → SigLIP's patch rows [N·(image/patch)², 3·patch·patch] of the
// processor's pixels: row = image n, patch (py, px) in row-major order; column (channel, y, x).
void eagle_patch_rows(const uint8_t* frames, int64_t N, int image, int patch, float* rows);

}  // namespace emb::encoders
