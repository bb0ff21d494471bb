/// @file Defines the SGEMM kernels every Dense and convolution layer runs on (xsimd, register- and
/// cache-blocked from the compile-time dimensions): one header for every family of kernels/gemm/.
///
///   gemm_nn:  C(M,N) (+)= A(M,K) . B(K,N)      forward:   Z = X . W
///   gemm_tn:  C(M,N) (+)= A(K,M)^T . B(K,N)    gradient:  dW = X^T . dZ
///   gemm_nt:  C(M,N) =    A(M,K) . B(N,K)^T    input grad: dX = dZ . W^T
/// All matrices are row-major and dense. The dimensions that come from the model are template
/// parameters; the one that comes from the batch is an argument.
///
///   gemm/toolkit.hpp     the micro-kernel toolkit (private): plan, epilogues, row sources, the
///                        register tile, row tiles, panels, packing
///   gemm/nn.hpp          gemm_nn, gemm_nn_bias: the blocked GEMM every family falls back on
///   gemm/tn.hpp          gemm_tn: B packed per block of K, A^T read in place or packed too
///   gemm/rows.hpp        gemm_nn_rows, gemm_nn_bias_rows: several blocks of rows under one B
///   gemm/micro_batches.hpp       gemm_tn_micro_batches, gemm_tn_micro_batches_columns: the kernel gradient over micro-batches
///   gemm/dot.hpp         gemm_nt_bias, gemm_nt_bias_rows: dot products along K for a narrow C
///   gemm/transpose.hpp   transpose, transposed_scratch, gemm_nt
#ifndef TPUDSL_KERNELS_GEMM_HPP
#define TPUDSL_KERNELS_GEMM_HPP

// In the order of definition that GCC's inliner and cloner walk (they visit the non-template
// functions, scratch_buffer, the transposes and the row lists, in the order they are defined): another
// order gives different machine code for the same source.
#include <tpudsl/kernels/gemm/toolkit.hpp>
#include <tpudsl/kernels/gemm/nn.hpp>
#include <tpudsl/kernels/gemm/transpose.hpp>
#include <tpudsl/kernels/gemm/rows.hpp>
#include <tpudsl/kernels/gemm/dot.hpp>
#include <tpudsl/kernels/gemm/micro_batches.hpp>
#include <tpudsl/kernels/gemm/tn.hpp>

#endif // !TPUDSL_KERNELS_GEMM_HPP
