#pragma once
// The arithmetic of a Barnes-Hut tree cell, for host and device alike (FAIRNESS.md rule 1: one
// physics function for every kernel): the moments of a cell (accumulated in float64), the
// multipole rounded to the bodies' precision, and the interaction of a target body with a cell
// accepted by the opening criterion: the softened monopole of the suite's pair_acceleration plus
// the softened quadrupole correction. The CPU tree (nbody/cpu/tree/) and the GPU tree
// (nbody/gpu/tree/) both call these functions; with floating-point contraction off in both (GCC's
// ISO C++ default; nvcc's -fmad=false where the GPU accumulates moments) they round alike, so both
// trees hold the same moments to the bit.
#include <cmath>
#include <cstddef>

#include "nbody/bodies.hpp"
#include "nbody/host_device.hpp"
#include "nbody/morton_keys.hpp"
#include "nbody/physics.hpp"

namespace nbody {

// Q = sum m (3 d d^T - |d|^2 I) over the cell's bodies, d the offset from the centre of mass.
struct TracelessQuadrupole {
  double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
};

// An axis-aligned box; for a cell, the tightest one around its bodies.
struct Box {
  Vec3<double> low{0, 0, 0};
  Vec3<double> high{0, 0, 0};
};

struct CellMoments {
  double mass = 0;
  Vec3<double> centre{0, 0, 0};  // of mass; the bodies' mean where the mass is zero
  TracelessQuadrupole quadrupole;
  // sum m |d|^2: the trace the traceless quadrupole drops, which the softened expansion needs.
  double second_moment_trace = 0;
  // An upper bound of the distance from `centre` to any body of the cell (exact for a leaf): 0
  // where all its bodies coincide, and then the monopole is exact.
  double body_radius = 0;
  // The b_max of the opening criterion: the distance from `centre` to the farthest corner of the
  // cell's cube, or body_radius where that is larger (a body rounded onto a face). Measured to the
  // cube rather than to the bodies, theta is calibrated as Barnes and Hut's (a cell of side s with
  // its centre of mass in the middle opens within about 0.87 s / theta) and a sparse cell, whose
  // few bodies sit close together, is not accepted from nearer than a full one; at equal measured
  // accuracy both radii cost the same interactions (docs/tolerances.md, "Tree codes").
  double b_max = 0;
  Box box;  // the tightest box around the bodies
};

// std::min and std::max, comparison for comparison, callable from device code.
NBODY_HOST_DEVICE inline double smaller_of(double a, double b) {
  return b < a ? b : a;
}
NBODY_HOST_DEVICE inline double larger_of(double a, double b) {
  return a < b ? b : a;
}

NBODY_HOST_DEVICE inline Box box_of(const BoundingCube& cube) {
  return {{cube.x, cube.y, cube.z}, {cube.x + cube.size, cube.y + cube.size, cube.z + cube.size}};
}

NBODY_HOST_DEVICE inline double distance(const Vec3<double>& a, const Vec3<double>& b) {
  using std::sqrt;
  const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return sqrt(dx * dx + dy * dy + dz * dz);
}

// The distance from `point` to the farthest corner of `box`.
NBODY_HOST_DEVICE inline double farthest_corner_distance(const Box& box,
                                                         const Vec3<double>& point) {
  using std::sqrt;
  const double dx = larger_of(point.x - box.low.x, box.high.x - point.x);
  const double dy = larger_of(point.y - box.low.y, box.high.y - point.y);
  const double dz = larger_of(point.z - box.low.z, box.high.z - point.z);
  return sqrt(dx * dx + dy * dy + dz * dz);
}

// weighted / mass (the mean of the points summed in `sum` where the mass is zero), kept inside the
// box of the bodies, where the centre of mass lies: rounding could otherwise move it off the one
// point of coincident bodies, leaving them a radius and a quadrupole of rounding errors.
NBODY_HOST_DEVICE inline Vec3<double> centre_of_mass(const Box& box, const Vec3<double>& weighted,
                                                     double mass, const Vec3<double>& sum,
                                                     std::size_t points) {
  const double count = static_cast<double>(points);
  const Vec3<double> mean =
      mass > 0 ? Vec3<double>{weighted.x / mass, weighted.y / mass, weighted.z / mass}
               : Vec3<double>{sum.x / count, sum.y / count, sum.z / count};
  const auto clamp = [](double v, double low, double high) {
    return v < low ? low : (high < v ? high : v);
  };
  return {clamp(mean.x, box.low.x, box.high.x), clamp(mean.y, box.low.y, box.high.y),
          clamp(mean.z, box.low.z, box.high.z)};
}

NBODY_HOST_DEVICE inline void widen_box(Box& box, const Box& other) {
  box.low = {smaller_of(box.low.x, other.low.x), smaller_of(box.low.y, other.low.y),
             smaller_of(box.low.z, other.low.z)};
  box.high = {larger_of(box.high.x, other.high.x), larger_of(box.high.y, other.high.y),
              larger_of(box.high.z, other.high.z)};
}

// The moments of a cell come from its items (a leaf's bodies, another cell's children) in two
// passes: the centre of mass from every item's first-pass term, then the second moments about
// it from every item's second-pass term. Each term is computed from its item alone, so that a
// GPU may compute an item's terms on a lane of its own; the sums take them in item order, so that
// every device rounds alike.
struct MomentsFirstTerm {
  double mass;
  Vec3<double> weighted;  // mass times position
  Vec3<double> position;
  Box box;
};

struct MomentsSecondTerm {
  TracelessQuadrupole quadrupole;
  double second_moment_trace;
  double extent;  // a body's |d|^2; a child's reach, |d| + its body_radius
};

// The first pass's sums, started from the first item's term and then given every item's.
struct MomentsFirstSums {
  double mass = 0;
  Vec3<double> weighted{0, 0, 0}, position{0, 0, 0};
  Box box;
};

NBODY_HOST_DEVICE inline MomentsFirstSums start_first_sums(const MomentsFirstTerm& first_item) {
  MomentsFirstSums sums;
  sums.box = first_item.box;
  return sums;
}

NBODY_HOST_DEVICE inline void add_first_term(MomentsFirstSums& sums, const MomentsFirstTerm& t) {
  sums.mass += t.mass;
  sums.weighted = {sums.weighted.x + t.weighted.x, sums.weighted.y + t.weighted.y,
                   sums.weighted.z + t.weighted.z};
  sums.position = {sums.position.x + t.position.x, sums.position.y + t.position.y,
                   sums.position.z + t.position.z};
  widen_box(sums.box, t.box);
}

// The second pass's sums; extent is the largest term's.
struct MomentsSecondSums {
  TracelessQuadrupole quadrupole;
  double second_moment_trace = 0;
  double extent = 0;
};

NBODY_HOST_DEVICE inline void add_second_term(MomentsSecondSums& sums, const MomentsSecondTerm& t) {
  TracelessQuadrupole& q = sums.quadrupole;
  q.xx += t.quadrupole.xx;
  q.yy += t.quadrupole.yy;
  q.zz += t.quadrupole.zz;
  q.xy += t.quadrupole.xy;
  q.xz += t.quadrupole.xz;
  q.yz += t.quadrupole.yz;
  sums.second_moment_trace += t.second_moment_trace;
  sums.extent = larger_of(sums.extent, t.extent);
}

template <class T>
NBODY_HOST_DEVICE MomentsFirstTerm first_term_of_body(const Body<T>& body) {
  const double m = body.m, x = body.x, y = body.y, z = body.z;
  return {m, {m * x, m * y, m * z}, {x, y, z}, Box{{x, y, z}, {x, y, z}}};
}

// m (3 d d^T - |d|^2 I), m |d|^2 and |d|^2 of a body at d from the centre.
template <class T>
NBODY_HOST_DEVICE MomentsSecondTerm second_term_of_body(const Body<T>& body,
                                                        const Vec3<double>& centre) {
  const double m = body.m;
  const double dx = body.x - centre.x, dy = body.y - centre.y, dz = body.z - centre.z;
  const double r2 = dx * dx + dy * dy + dz * dz;
  return {{m * (3 * dx * dx - r2), m * (3 * dy * dy - r2), m * (3 * dz * dz - r2), m * 3 * dx * dy,
           m * 3 * dx * dz, m * 3 * dy * dz},
          m * r2,
          r2};
}

NBODY_HOST_DEVICE inline MomentsFirstTerm first_term_of_child(const CellMoments& c) {
  return {c.mass, {c.mass * c.centre.x, c.mass * c.centre.y, c.mass * c.centre.z}, c.centre, c.box};
}

// A child's quadrupole and trace shifted to the parent's centre by the parallel-axis theorem,
// and its reach from there.
NBODY_HOST_DEVICE inline MomentsSecondTerm second_term_of_child(const CellMoments& c,
                                                                const Vec3<double>& centre) {
  using std::sqrt;
  const double dx = c.centre.x - centre.x, dy = c.centre.y - centre.y, dz = c.centre.z - centre.z;
  const double d2 = dx * dx + dy * dy + dz * dz;
  const double m = c.mass;
  const TracelessQuadrupole& q = c.quadrupole;
  return {
      {q.xx + m * (3 * dx * dx - d2), q.yy + m * (3 * dy * dy - d2), q.zz + m * (3 * dz * dz - d2),
       q.xy + m * 3 * dx * dy, q.xz + m * 3 * dx * dz, q.yz + m * 3 * dy * dz},
      c.second_moment_trace + m * d2,
      sqrt(d2) + c.body_radius};
}

// The centre of mass of the first pass's sums over `count` items.
NBODY_HOST_DEVICE inline Vec3<double> centre_of_sums(const MomentsFirstSums& sums,
                                                     std::size_t count) {
  return centre_of_mass(sums.box, sums.weighted, sums.mass, sums.position, count);
}

// A cell's moments from its sums and its body_radius. `cube` is the box of the cell's cube.
NBODY_HOST_DEVICE inline CellMoments moments_from_sums(const MomentsFirstSums& first,
                                                       const Vec3<double>& centre,
                                                       const MomentsSecondSums& second,
                                                       double body_radius, const Box& cube) {
  CellMoments cell;
  cell.mass = first.mass;
  cell.box = first.box;
  cell.centre = centre;
  cell.quadrupole = second.quadrupole;
  cell.second_moment_trace = second.second_moment_trace;
  cell.body_radius = body_radius;
  cell.b_max = larger_of(body_radius, farthest_corner_distance(cube, centre));
  return cell;
}

// A leaf's moments from its sums: its body_radius is exact, the farthest body's distance.
NBODY_HOST_DEVICE inline CellMoments leaf_moments(const MomentsFirstSums& first,
                                                  const Vec3<double>& centre,
                                                  const MomentsSecondSums& second,
                                                  const Box& cube) {
  using std::sqrt;
  return moments_from_sums(first, centre, second, sqrt(second.extent), cube);
}

// Another cell's moments from its children's sums. body_radius is the smaller of two bounds that
// both contain every body: the farthest corner of the cell's tight box, and the farthest child's
// reach, |centre_c - centre| + body_radius_c.
NBODY_HOST_DEVICE inline CellMoments parent_moments(const MomentsFirstSums& first,
                                                    const Vec3<double>& centre,
                                                    const MomentsSecondSums& second,
                                                    const Box& cube) {
  return moments_from_sums(first, centre, second,
                           smaller_of(second.extent, farthest_corner_distance(first.box, centre)),
                           cube);
}

// The moments of one leaf, from its `count` (at least one) bodies, in two passes (the centre,
// then the offsets from it), so that no large raw second moment is ever differenced. `cube` is the
// box of the cell's cube.
template <class T>
NBODY_HOST_DEVICE CellMoments moments_of_bodies(const Body<T>* bodies, std::size_t count,
                                                const Box& cube) {
  MomentsFirstSums first = start_first_sums(first_term_of_body(bodies[0]));
  for (std::size_t k = 0; k < count; ++k) add_first_term(first, first_term_of_body(bodies[k]));
  const Vec3<double> centre = centre_of_sums(first, count);
  MomentsSecondSums second;
  for (std::size_t k = 0; k < count; ++k) {
    add_second_term(second, second_term_of_body(bodies[k], centre));
  }
  return leaf_moments(first, centre, second, cube);
}

// The moments of a cell from its `count` (at least one) children's (the upward pass): masses and
// centres add, the quadrupoles and traces shift to the new centre.
NBODY_HOST_DEVICE inline CellMoments moments_of_children(const CellMoments* children,
                                                         std::size_t count, const Box& cube) {
  MomentsFirstSums first = start_first_sums(first_term_of_child(children[0]));
  for (std::size_t k = 0; k < count; ++k) add_first_term(first, first_term_of_child(children[k]));
  const Vec3<double> centre = centre_of_sums(first, count);
  MomentsSecondSums second;
  for (std::size_t k = 0; k < count; ++k) {
    add_second_term(second, second_term_of_child(children[k], centre));
  }
  return parent_moments(first, centre, second, cube);
}

// A cell's moments rounded to the bodies' precision T, as the traversal reads them.
// minus_softened_trace = -eps^2 sum m |d|^2, the one term of the softened expansion the traceless
// quadrupole leaves out. Aligned as four T, so that a GPU reads it in 16- or 32-byte loads.
template <class T>
struct alignas(4 * sizeof(T)) CellMultipole {
  T x, y, z, mass;
  T qxx, qyy, qzz, qxy, qxz, qyz;
  T minus_softened_trace;  // negated, so that every ISA adds it to d.Q.d in one FMA
};

template <class T>
NBODY_HOST_DEVICE CellMultipole<T> round_multipole(const CellMoments& cell,
                                                   double softening_squared) {
  const TracelessQuadrupole& q = cell.quadrupole;
  return {static_cast<T>(cell.centre.x),
          static_cast<T>(cell.centre.y),
          static_cast<T>(cell.centre.z),
          static_cast<T>(cell.mass),
          static_cast<T>(q.xx),
          static_cast<T>(q.yy),
          static_cast<T>(q.zz),
          static_cast<T>(q.xy),
          static_cast<T>(q.xz),
          static_cast<T>(q.yz),
          static_cast<T>(-softening_squared * cell.second_moment_trace)};
}

// Adds the acceleration a cell exerts on the target at (xi, yi, zi): the monopole (the suite's
// softened kernel, pair_acceleration's, with the cell's mass at its centre of mass), plus the
// second-order term of the Taylor expansion of the same softened potential about the centre of
// mass. With d = centre - target and D = |d|^2 + eps^2 that term is
//   a_2 = D^(-5/2) (5/2 (d.Q.d - eps^2 tr(S)) d / D - Q d),
// Q the traceless quadrupole and tr(S) = sum m |d|^2. The softened form costs no more than the
// unsoftened one (d.Q.d - 0) and is needed here: the criterion accepts small cells of a dense core
// at distances comparable to eps, where the unsoftened term (growing as 1/r^4) would exceed the
// softened monopole it corrects. Far away (|d| >> eps) the two agree. Both terms are summed as
//   D^(-3/2) ((m + 5/2 (d.Q.d - eps^2 tr(S)) / D^2) d - Q d / D),
// three instructions a term fewer than adding them apart.
// V is T, or a SIMD batch of T holding several targets; InvSqrt is pair_acceleration's policy.
template <class V, class T, class InvSqrt = ExactInvSqrt>
NBODY_HOST_DEVICE NBODY_FORCE_INLINE void accumulate_cell(const V& xi, const V& yi, const V& zi,
                                                          const CellMultipole<T>& cell,
                                                          const V& softening_squared, V& ax, V& ay,
                                                          V& az, InvSqrt inv_sqrt = {}) {
  // pair_acceleration's d and D, written as it writes them; one 1/sqrt serves both terms.
  const V dx = V(cell.x) - xi, dy = V(cell.y) - yi, dz = V(cell.z) - zi;
  const V inv_d = inv_sqrt(softening_squared + dx * dx + dy * dy + dz * dz);
  const V inv_d2 = inv_d * inv_d;
  const V inv_d3 = inv_d2 * inv_d;
  const V qdx = V(cell.qxx) * dx + V(cell.qxy) * dy + V(cell.qxz) * dz;
  const V qdy = V(cell.qxy) * dx + V(cell.qyy) * dy + V(cell.qyz) * dz;
  const V qdz = V(cell.qxz) * dx + V(cell.qyz) * dy + V(cell.qzz) * dz;
  // Written so that FMA contraction takes each line in one instruction a component.
  const V dqd_less_trace = dx * qdx + V(cell.minus_softened_trace) + dy * qdy + dz * qdz;
  // Each factor of 1/D is applied to a term already of order m b^2 (the cell's size b): the
  // radial factor is of order m, Q d / D of order m b^2 / |d|, and the last factor, inv_d3, is the
  // monopole's, so nothing overflows in float32 at tiny eps and distance before the monopole
  // would. A cell whose bodies all sit at its centre has Q and tr(S) exactly 0, and 1/D is at most
  // 1/eps^2 (finite), so its quadrupole terms are exactly 0 and the term needs no test for it.
  const V radial = dqd_less_trace * inv_d2 * (V(T(2.5)) * inv_d2) + V(cell.mass);
  ax += (dx * radial - qdx * inv_d2) * inv_d3;
  ay += (dy * radial - qdy * inv_d2) * inv_d3;
  az += (dz * radial - qdz * inv_d2) * inv_d3;
}

}  // namespace nbody
