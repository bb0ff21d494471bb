// compile_fail.sanity: proves the harness can fail. The _ko twin is not C++.
#include <tpudsl/tpudsl.hpp>

#ifdef TPUDSL_COMPILE_FAIL
this_is_not_cxx;
#else
static_assert(tpudsl::Shape<2, 3>::size == 6);
#endif
