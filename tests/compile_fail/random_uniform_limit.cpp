// compile_fail.random_uniform_limit: the _ko twin must fail with our message; the _ok twin must compile.
#include <tpudsl/tpudsl.hpp>

using namespace tpudsl;

#ifdef TPUDSL_COMPILE_FAIL
// [random_uniform_limit]
using Init = initializers::RandomUniform<-0.05>;   // a negative half-width: the interval is empty
// [random_uniform_limit]
#else
// [random_uniform_limit_fixed]
using Init = initializers::RandomUniform<0.05>;
// [random_uniform_limit_fixed]
#endif
// A weight that starts from it, as a user layer declares one, filled as the model fills it.
using W = weight<weight_role::embeddings, Shape<4, 2>, Init>;
void
fill(float* w, const initializers::draw& d)
{
    W::initializer::fill<W::shape>(w, d);
}
