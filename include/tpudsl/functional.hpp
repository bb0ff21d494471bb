/// @file Functional models, graphs of layers (Keras' functional API): tpudsl::Functional, Node, Block,
/// Shared, Outputs, the merge layers (Add, Concatenate, ...), the graph's runner and its summary. A
/// program that declares only Sequential models does not include it, and does not compile it.
#ifndef TPUDSL_FUNCTIONAL_HPP
#define TPUDSL_FUNCTIONAL_HPP

#include <tpudsl/layers/dot_attention.hpp>
#include <tpudsl/layers/dot_attention_ops.hpp>
#include <tpudsl/layers/merge.hpp>
#include <tpudsl/layers/merge_ops.hpp>
#include <tpudsl/layers/multi_head_attention.hpp>
#include <tpudsl/layers/multi_head_attention_ops.hpp>
#include <tpudsl/model.hpp>
#include <tpudsl/model/graph_model.hpp>
#include <tpudsl/model/graph_summary.hpp>
#include <tpudsl/ops/node_graph.hpp>

#endif // !TPUDSL_FUNCTIONAL_HPP
