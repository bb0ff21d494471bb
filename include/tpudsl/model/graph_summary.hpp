/// @file The summary of a Functional model (tf.keras 2.x's table with a "Connected to" column) and
/// Keras' order of its layers (`model.layers`), which its Keras weight files follow too. Reads only
/// the model's constants (node names, sources, outputs, layer_weights_of).
#ifndef TPUDSL_MODEL_GRAPH_SUMMARY_HPP
#define TPUDSL_MODEL_GRAPH_SUMMARY_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/model/summary.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpudsl::detail {

/// One node of a Functional model as its summary sees it: a row (an Input's is an InputLayer's) and
/// the nodes it reads. A Shared node prints no row: it is call `call` of the layer declared by node
/// `layer_node` (a node that declares its layer is its own layer_node, call 0).
struct summary_node {
    std::string_view name;                      // the node's name
    std::string_view class_name;                // "Conv2D", "InputLayer"
    std::span<const std::size_t> output_dims;
    bool input;                                 // an InputLayer: its shape prints as a list, "[(None, 6)]"
    std::size_t params;
    std::span<const std::size_t> sources;       // the nodes it reads, in order
    std::size_t layer_node;
    std::size_t call;
};

/// Keras' order of a Functional model's layers (`model.layers`, tf.keras 2.x's _map_graph_network):
/// by depth (the longest path to an output, a shared layer's the largest of its calls') from the
/// inputs down, ties in the order a depth-first walk from the outputs first meets them. Writes the
/// layers' nodes to `order`; returns how many, and whether Keras prints the model as a Sequential
/// (one node per depth, none reading several, no layer called twice).
struct keras_layers {
    std::size_t count = 0;
    bool sequential_like = true;
};
[[gnu::cold]] inline keras_layers
keras_layer_order(std::span<const summary_node> nodes, std::span<const std::size_t> outputs, std::size_t* order)
{
    // A layer's number in a walk from the outputs (numbered when one of its nodes is first met, before
    // that node's sources, as Keras numbers them), and the walk's finishing order of the nodes (a node
    // after all its sources).
    const std::size_t n = nodes.size();
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> met(n, none), next_source(n, 0), stack, post, depth(n, 0), layer_depth(n, 0);
    std::vector<bool> seen(n, false);
    std::size_t numbered = 0;
    const auto visit = [&](std::size_t v) {
        seen[v] = true;
        if (met[nodes[v].layer_node] == none)
            met[nodes[v].layer_node] = numbered++;
        stack.push_back(v);
    };
    for (const std::size_t o : outputs) {
        if (seen[o])
            continue;
        visit(o);
        while (!stack.empty()) {
            const std::size_t v = stack.back();
            if (next_source[v] < nodes[v].sources.size()) {
                const std::size_t s = nodes[v].sources[next_source[v]++];
                if (!seen[s])
                    visit(s);
            } else {
                post.push_back(v);
                stack.pop_back();
            }
        }
    }
    keras_layers result;
    for (std::size_t k = post.size(); k-- > 0;) {
        const std::size_t v = post[k], l = nodes[v].layer_node;
        depth[v] = std::max(depth[v], layer_depth[l]);
        layer_depth[l] = depth[v];
        for (const std::size_t s : nodes[v].sources)
            depth[s] = std::max(depth[s], depth[v] + 1);
        result.sequential_like = result.sequential_like && nodes[v].sources.size() <= 1 && l == v;
    }
    // By depth from the inputs down, ties by the walk's numbers (an insertion sort: a few hundred rows).
    for (const std::size_t v : post) {
        if (nodes[v].layer_node != v)
            continue;
        std::size_t j = result.count++;
        for (; j > 0; --j) {
            const std::size_t u = order[j - 1];
            if (layer_depth[u] > layer_depth[v] || (layer_depth[u] == layer_depth[v] && met[u] < met[v]))
                break;
            order[j] = u;
        }
        order[j] = v;
    }
    for (std::size_t k = 0; k < post.size(); ++k)   // one node per depth
        for (std::size_t j = 0; j < k; ++j)
            if (depth[post[j]] == depth[post[k]])
                result.sequential_like = false;
    return result;
}

/// A Functional model's table, as tf.keras 2.x prints it: with a "Connected to" column (98 columns,
/// positions .33/.55/.67/1, one line per inbound tensor, `name[call][0]`), or as a Sequential's when
/// the graph is a chain; an InputLayer row first. A layer called on inputs of different shapes shows
/// its output shape as "multiple".
[[gnu::cold]] inline void
print_functional_summary(std::ostream& os, std::string_view model_name, std::span<const summary_node> nodes,
                         std::span<const std::size_t> outputs, std::size_t total, std::size_t trainable,
                         std::size_t non_trainable)
{
    std::vector<std::size_t> order(nodes.size());
    const keras_layers layers = keras_layer_order(nodes, outputs, order.data());
    const bool sequential_like = layers.sequential_like;
    const std::size_t line_length = sequential_like ? 65 : 98;
    const std::array<std::size_t, 4> ends = sequential_like ? std::array<std::size_t, 4>{29, 55, 65, 65}
                                                            : std::array<std::size_t, 4>{32, 53, 65, 98};
    const std::size_t columns = sequential_like ? 3 : 4;
    const std::string rule_thin(line_length, '_');
    const std::string rule_thick(line_length, '=');
    std::array<std::string, 4> fields{"Layer (type)", "Output Shape", "Param #", "Connected to"};
    const auto row = [&] {
        return summary_row(std::span<const std::string>(fields.data(), columns),
                           std::span<const std::size_t>(ends.data(), columns));
    };
    const auto shape_of = [](const summary_node& v) {
        std::string s = v.input ? "[(None" : "(None";
        for (const std::size_t d : v.output_dims)
            s += concat({", ", std::to_string(d)});
        return s + (v.input ? ")]" : ")");
    };
    os << "Model: \"" << model_name << "\"\n" << rule_thin << '\n' << row() << '\n' << rule_thick << '\n';
    std::vector<std::string> connections;
    for (std::size_t k = 0; k < layers.count; ++k) {
        const summary_node& v = nodes[order[k]];
        fields[0] = concat({v.name, " (", v.class_name, ")"});
        fields[1] = shape_of(v);
        fields[2] = std::to_string(v.params);
        connections.clear();
        for (const summary_node& use : nodes)   // the layer's calls, in order
            if (use.layer_node == order[k]) {
                if (shape_of(use) != fields[1])
                    fields[1] = "multiple";
                for (const std::size_t s : use.sources)
                    connections.push_back(concat({nodes[nodes[s].layer_node].name, "[", std::to_string(nodes[s].call),
                                                  "][0]"}));
            }
        for (std::size_t c = 0; c == 0 || c < connections.size(); ++c) {
            fields[3] = c < connections.size() ? connections[c] : std::string();
            os << row() << '\n';
            if (sequential_like)
                break;
            fields[0] = fields[1] = fields[2] = std::string();
        }
        os << (k + 1 == layers.count ? rule_thick : rule_thin) << '\n';
    }
    os << "Total params: " << with_thousands(total) << '\n';
    os << "Trainable params: " << with_thousands(trainable) << '\n';
    os << "Non-trainable params: " << with_thousands(non_trainable) << '\n';
    os << rule_thin << '\n';
}

/// A Functional model's nodes as summary_node rows, constants of the type.
template <class Model>
struct functional_summary_rows {
    static constexpr std::size_t count = Model::node_count;
    /// Which call of its layer layer `slot` is (0: the node that declares it).
    static constexpr std::size_t
    call_of(std::size_t slot) noexcept
    {
        std::size_t c = 0;
        for (std::size_t l = 0; l < slot; ++l)
            c += Model::layer_weights_of[l] == Model::layer_weights_of[slot] ? 1 : 0;
        return c;
    }
    template <std::size_t I>
    static constexpr summary_node
    row() noexcept
    {
        constexpr std::size_t slot = Model::node_slot[I];
        const std::span<const std::size_t> sources(Model::node_sources.data() + Model::node_first_source[I],
                                                   Model::node_first_source[I + 1] - Model::node_first_source[I]);
        if constexpr (Model::node_is_input[I]) {
            using In = typename Model::template input_at<slot>;
            return {Model::node_names[I], "InputLayer", In::shape::dims, true, 0, sources, I, 0};
        } else {
            using B = typename Model::template layer<slot>;
            constexpr std::size_t owner = Model::layer_node[Model::layer_weights_of[slot]];
            return {Model::node_names[I], B::spec::class_name, B::output_shape::dims, false, B::param_count, sources,
                    owner, call_of(slot)};
        }
    }
    static constexpr auto rows = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<summary_node, count>{row<I>()...};
    }(std::make_index_sequence<count>{});
};

template <class Model>
void
print_functional_summary_of(std::ostream& os, std::string_view model_name)
{
    using rows = functional_summary_rows<Model>;
    print_functional_summary(os, model_name, rows::rows, Model::output_nodes, Model::param_count,
                             Model::trainable_param_count, Model::non_trainable_param_count);
}

} // namespace tpudsl::detail

#endif // !TPUDSL_MODEL_GRAPH_SUMMARY_HPP
