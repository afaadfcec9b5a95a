// Rotation representations as GR00T-N1.5's data configs convert them (data.upstream_config,
// data/upstream_data_config.hpp): a state or action sub-key whose meta/modality.json declares a
// `rotation_type` may be given to the model in another representation (`target_rotations`).
// Upstream converts through a 3x3 matrix with pytorch3d's functions (Isaac-GR00T 4af2b622
// gr00t/data/transform/state_action.py:29-95 RotationTransform; its types gr00t/data/schema.py:27-39
// RotationType); the conventions below are pytorch3d's (transforms/rotation_conversions.py), which
// upstream pins at 0.7.6 / 0.7.8:
//   quaternion   4 values (w, x, y, z), real part first; from a matrix the candidate of the largest
//                of |1 ± m00 ± m11 ± m22| is taken, then made w >= 0;
//   axis_angle   3 values, the axis scaled by the angle (anticlockwise, radians), through the
//                quaternion: q = (cos(θ/2), v·sin(θ/2)/θ) and back v = q_xyz·θ/sin(θ/2), θ/2 = atan2(|q_xyz|, w);
//   rotation_6d  6 values, the matrix's first two rows; back by Gram-Schmidt (rows b1, b2, b1 × b2);
//   matrix       9 values, row-major;
//   euler_angles_<abc> with a, b, c each of r, p, y (axes X, Y, Z): 3 angles, R = R_a(e0)·R_b(e1)·R_c(e2);
//                back, the middle angle is the asin of a matrix entry clamped to [-1, 1], as 0.7.8
//                does (0.7.6 gives NaN where rounding puts the entry past 1).
// Checked against both tags' source (rotation_conversions.py): the formulas are the same, 0.7.8
// writes sin(x)/x as torch.sinc where 0.7.6 switches to a series below 1e-6 (equal in double).
// Computed in double.
#pragma once
#include <array>
#include <string>

namespace emb {

using RotationMatrix = std::array<double, 9>;  // row-major

// Whether `type` is one of upstream's RotationType values (axis_angle, quaternion, rotation_6d,
// matrix, euler_angles_rpy/ryp/pry/pyr/yrp/ypr); rotation_types_text() lists them.
bool is_rotation_type(const std::string& type);
std::string rotation_types_text();

// The number of values of a rotation in `type` (3, 4, 6 or 9). Throws emb::Error on an unknown type.
int rotation_width(const std::string& type);

RotationMatrix rotation_to_matrix(const std::string& type, const double* values);
void matrix_to_rotation(const std::string& type, const RotationMatrix& m, double* values);

// `in` (rotation_width(from) values) given in `to` (rotation_width(to) values to `out`) through the
// matrix, as upstream's RotationTransform.forward.
void convert_rotation(const std::string& from, const std::string& to, const double* in, double* out);

}  // namespace emb
