/// @file Deprecated: the former name of <tpudsl/model.hpp>, kept for one release (docs/packaging.md).
/// Include <tpudsl/model.hpp> instead.
#ifndef TPUDSL_CORE_HPP
#define TPUDSL_CORE_HPP

#include <tpudsl/model.hpp>

#endif // !TPUDSL_CORE_HPP
