// Turns one step's samples (this rank's, in global order) into micro-batches (DATA.md
// "Packing", MODEL.md "Packed batch").
//  packing on:  first-fit-decreasing over windows of `lookahead` consecutive samples into
//               bins of at most tokens_per_mb tokens (query + context); bins are emitted in
//               the order they were opened, samples inside a bin in window order.
//  packing off: the baseline; every sample is padded to the longest sample of the dataset
//               (pad_query, pad_context; data.pad_context pads the context further, e.g. to
//               JDT's 200 text tokens) and micro-batches hold tokens_per_mb / that many.
// Every sample lands in exactly one micro-batch. A sample's tokens are those of the one rule
// in batch/sample_tokens.hpp (the synthetic batches use it too); wan's video_x0 rows are
// patches flattened t, h, w, c, and noisy tokens repeat their clean twin's row.
// Padding tokens have seq -1 and kind kPad; padded context rows have cseq -1 and zeros.
#pragma once
#include <string>
#include <vector>

#include "data/sample.hpp"
#include "batch/packed_batch.hpp"

namespace emb {

struct PackerConfig {
  bool packing = true;
  int64_t tokens_per_mb = 4096;
  int64_t lookahead = 64;   // samples per FFD window; 0 = the whole step
  int64_t pad_query = 0, pad_context = 0;  // packing off: the padded sample shape
};

// wan: x0 of every video token of one sample in the rule's order (the clean patches, then the
// same patches noisy) from its latents [F, Hl, Wl, channels]; channels past the model's
// latent_channels (the DreamZero layout's I2V y) go to video_cond, the same for both halves,
// never noised. The packer calls it per sample, the step's online encoders per computed clip.
void append_video_rows(const float* latents, int channels, const TokenConfig& cfg, PackedBatch& b);

// Bins of sample indices (FFD per window); throws if a sample exceeds the budget.
std::vector<std::vector<size_t>> plan_micro_batches(const std::vector<int64_t>& tokens, const PackerConfig& p);

// file_names name the files of Sample::file in errors.
std::vector<PackedBatch> pack_step(const std::vector<Sample>& samples, const TokenConfig& cfg, const PackerConfig& p,
                                   const std::vector<std::string>& file_names);

}  // namespace emb
