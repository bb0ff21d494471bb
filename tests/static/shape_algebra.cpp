// Static tests of shapes and Keras' output arithmetic: a successful build is a pass.
#include <tpudsl/core/padding.hpp>
#include <tpudsl/core/shape.hpp>
#include <tpudsl/core/weight_spec.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

using namespace tpudsl;

static_assert(Shape<300>::rank == 1 && Shape<300>::size == 300);
static_assert(Shape<28, 28, 1>::rank == 3 && Shape<28, 28, 1>::size == 784);
static_assert(Shape<26, 26, 64>::dims == std::array<std::size_t, 3>{26, 26, 64});
static_assert(ShapeType<Shape<1, 2>> && !ShapeType<int>);
static_assert(std::is_same_v<shape_from_array_t<std::array<std::size_t, 2>{73, 32}>, Shape<73, 32>>);

// valid: floor((L - k) / s) + 1, or nothing when the window does not fit
static_assert(detail::window_output<Valid>(300, 5, 1) == 296);
static_assert(detail::window_output<Valid>(296, 2, 2) == 148);
static_assert(detail::window_output<Valid>(13, 2, 2) == 6);
static_assert(detail::window_output<Valid>(4, 5, 1) == 0);
static_assert(detail::window_output<Valid>(10, 3, 4) == 2);
// same: ceil(L / s), whatever the window
static_assert(detail::window_output<Same>(32, 3, 1) == 32);
static_assert(detail::window_output<Same>(15, 2, 2) == 8);
static_assert(detail::window_output<Same>(3, 4, 4) == 1);
// same padding: pad_total = max((ceil(L/s) - 1) * s + k - L, 0), the odd one at the end
static_assert(detail::pad_before<Same>(32, 3, 1) == 1);
static_assert(detail::pad_before<Same>(15, 2, 2) == 0);   // pad_total 1, all of it after
static_assert(detail::pad_before<Same>(5, 4, 1) == 1);    // pad_total 3: 1 before, 2 after
static_assert(detail::pad_before<Valid>(32, 3, 1) == 0);

static_assert(detail::rows_of<3> == 3 && detail::cols_of<3> == 3);
static_assert(detail::rows_of<Size2{3, 5}> == 3 && detail::cols_of<Size2{3, 5}> == 5);

static_assert(aligned_floats(0) == 0 && aligned_floats(1) == 16 && aligned_floats(16) == 16 &&
              aligned_floats(17) == 32);
