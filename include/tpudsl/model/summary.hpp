/// @file Defines tpudsl::summary, Keras' `model.summary()` table for a Sequential or Functional type.
#ifndef TPUDSL_MODEL_SUMMARY_HPP
#define TPUDSL_MODEL_SUMMARY_HPP

#include <tpudsl/detail/text.hpp>
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

/// Prints a Functional model's table (model/graph_summary.hpp, which tpudsl/functional.hpp includes).
template <class Model>
void
print_functional_summary_of(std::ostream& os, std::string_view model_name);

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
        detail::print_functional_summary_of<Model>(os, model_name.empty() ? "model" : model_name);
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
