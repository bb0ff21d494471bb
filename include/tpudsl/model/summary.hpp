/// @file Defines tpudsl::summary, Keras' `model.summary()` table for a Sequential or Functional type.
#ifndef TPUDSL_MODEL_SUMMARY_HPP
#define TPUDSL_MODEL_SUMMARY_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/model/functional.hpp>
#include <tpudsl/model/sequential.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <iostream>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpudsl {

namespace detail {

/// Keras' `print_row`: each field is cut to its column's end and padded to it, and the character
/// before the next field becomes a space (so a long field keeps one space before the next column).
inline std::string
summary_row(std::span<const std::string> fields, std::span<const std::size_t> ends)
{
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0 && !line.empty())
            line.back() = ' ';
        line += fields[i];
        line.resize(std::min(line.size(), ends[i]));
        line.append(ends[i] - line.size(), ' ');
    }
    return line;
}
inline std::string
summary_row(std::array<std::string, 3> const& fields, std::array<std::size_t, 3> const& ends)
{
    return summary_row(std::span<const std::string>(fields), std::span<const std::size_t>(ends));
}

/// `{:,}`: 332856 -> "332,856".
inline std::string
with_thousands(std::size_t n)
{
    std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

/// One row of the summary table: what `summary<Model>` knows of a layer from its type, constants only.
struct summary_layer {
    std::string_view base_name;                 // "lstm", Keras' auto-name of the layer's class
    std::size_t same_name_count;                // the layers of that name before it: "lstm_1" for 1
    std::string_view class_name;                // "LSTM"
    std::span<const std::size_t> output_dims;   // {64}, printed "(None, 64)"
    std::size_t params;
};

/// A row's name and output shape as Keras prints them: "lstm_1 (LSTM)", "(None, 64)".
[[gnu::cold]] inline std::array<std::string, 2>
summary_texts(const summary_layer& layer)
{
    std::string name = auto_layer_name(layer.base_name, layer.same_name_count);
    name += concat({" (", layer.class_name, ")"});
    std::string shape = "(None";
    for (const std::size_t d : layer.output_dims)
        shape += concat({", ", std::to_string(d)});
    return {std::move(name), shape + ")"};
}

/// The table, one function for every model: `summary<Model>` gathers the rows and the counts.
[[gnu::cold]] inline void
print_summary(std::ostream& os, std::string_view model_name, std::span<const summary_layer> layers, std::size_t total,
              std::size_t trainable, std::size_t non_trainable)
{
    constexpr std::size_t line_length = 65;
    const std::array<std::size_t, 3> ends{29, 55, 65};
    const std::string rule_thin(line_length, '_');
    const std::string rule_thick(line_length, '=');

    os << "Model: \"" << model_name << "\"\n" << rule_thin << '\n';
    os << summary_row({"Layer (type)", "Output Shape", "Param #"}, ends) << '\n' << rule_thick << '\n';
    for (std::size_t i = 0; i < layers.size(); ++i) {
        auto [name, shape] = summary_texts(layers[i]);
        os << summary_row({std::move(name), std::move(shape), std::to_string(layers[i].params)}, ends) << '\n'
           << (i + 1 == layers.size() ? rule_thick : rule_thin) << '\n';
    }
    os << "Total params: " << with_thousands(total) << '\n';
    os << "Trainable params: " << with_thousands(trainable) << '\n';
    os << "Non-trainable params: " << with_thousands(non_trainable) << '\n';
    os << rule_thin << '\n';
}

/// One node of a Functional model as its summary sees it: a row (an Input's is an InputLayer's) and
/// the nodes it reads.
struct summary_node {
    std::string_view name;                      // the node's name
    std::string_view class_name;                // "Conv2D", "InputLayer"
    std::span<const std::size_t> output_dims;
    bool input;                                 // an InputLayer: its shape prints as a list, "[(None, 6)]"
    std::size_t params;
    std::span<const std::size_t> sources;       // the nodes it reads, in order
};

/// Keras' order of a Functional model's layers (`model.layers`, tf.keras 2.x's _map_graph_network):
/// by depth (the longest path to an output) from the inputs down, ties in the order a depth-first
/// walk from the outputs first meets them. Also whether Keras prints it as a Sequential (one node
/// per depth, none reading several).
[[gnu::cold]] inline bool
keras_layer_order(std::span<const summary_node> nodes, std::span<const std::size_t> outputs, std::size_t* order)
{
    // A node's number in a walk from the outputs (numbered when first met, before its sources, as
    // Keras numbers them), and the walk's finishing order (a node after all its sources).
    const std::size_t n = nodes.size();
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> met(n, none), next_source(n, 0), stack, post, depth(n, 0);
    std::size_t numbered = 0;
    for (const std::size_t o : outputs) {
        if (met[o] != none)
            continue;
        met[o] = numbered++;
        stack.push_back(o);
        while (!stack.empty()) {
            const std::size_t v = stack.back();
            if (next_source[v] < nodes[v].sources.size()) {
                const std::size_t s = nodes[v].sources[next_source[v]++];
                if (met[s] == none) {
                    met[s] = numbered++;
                    stack.push_back(s);
                }
            } else {
                post.push_back(v);
                stack.pop_back();
            }
        }
    }
    for (std::size_t k = post.size(); k-- > 0;)
        for (const std::size_t s : nodes[post[k]].sources)
            depth[s] = std::max(depth[s], depth[post[k]] + 1);
    // By depth from the inputs down, ties by the walk's numbers (an insertion sort: a few hundred rows).
    for (std::size_t k = 0; k < post.size(); ++k) {
        const std::size_t v = post[k];
        std::size_t j = k;
        for (; j > 0; --j) {
            const std::size_t u = order[j - 1];
            if (depth[u] > depth[v] || (depth[u] == depth[v] && met[u] < met[v]))
                break;
            order[j] = u;
        }
        order[j] = v;
    }
    bool sequential_like = true;
    for (std::size_t k = 0; k < post.size(); ++k) {
        const std::size_t v = order[k];
        const bool shares_depth = (k > 0 && depth[order[k - 1]] == depth[v]) ||
                                  (k + 1 < post.size() && depth[order[k + 1]] == depth[v]);
        sequential_like = sequential_like && !shares_depth && nodes[v].sources.size() <= 1;
    }
    return sequential_like;
}

/// A Functional model's table, as tf.keras 2.x prints it: with a "Connected to" column (98 columns,
/// positions .33/.55/.67/1, one line per inbound tensor, `name[0][0]`), or as a Sequential's when the
/// graph is a chain; an InputLayer row first.
[[gnu::cold]] inline void
print_functional_summary(std::ostream& os, std::string_view model_name, std::span<const summary_node> nodes,
                         std::span<const std::size_t> outputs, std::size_t total, std::size_t trainable,
                         std::size_t non_trainable)
{
    std::vector<std::size_t> order(nodes.size());
    const bool sequential_like = keras_layer_order(nodes, outputs, order.data());
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
    os << "Model: \"" << model_name << "\"\n" << rule_thin << '\n' << row() << '\n' << rule_thick << '\n';
    for (std::size_t k = 0; k < order.size(); ++k) {
        const summary_node& v = nodes[order[k]];
        fields[0] = concat({v.name, " (", v.class_name, ")"});
        fields[1] = v.input ? "[(None" : "(None";
        for (const std::size_t d : v.output_dims)
            fields[1] += concat({", ", std::to_string(d)});
        fields[1] += v.input ? ")]" : ")";
        fields[2] = std::to_string(v.params);
        for (std::size_t c = 0; c == 0 || c < v.sources.size(); ++c) {
            fields[3] = c < v.sources.size() ? concat({nodes[v.sources[c]].name, "[0][0]"}) : std::string();
            os << row() << '\n';
            if (sequential_like)
                break;
            fields[0] = fields[1] = fields[2] = std::string();
        }
        os << (k + 1 == order.size() ? rule_thick : rule_thin) << '\n';
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
    template <std::size_t I>
    static constexpr summary_node
    row() noexcept
    {
        constexpr std::size_t slot = Model::node_slot[I];
        const std::span<const std::size_t> sources(Model::node_sources.data() + Model::node_first_source[I],
                                                   Model::node_first_source[I + 1] - Model::node_first_source[I]);
        if constexpr (Model::node_is_input[I]) {
            using In = typename Model::template input_at<slot>;
            return {Model::node_names[I], "InputLayer", In::shape::dims, true, 0, sources};
        } else {
            using B = typename Model::template layer<slot>;
            return {Model::node_names[I], B::spec::class_name, B::output_shape::dims, false, B::param_count, sources};
        }
    }
    static constexpr auto rows = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<summary_node, count>{row<I>()...};
    }(std::make_index_sequence<count>{});
};

} // namespace detail

/// Prints Keras' summary table of `Model` (tf.keras 2.x, as TF 2.0-2.6 print it: 65 columns,
/// positions .45/.85/1, zero-based auto-names, counts with thousands separators in the footer).
/// A Functional model prints tf.keras 2.x's table of a functional model (`Model: "model"`, an
/// InputLayer row, a "Connected to" column; a chain prints as a Sequential, InputLayer included).
/// @tparam Model a `Sequential<...>` or a `Functional<...>`
/// @param model_name the name in the title: "sequential", or "model" for a Functional, by default
template <class Model>
void
summary(std::ostream& os = std::cout, std::string_view model_name = {})
{
    if constexpr (requires { Model::node_names; }) {
        using rows = detail::functional_summary_rows<Model>;
        detail::print_functional_summary(os, model_name.empty() ? "model" : model_name, rows::rows,
                                         Model::output_nodes, Model::param_count, Model::trainable_param_count,
                                         Model::non_trainable_param_count);
    } else {
        // Constants of the type: the text is made by print_summary, one function for every model.
        static constexpr auto layers = []<std::size_t... I>(std::index_sequence<I...>) {
            return std::array<detail::summary_layer, Model::layer_count>{detail::summary_layer{
                Model::template layer<I>::spec::base_name, Model::template same_name_count<I>,
                Model::template layer<I>::spec::class_name, Model::template layer<I>::output_shape::dims,
                Model::template layer<I>::param_count}...};
        }(std::make_index_sequence<Model::layer_count>{});
        detail::print_summary(os, model_name.empty() ? "sequential" : model_name, layers, Model::param_count,
                              Model::trainable_param_count, Model::non_trainable_param_count);
    }
}

} // namespace tpudsl

#endif // !TPUDSL_MODEL_SUMMARY_HPP
