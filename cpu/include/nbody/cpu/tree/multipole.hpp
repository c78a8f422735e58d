#pragma once
// The moments of an octree cell (accumulated in float64, TreeFloat64) and the interaction of a
// target body with a cell accepted by the opening criterion: the softened monopole of the suite's
// one physics function plus the softened quadrupole correction.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

#include "nbody/bodies.hpp"
#include "nbody/cpu/tree/morton.hpp"
#include "nbody/cpu/tree/precision.hpp"
#include "nbody/physics.hpp"

namespace nbody::cpu::tree {

// Q = sum m (3 d d^T - |d|^2 I) over the cell's bodies, d the offset from the centre of mass.
struct TracelessQuadrupole {
  TreeFloat64 xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
};

// An axis-aligned box; for a cell, the tightest one around its bodies.
struct Box {
  Vec3<TreeFloat64> low{0, 0, 0};
  Vec3<TreeFloat64> high{0, 0, 0};
};

struct CellMoments {
  TreeFloat64 mass = 0;
  Vec3<TreeFloat64> centre{0, 0, 0};  // of mass; the bodies' mean where the mass is zero
  TracelessQuadrupole quadrupole;
  // sum m |d|^2: the trace the traceless quadrupole drops, which the softened expansion needs.
  TreeFloat64 second_moment_trace = 0;
  // An upper bound of the distance from `centre` to any body of the cell (exact for a leaf): 0
  // where all its bodies coincide, and then the monopole is exact.
  TreeFloat64 body_radius = 0;
  // The b_max of the opening criterion: the distance from `centre` to the farthest corner of the
  // cell's cube, or body_radius where that is larger (a body rounded onto a face). Measured to the
  // cube rather than to the bodies, theta is calibrated as Barnes and Hut's (a cell of side s with
  // its centre of mass in the middle opens within about 0.87 s / theta) and a sparse cell, whose
  // few bodies sit close together, is not accepted from nearer than a full one; at equal measured
  // accuracy both radii cost the same interactions (docs/tolerances.md, "Tree codes").
  TreeFloat64 b_max = 0;
  Box box;  // the tightest box around the bodies
};

inline Box box_of(const BoundingCube& cube) {
  return {{cube.x, cube.y, cube.z}, {cube.x + cube.size, cube.y + cube.size, cube.z + cube.size}};
}

inline TreeFloat64 distance(const Vec3<TreeFloat64>& a, const Vec3<TreeFloat64>& b) {
  const TreeFloat64 dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// The distance from `point` to the farthest corner of `box`.
inline TreeFloat64 farthest_corner_distance(const Box& box, const Vec3<TreeFloat64>& point) {
  const auto far = [](TreeFloat64 low, TreeFloat64 high, TreeFloat64 p) {
    return std::max(p - low, high - p);
  };
  const TreeFloat64 dx = far(box.low.x, box.high.x, point.x);
  const TreeFloat64 dy = far(box.low.y, box.high.y, point.y);
  const TreeFloat64 dz = far(box.low.z, box.high.z, point.z);
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// weighted / mass (the mean of the points summed in `sum` where the mass is zero), kept inside the
// box of the bodies, where the centre of mass lies: rounding could otherwise move it off the one
// point of coincident bodies, leaving them a radius and a quadrupole of rounding errors.
inline Vec3<TreeFloat64> centre_of_mass(const Box& box, const Vec3<TreeFloat64>& weighted,
                                        TreeFloat64 mass, const Vec3<TreeFloat64>& sum,
                                        std::size_t points) {
  const TreeFloat64 count = static_cast<TreeFloat64>(points);
  const Vec3<TreeFloat64> mean =
      mass > 0 ? Vec3<TreeFloat64>{weighted.x / mass, weighted.y / mass, weighted.z / mass}
               : Vec3<TreeFloat64>{sum.x / count, sum.y / count, sum.z / count};
  return {std::clamp(mean.x, box.low.x, box.high.x), std::clamp(mean.y, box.low.y, box.high.y),
          std::clamp(mean.z, box.low.z, box.high.z)};
}

// The moments of one leaf, from its bodies, in two passes (the centre, then the offsets from it),
// so that no large raw second moment is ever differenced.
template <class T>
CellMoments moments_of_bodies(std::span<const Body<T>> bodies, const BoundingCube& cube) {
  CellMoments cell;
  Vec3<TreeFloat64> weighted{0, 0, 0}, sum{0, 0, 0};
  cell.box.low = cell.box.high = {bodies[0].x, bodies[0].y, bodies[0].z};
  for (const Body<T>& b : bodies) {
    const TreeFloat64 m = b.m, x = b.x, y = b.y, z = b.z;
    cell.mass += m;
    weighted = {weighted.x + m * x, weighted.y + m * y, weighted.z + m * z};
    sum = {sum.x + x, sum.y + y, sum.z + z};
    cell.box.low = {std::min(cell.box.low.x, x), std::min(cell.box.low.y, y),
                    std::min(cell.box.low.z, z)};
    cell.box.high = {std::max(cell.box.high.x, x), std::max(cell.box.high.y, y),
                     std::max(cell.box.high.z, z)};
  }
  cell.centre = centre_of_mass(cell.box, weighted, cell.mass, sum, bodies.size());
  TreeFloat64 radius_squared = 0;
  for (const Body<T>& b : bodies) {
    const TreeFloat64 m = b.m;
    const TreeFloat64 dx = b.x - cell.centre.x, dy = b.y - cell.centre.y, dz = b.z - cell.centre.z;
    const TreeFloat64 r2 = dx * dx + dy * dy + dz * dz;
    TracelessQuadrupole& q = cell.quadrupole;
    q.xx += m * (3 * dx * dx - r2);
    q.yy += m * (3 * dy * dy - r2);
    q.zz += m * (3 * dz * dz - r2);
    q.xy += m * 3 * dx * dy;
    q.xz += m * 3 * dx * dz;
    q.yz += m * 3 * dy * dz;
    cell.second_moment_trace += m * r2;
    radius_squared = std::max(radius_squared, r2);
  }
  cell.body_radius = std::sqrt(radius_squared);
  cell.b_max = std::max(cell.body_radius, farthest_corner_distance(box_of(cube), cell.centre));
  return cell;
}

// The moments of a cell from its children's (the upward pass): masses and centres add, the
// quadrupoles and traces shift to the new centre by the parallel-axis theorem. body_radius is the
// smaller of two bounds that both contain every body: the farthest corner of the cell's tight box,
// and the farthest child's reach, |centre_c - centre| + body_radius_c.
inline CellMoments moments_of_children(std::span<const CellMoments> children,
                                       const BoundingCube& cube) {
  CellMoments cell;
  Vec3<TreeFloat64> weighted{0, 0, 0}, sum{0, 0, 0};
  cell.box = children[0].box;
  for (const CellMoments& c : children) {
    cell.mass += c.mass;
    weighted = {weighted.x + c.mass * c.centre.x, weighted.y + c.mass * c.centre.y,
                weighted.z + c.mass * c.centre.z};
    sum = {sum.x + c.centre.x, sum.y + c.centre.y, sum.z + c.centre.z};
    cell.box.low = {std::min(cell.box.low.x, c.box.low.x), std::min(cell.box.low.y, c.box.low.y),
                    std::min(cell.box.low.z, c.box.low.z)};
    cell.box.high = {std::max(cell.box.high.x, c.box.high.x),
                     std::max(cell.box.high.y, c.box.high.y),
                     std::max(cell.box.high.z, c.box.high.z)};
  }
  cell.centre = centre_of_mass(cell.box, weighted, cell.mass, sum, children.size());
  TreeFloat64 reach = 0;
  for (const CellMoments& c : children) {
    const TreeFloat64 dx = c.centre.x - cell.centre.x, dy = c.centre.y - cell.centre.y,
                      dz = c.centre.z - cell.centre.z;
    const TreeFloat64 d2 = dx * dx + dy * dy + dz * dz;
    const TreeFloat64 m = c.mass;
    TracelessQuadrupole& q = cell.quadrupole;
    q.xx += c.quadrupole.xx + m * (3 * dx * dx - d2);
    q.yy += c.quadrupole.yy + m * (3 * dy * dy - d2);
    q.zz += c.quadrupole.zz + m * (3 * dz * dz - d2);
    q.xy += c.quadrupole.xy + m * 3 * dx * dy;
    q.xz += c.quadrupole.xz + m * 3 * dx * dz;
    q.yz += c.quadrupole.yz + m * 3 * dy * dz;
    cell.second_moment_trace += c.second_moment_trace + m * d2;
    reach = std::max(reach, std::sqrt(d2) + c.body_radius);
  }
  cell.body_radius = std::min(reach, farthest_corner_distance(cell.box, cell.centre));
  cell.b_max = std::max(cell.body_radius, farthest_corner_distance(box_of(cube), cell.centre));
  return cell;
}

// A cell's moments rounded to the bodies' precision T, as the traversal reads them.
// softened_trace = eps^2 sum m |d|^2, the one term of the softened expansion the traceless
// quadrupole leaves out. has_quadrupole is false where every body sits at the centre:
// the monopole is then exact, and skipping the rest keeps 0 x (1/r^7 overflowed) from ever
// producing a NaN at tiny softening.
template <class T>
struct CellMultipole {
  T x, y, z, mass;
  T qxx, qyy, qzz, qxy, qxz, qyz;
  T softened_trace;
  bool has_quadrupole;
};

template <class T>
CellMultipole<T> round_multipole(const CellMoments& cell, TreeFloat64 softening_squared) {
  const auto r = [](TreeFloat64 v) { return static_cast<T>(v); };
  const TracelessQuadrupole& q = cell.quadrupole;
  return {r(cell.centre.x),
          r(cell.centre.y),
          r(cell.centre.z),
          r(cell.mass),
          r(q.xx),
          r(q.yy),
          r(q.zz),
          r(q.xy),
          r(q.xz),
          r(q.yz),
          r(softening_squared * cell.second_moment_trace),
          cell.body_radius > 0};
}

// A pair_acceleration policy whose 1/sqrt was already computed, of the very argument it is given.
template <class V>
struct KnownInvSqrt {
  V inv_sqrt;
  NBODY_FORCE_INLINE V operator()(const V& /*x*/) const { return inv_sqrt; }
};

// Adds the acceleration a cell exerts on the target at (xi, yi, zi): the monopole through
// pair_acceleration (the suite's softened kernel, with the cell's mass at its centre of mass), plus
// the second-order term of the Taylor expansion of the same softened potential about the centre of
// mass. With r = target - centre and D = |r|^2 + eps^2 that term is
//   a_2 = Q r / D^(5/2) - 5/2 (r.Q.r) r / D^(7/2) + 5/2 eps^2 tr(S) r / D^(7/2),
// Q the traceless quadrupole and tr(S) = sum m |d|^2. The softened form costs no more than the
// unsoftened one (Q r / r^5 - 5/2 (r.Q.r) r / r^7) and is needed here: the criterion accepts
// small cells of a dense core at distances comparable to eps, where the unsoftened term (growing as
// 1/r^4) would exceed the softened monopole it corrects. Far away (|r| >> eps) the two agree.
// V is T, or a SIMD batch of T holding several targets; InvSqrt is pair_acceleration's policy.
template <class V, class T, class InvSqrt = ExactInvSqrt>
NBODY_FORCE_INLINE void accumulate_cell(const V& xi, const V& yi, const V& zi,
                                        const CellMultipole<T>& cell, const V& softening_squared,
                                        V& ax, V& ay, V& az, InvSqrt inv_sqrt = {}) {
  const V cx(cell.x), cy(cell.y), cz(cell.z);
  const V rx = xi - cx, ry = yi - cy, rz = zi - cz;
  const V d2 = softening_squared + rx * rx + ry * ry + rz * rz;
  const V inv_d = inv_sqrt(d2);
  // The monopole's |d|^2 + eps^2 is this D (its d = -r squares to the same values): one square
  // root and division serve both terms, where they are the most expensive instructions of each.
  const PairAcceleration<V> monopole = pair_acceleration<V>(
      xi, yi, zi, cx, cy, cz, V(cell.mass), softening_squared, KnownInvSqrt<V>{inv_d});
  ax += monopole.x;
  ay += monopole.y;
  az += monopole.z;
  if (!cell.has_quadrupole) return;
  const V inv_d2 = inv_d * inv_d;
  const V qrx = V(cell.qxx) * rx + V(cell.qxy) * ry + V(cell.qxz) * rz;
  const V qry = V(cell.qxy) * rx + V(cell.qyy) * ry + V(cell.qyz) * rz;
  const V qrz = V(cell.qxz) * rx + V(cell.qyz) * ry + V(cell.qzz) * rz;
  const V rqr = rx * qrx + ry * qry + rz * qrz;
  // Products left to right, each factor of 1/D applied to a term already of order b^2: no
  // intermediate overflows in float32 where eps and the distance are tiny.
  const V radial = V(T(2.5)) * (V(cell.softened_trace) - rqr) * inv_d2 * inv_d2 * inv_d2 * inv_d;
  ax += qrx * inv_d2 * inv_d2 * inv_d + rx * radial;
  ay += qry * inv_d2 * inv_d2 * inv_d + ry * radial;
  az += qrz * inv_d2 * inv_d2 * inv_d + rz * radial;
}

}  // namespace nbody::cpu::tree
