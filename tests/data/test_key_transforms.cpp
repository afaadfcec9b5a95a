// Each per-key transform of GR00T-N1.5's data configs on values worked out by hand: the rotation
// conversions (data/rotation_conversion.hpp, pytorch3d's conventions), each normalisation mode and
// the order rotate → normalise → write in the plan's key order, and the inverse for actions
// (data/state_action_normalization.hpp transform_key_rows / untransform_key_rows).
#define BOOST_TEST_MODULE key_transforms
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "data/rotation_conversion.hpp"
#include "data/state_action_normalization.hpp"

using namespace emb;

namespace {

const double kPi = M_PI;

void check_near(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= tol, "at " << i << ": " << got[i] << " vs " << want[i]);
}

void check_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= tol, "at " << i << ": " << got[i] << " vs " << want[i]);
}

std::vector<double> converted(const std::string& from, const std::string& to, const std::vector<double>& in) {
  std::vector<double> out(size_t(rotation_width(to)));
  convert_rotation(from, to, in.data(), out.data());
  return out;
}

std::vector<double> matrix_of(const std::string& type, const std::vector<double>& in) {
  const RotationMatrix m = rotation_to_matrix(type, in.data());
  return {m.begin(), m.end()};
}

// 90 degrees about Z: x → y, y → −x.
const std::vector<double> kRz90 = {0, -1, 0, 1, 0, 0, 0, 0, 1};
// 120 degrees about (1, 1, 1)/√3: x → y → z → x, = Rx(90°)·Ry(90°).
const std::vector<double> kCycle = {0, 0, 1, 1, 0, 0, 0, 1, 0};

KeyTransform key(const char* name, int64_t start, int64_t width) {
  KeyTransform k;
  k.key = name, k.start = start, k.width = width;
  return k;
}

}  // namespace

BOOST_AUTO_TEST_CASE(quaternions_are_real_part_first_and_come_back_with_a_non_negative_real_part) {
  const double h = std::sqrt(0.5);
  check_near(matrix_of("quaternion", {h, 0, 0, h}), kRz90);
  check_near(matrix_of("quaternion", {-h, 0, 0, -h}), kRz90);  // the same rotation
  check_near(matrix_of("quaternion", {2 * h, 0, 0, 2 * h}), kRz90);  // scaled: 2/|q|² normalises it
  check_near(converted("matrix", "quaternion", kRz90), {h, 0, 0, h});
  check_near(converted("quaternion", "quaternion", {-h, 0, 0, -h}), {h, 0, 0, h});
  // 180 degrees about X: the candidate of the largest |q| (x) is taken; w = 0.
  check_near(converted("matrix", "quaternion", {1, 0, 0, 0, -1, 0, 0, 0, -1}), {0, 1, 0, 0});
}

BOOST_AUTO_TEST_CASE(rotation_6d_is_the_first_two_rows_and_comes_back_by_gram_schmidt) {
  check_near(converted("matrix", "rotation_6d", kRz90), {0, -1, 0, 1, 0, 0});
  const double h = std::sqrt(0.5);
  check_near(converted("quaternion", "rotation_6d", {h, 0, 0, h}), {0, -1, 0, 1, 0, 0});
  // Not orthonormal: b1 = a1/|a1| = x, b2 = a2 − (b1·a2)·b1 normalised = y, b3 = b1 × b2 = z.
  check_near(matrix_of("rotation_6d", {2, 0, 0, 1, 1, 0}), {1, 0, 0, 0, 1, 0, 0, 0, 1});
}

BOOST_AUTO_TEST_CASE(axis_angle_is_the_axis_scaled_by_the_angle) {
  check_near(matrix_of("axis_angle", {0, 0, kPi / 2}), kRz90);
  check_near(converted("matrix", "axis_angle", kRz90), {0, 0, kPi / 2});
  const double a = 2 * kPi / 3 / std::sqrt(3.0);
  check_near(converted("matrix", "axis_angle", kCycle), {a, a, a});
  check_near(matrix_of("axis_angle", {a, a, a}), kCycle);
  check_near(converted("matrix", "axis_angle", {1, 0, 0, 0, 1, 0, 0, 0, 1}), {0, 0, 0});  // no rotation
  check_near(matrix_of("axis_angle", {0, 0, 0}), {1, 0, 0, 0, 1, 0, 0, 0, 1});
}

BOOST_AUTO_TEST_CASE(euler_angles_compose_in_the_named_order) {
  // rpy = XYZ: R = Rx(e0)·Ry(e1)·Rz(e2).
  check_near(matrix_of("euler_angles_rpy", {0, 0, kPi / 2}), kRz90);
  check_near(matrix_of("euler_angles_rpy", {kPi / 2, kPi / 2, 0}), kCycle);
  // ypr = ZYX: Rz(90°)·Ry(0)·Rx(0).
  check_near(matrix_of("euler_angles_ypr", {kPi / 2, 0, 0}), kRz90);
  // rpy (0.3, −0.2, 0.1): Rx·Ry·Rz by hand, and back.
  const double cx = std::cos(0.3), sx = std::sin(0.3), cy = std::cos(-0.2), sy = std::sin(-0.2), cz = std::cos(0.1),
               sz = std::sin(0.1);
  const std::vector<double> m = {cy * cz,
                                 -cy * sz,
                                 sy,
                                 sx * sy * cz + cx * sz,
                                 -sx * sy * sz + cx * cz,
                                 -sx * cy,
                                 -cx * sy * cz + sx * sz,
                                 cx * sy * sz + sx * cz,
                                 cx * cy};
  check_near(matrix_of("euler_angles_rpy", {0.3, -0.2, 0.1}), m);
  check_near(converted("matrix", "euler_angles_rpy", m), {0.3, -0.2, 0.1});
  for (const char* order : {"euler_angles_ryp", "euler_angles_pry", "euler_angles_pyr", "euler_angles_yrp",
                            "euler_angles_ypr"})
    check_near(converted(order, order, {0.3, -0.2, 0.1}), {0.3, -0.2, 0.1});
  // Through another representation: 90 degrees about Z as axis/angle.
  check_near(converted("euler_angles_rpy", "axis_angle", {0, 0, 0.7}), {0, 0, 0.7});
  check_near(converted("axis_angle", "euler_angles_rpy", {0, 0, 0.7}), {0, 0, 0.7});
}

// At the middle angle's ±90 degrees a matrix rounded from float data can hold an entry just past
// 1: its sine is clamped, as pytorch3d 0.7.8 does, and the middle angle is exactly π/2, not NaN.
BOOST_AUTO_TEST_CASE(euler_middle_angle_at_gimbal_lock_is_clamped_not_nan) {
  // R_x(0)·R_y(π/2)·R_z(0) with m02 = 1 rounded up by one float ulp.
  const std::vector<double> m = {0, 0, 1 + 1.2e-7, 0, 1, 0, -1, 0, 0};
  const std::vector<double> angles = converted("matrix", "euler_angles_rpy", m);
  BOOST_TEST(std::isfinite(angles[0]));
  BOOST_TEST(angles[1] == kPi / 2);
  BOOST_TEST(std::isfinite(angles[2]));
}

BOOST_AUTO_TEST_CASE(unknown_rotation_types_are_refused) {
  BOOST_TEST(is_rotation_type("euler_angles_ypr"));
  BOOST_TEST(!is_rotation_type("euler_angles_rrp"));
  BOOST_TEST(!is_rotation_type("euler"));
  BOOST_CHECK_THROW(rotation_width("rotation_9d"), Error);
}

BOOST_AUTO_TEST_CASE(each_normalisation_mode_by_hand) {
  // One row of 8 raw columns: a: [0, 2) min_max, b: [2, 4) q99, c: [4, 6) mean_std, d: [6, 8) binary.
  KeyTransform a = key("a", 0, 2), b = key("b", 2, 2), c = key("c", 4, 2), d = key("d", 6, 2);
  a.normalization = NormalizationRule::min_max, b.normalization = NormalizationRule::q99;
  c.normalization = NormalizationRule::mean_std, d.normalization = NormalizationRule::binary;
  const std::vector<BoundKeyTransform> keys = {
      {a, {NormalizationRule::min_max, {0.f, 3.f}, {4.f, 3.f}}},
      {b, {NormalizationRule::q99, {-1.f, 2.f}, {1.f, 2.f}}},
      {c, {NormalizationRule::mean_std, {1.f, 5.f}, {2.f, 0.f}}},
      {d, {NormalizationRule::binary, {}, {}}},
  };
  std::vector<float> row = {1.f, 7.f, 3.f, 9.f, 4.f, 8.f, 0.5f, 0.51f};
  transform_key_rows(keys, row.data(), 1, 8, 8);
  // min_max 2·(1/4) − 1 = −0.5, 0 where min = max; q99 2·(3 + 1)/2 − 1 = 3 clamped to 1, 9 where
  // q01 = q99 clamped to 1; mean_std (4 − 1)/2 = 1.5, 8 where std = 0; binary 0.5 → 0, 0.51 → 1.
  check_near(row, {-0.5f, 0.f, 1.f, 1.f, 1.5f, 8.f, 0.f, 1.f});
  std::vector<float> back = {-0.5f, 0.f, 0.5f, 0.f, 1.5f, -2.f, 0.4f, 0.9f};
  untransform_key_rows(keys, back.data(), 1, 8, 8);
  // min_max (x + 1)/2·(max − min) + min; q99 likewise; mean_std x·std + mean; binary threshold.
  check_near(back, {1.f, 3.f, 0.5f, 2.f, 4.f, 5.f, 0.f, 1.f});
}

BOOST_AUTO_TEST_CASE(keys_are_rotated_then_normalised_and_written_in_the_plans_order) {
  // Raw row: [gripper 0.8 | quaternion of 90° about Z | position 2, 4]; the plan takes position
  // (min_max by 0..4), the quaternion as rotation_6d with upstream's fixed ±1 bounds, the gripper
  // as it is: [0, 1 | 6d | 0.8].
  KeyTransform grip = key("grip", 0, 1), quat = key("quat", 1, 4), pos = key("pos", 5, 2);
  pos.normalization = NormalizationRule::min_max;
  quat.rotation_from = "quaternion", quat.rotation_to = "rotation_6d", quat.normalization = NormalizationRule::min_max;
  const std::vector<BoundKeyTransform> keys = {
      {pos, {NormalizationRule::min_max, {0.f, 0.f}, {4.f, 4.f}}},
      {quat, {NormalizationRule::min_max, std::vector<float>(6, -1.f), std::vector<float>(6, 1.f)}},
      {grip, {}},
  };
  const float h = std::sqrt(0.5f);
  std::vector<float> row = {0.8f, h, 0.f, 0.f, h, 2.f, 4.f, 0.f, 0.f, 0.f, 7.f};
  transform_key_rows(keys, row.data(), 1, 11, 7);
  check_near(row, {0.f, 1.f, 0.f, -1.f, 0.f, 1.f, 0.f, 0.f, 0.8f, 0.f, 7.f});  // past the raw 7 columns kept
  BOOST_CHECK_THROW(transform_key_rows(keys, row.data(), 1, 8, 7), Error);  // 9 model columns in rows of 8
}

BOOST_AUTO_TEST_CASE(actions_are_inverted_into_their_own_columns) {
  // Model space [position 3 | axis_angle 3 | gripper binary 1], raw layout [gripper | euler rpy | position | extra].
  KeyTransform grip = key("grip", 0, 1), rot = key("rot", 1, 3), pos = key("pos", 4, 3);
  grip.normalization = NormalizationRule::binary;
  rot.rotation_from = "euler_angles_rpy", rot.rotation_to = "axis_angle";
  const std::vector<BoundKeyTransform> keys = {{pos, {}}, {rot, {}}, {grip, {NormalizationRule::binary, {}, {}}}};
  std::vector<float> rows = {1.f, 2.f, 3.f, 0.f, 0.f, 0.5f, 0.7f, 9.f,  // row 0
                             -1.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.2f, 9.f};
  untransform_key_rows(keys, rows.data(), 2, 8, 8);
  check_near(rows, {1.f, 0.f, 0.f, 0.5f, 1.f, 2.f, 3.f, 0.f, 0.f, 0.f, 0.f, 0.f, -1.f, 0.f, 1.f, 0.f});
}
