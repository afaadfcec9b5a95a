// GR00T-N1.5's embodiment tags and the projector slot (embodiment id) each selects
// (Isaac-GR00T gr00t/data/embodiment_tags.py 42-47): what a packed file's
// /episodes/embodiment means to upstream inference. embpack lerobot --embodiment-tag writes
// the id; embtrain export names it in metadata.json.
#pragma once
#include <string>

namespace emb {

// Upstream's tag of an embodiment id; "" when upstream names none.
const char* gr00t_embodiment_tag(int id);

// The embodiment id of an upstream tag; -1 when upstream has no such tag.
int gr00t_embodiment_id(const std::string& tag);

// The tags with their ids, for messages: "new_embodiment 31, oxe_droid 17, ...".
const char* gr00t_embodiment_tags_text();

}  // namespace emb
