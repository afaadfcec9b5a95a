#include "data/rotation_conversion.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace emb {
namespace {

constexpr const char* kEulerPrefix = "euler_angles_";

// The axes (0 = X, 1 = Y, 2 = Z) of an euler_angles_<abc> type, r/p/y naming X/Y/Z as upstream's
// RotationTransform maps them; empty for another type.
std::vector<int> euler_axes(const std::string& type) {
  if (type.rfind(kEulerPrefix, 0) != 0) return {};
  const std::string letters = type.substr(std::string(kEulerPrefix).size());
  std::vector<int> axes;
  for (char c : letters) axes.push_back(c == 'r' ? 0 : c == 'p' ? 1 : c == 'y' ? 2 : -1);
  const bool tait_bryan = axes.size() == 3 && std::count(axes.begin(), axes.end(), -1) == 0 && axes[0] != axes[1] &&
                          axes[1] != axes[2] && axes[0] != axes[2];
  return tait_bryan ? axes : std::vector<int>{};
}

RotationMatrix product(const RotationMatrix& a, const RotationMatrix& b) {
  RotationMatrix m{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) m[size_t(3 * i + j)] += a[size_t(3 * i + k)] * b[size_t(3 * k + j)];
  return m;
}

RotationMatrix axis_rotation(int axis, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  if (axis == 0) return {1, 0, 0, 0, c, -s, 0, s, c};
  if (axis == 1) return {c, 0, s, 0, 1, 0, -s, 0, c};
  return {c, -s, 0, s, c, 0, 0, 0, 1};
}

// One outer Euler angle from the two entries of `data` (a row or column of the matrix) that hold
// a positive multiple of its sine and cosine (pytorch3d's _angle_from_tan for distinct axes).
double angle_from_tan(int axis, int middle, const double* data, bool horizontal) {
  static const int kPairs[3][2] = {{2, 1}, {0, 2}, {1, 0}};
  int i1 = kPairs[axis][0], i2 = kPairs[axis][1];
  if (horizontal) std::swap(i1, i2);
  const bool even = (middle - axis + 3) % 3 == 1;  // XY, YZ, ZX
  return horizontal == even ? std::atan2(data[i1], data[i2]) : std::atan2(-data[i2], data[i1]);
}

RotationMatrix quaternion_to_matrix(const double* q) {
  const double r = q[0], i = q[1], j = q[2], k = q[3];
  const double two_s = 2.0 / (r * r + i * i + j * j + k * k);
  return {1 - two_s * (j * j + k * k), two_s * (i * j - k * r),     two_s * (i * k + j * r),
          two_s * (i * j + k * r),     1 - two_s * (i * i + k * k), two_s * (j * k - i * r),
          two_s * (i * k - j * r),     two_s * (j * k + i * r),     1 - two_s * (i * i + j * j)};
}

// The best-conditioned of four candidates (the largest |q_c|), then the real part made >= 0.
void matrix_to_quaternion(const RotationMatrix& m, double* q) {
  const double m00 = m[0], m01 = m[1], m02 = m[2], m10 = m[3], m11 = m[4], m12 = m[5], m20 = m[6], m21 = m[7], m22 = m[8];
  const double squared[4] = {1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22};
  double q_abs[4];
  for (int c = 0; c < 4; ++c) q_abs[c] = squared[c] > 0 ? std::sqrt(squared[c]) : 0.0;
  const double by_rijk[4][4] = {{q_abs[0] * q_abs[0], m21 - m12, m02 - m20, m10 - m01},
                                {m21 - m12, q_abs[1] * q_abs[1], m10 + m01, m02 + m20},
                                {m02 - m20, m10 + m01, q_abs[2] * q_abs[2], m12 + m21},
                                {m10 - m01, m20 + m02, m21 + m12, q_abs[3] * q_abs[3]}};
  const int best = int(std::max_element(q_abs, q_abs + 4) - q_abs);
  const double denominator = 2.0 * std::max(q_abs[best], 0.1);
  const double sign = by_rijk[best][0] / denominator < 0 ? -1.0 : 1.0;
  for (int c = 0; c < 4; ++c) q[c] = sign * by_rijk[best][c] / denominator;
}

// sin(x)/x, 1 at 0 (torch.sinc(x/π)).
double sinc(double x) { return x == 0 ? 1.0 : std::sin(x) / x; }

}  // namespace

bool is_rotation_type(const std::string& type) {
  return type == "axis_angle" || type == "quaternion" || type == "rotation_6d" || type == "matrix" ||
         (!euler_axes(type).empty() && type.size() == std::string(kEulerPrefix).size() + 3);
}

std::string rotation_types_text() {
  return "axis_angle, quaternion, rotation_6d, matrix, euler_angles_rpy, euler_angles_ryp, euler_angles_pry, "
         "euler_angles_pyr, euler_angles_yrp, euler_angles_ypr";
}

int rotation_width(const std::string& type) {
  if (type == "quaternion") return 4;
  if (type == "rotation_6d") return 6;
  if (type == "matrix") return 9;
  if (type == "axis_angle" || is_rotation_type(type)) return 3;
  throw Error(str("unknown rotation type '", type, "' (upstream's: ", rotation_types_text(), ")"), kExitInput);
}

RotationMatrix rotation_to_matrix(const std::string& type, const double* v) {
  rotation_width(type);
  if (type == "quaternion") return quaternion_to_matrix(v);
  if (type == "matrix") return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
  if (type == "axis_angle") {
    const double angle = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double scale = 0.5 * sinc(angle * 0.5);
    const double q[4] = {std::cos(angle * 0.5), v[0] * scale, v[1] * scale, v[2] * scale};
    return quaternion_to_matrix(q);
  }
  if (type == "rotation_6d") {
    double b1[3] = {v[0], v[1], v[2]}, b2[3] = {v[3], v[4], v[5]};
    const auto normalize = [](double* x) {
      const double n = std::max(std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), 1e-12);
      for (int i = 0; i < 3; ++i) x[i] /= n;
    };
    normalize(b1);
    const double along = b1[0] * b2[0] + b1[1] * b2[1] + b1[2] * b2[2];
    for (int i = 0; i < 3; ++i) b2[i] -= along * b1[i];
    normalize(b2);
    return {b1[0],
            b1[1],
            b1[2],
            b2[0],
            b2[1],
            b2[2],
            b1[1] * b2[2] - b1[2] * b2[1],
            b1[2] * b2[0] - b1[0] * b2[2],
            b1[0] * b2[1] - b1[1] * b2[0]};
  }
  const std::vector<int> axes = euler_axes(type);
  return product(product(axis_rotation(axes[0], v[0]), axis_rotation(axes[1], v[1])), axis_rotation(axes[2], v[2]));
}

void matrix_to_rotation(const std::string& type, const RotationMatrix& m, double* out) {
  rotation_width(type);
  if (type == "matrix") {
    std::copy(m.begin(), m.end(), out);
  } else if (type == "rotation_6d") {
    std::copy(m.begin(), m.begin() + 6, out);
  } else if (type == "quaternion") {
    matrix_to_quaternion(m, out);
  } else if (type == "axis_angle") {
    double q[4];
    matrix_to_quaternion(m, q);
    const double half = std::atan2(std::sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), q[0]);
    const double scale = 0.5 * sinc(half);
    for (int i = 0; i < 3; ++i) out[i] = q[i + 1] / scale;
  } else {
    const std::vector<int> axes = euler_axes(type);
    const int i0 = axes[0], i2 = axes[2];
    const double column[3] = {m[size_t(i2)], m[size_t(3 + i2)], m[size_t(6 + i2)]};
    out[0] = angle_from_tan(i0, axes[1], column, false);
    const double sine = std::clamp(m[size_t(3 * i0 + i2)], -1.0, 1.0);
    out[1] = std::asin(sine * (i0 - i2 == -1 || i0 - i2 == 2 ? -1.0 : 1.0));
    out[2] = angle_from_tan(i2, axes[1], &m[size_t(3 * i0)], true);
  }
}

void convert_rotation(const std::string& from, const std::string& to, const double* in, double* out) {
  matrix_to_rotation(to, rotation_to_matrix(from, in), out);
}

}  // namespace emb
