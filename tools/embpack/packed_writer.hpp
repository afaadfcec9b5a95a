// Lays a PackedData out as an `embpack/1` file: tokenizes the instructions, computes the
// normalisation statistics, writes everything to "<out>.tmp", runs the full verifier on it
// and only then renames it to `out`. Any failure leaves no file behind.
#pragma once
#include <string>

#include "packed_data.hpp"

namespace emb {

void write_packed(const PackedData& data, const std::string& out, const std::string& created_by);

}  // namespace emb
