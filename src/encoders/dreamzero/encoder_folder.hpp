// DreamZero's frozen encoders as released in one folder (Wan2.1's checkpoint layout: the VAE, the
// umT5-XXL encoder and the XLM-R CLIP as .pth state dicts, or their .safetensors twins, and umT5's
// SentencePiece model under google/umt5-xxl/), and the identity of those weights: the digest
// `embpack features --dreamzero` records in a packed file and training compares with the folder
// the deck names (data.dreamzero_encoders), so features of other encoders are refused.
#pragma once
#include <string>

namespace emb::encoders {

struct DreamZeroEncoderFiles {
  std::string vae, t5, clip;  // weight files
  std::string tokenizer;      // spiece.model
};

// The files of `dir`, each overridable (a non-empty field of `given` is taken as is). Throws
// emb::Error (exit 2) naming what is missing and the names it looked for.
DreamZeroEncoderFiles dreamzero_encoder_files(const std::string& dir, const DreamZeroEncoderFiles& given = {});

// "vae <16 hex>, t5 <16 hex>, clip <16 hex>": tensors_digest of the VAE's encoder tensors, all of
// umT5's and CLIP's visual tower (what the features depend on).
std::string dreamzero_encoders_digest(const DreamZeroEncoderFiles& files);

}  // namespace emb::encoders
