// compile_fail.tpu_batch_not_divisible: Keras' TPU batch rule, made static.
#include <tpudsl/distribute/strategy.hpp>

#include <cstddef>

#ifdef TPUDSL_COMPILE_FAIL
// [tpu_batch_not_divisible]
constexpr std::size_t per_replica = tpudsl::TpuStrategy<8>::per_replica_batch<22>();
// [tpu_batch_not_divisible]
#else
// [tpu_batch_not_divisible_fixed]
constexpr std::size_t per_replica = tpudsl::TpuStrategy<8>::per_replica_batch<24>();
// [tpu_batch_not_divisible_fixed]
static_assert(per_replica == 3);
#endif
