// `embpack info FILE`: a human-readable summary of a packed file (attributes, sizes, views,
// feature arrays, token-count distribution of the context).
#pragma once
#include <ostream>
#include <string>

namespace emb {

void print_info(const std::string& path, std::ostream& out);

}  // namespace emb
