/// @file Defines tpudsl::summary, Keras' `model.summary()` table for a Sequential type.
#ifndef TPUDSL_MODEL_SUMMARY_HPP
#define TPUDSL_MODEL_SUMMARY_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/model/sequential.hpp>

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
summary_row(std::array<std::string, 3> const& fields, std::array<std::size_t, 3> const& ends)
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

/// One row of the summary table: what `summary<Model>` knows of a layer from its type.
struct summary_layer {
    std::string name;           // "lstm (LSTM)"
    std::string output_shape;   // "(None, 64)"
    std::size_t params;
};

/// The table, one function for every model: `summary<Model>` gathers the rows and the counts.
inline void
print_summary(std::ostream& os, std::string_view model_name, std::span<const summary_layer> layers, std::size_t total,
              std::size_t trainable, std::size_t non_trainable)
{
    constexpr std::size_t line_length = 65;
    const std::array<std::size_t, 3> ends{29, 55, 65};
    const std::string rule_thin(line_length, '_');
    const std::string rule_thick(line_length, '=');

    os << "Model: \"" << model_name << "\"\n" << rule_thin << '\n';
    os << summary_row({"Layer (type)", "Output Shape", "Param #"}, ends) << '\n' << rule_thick << '\n';
    for (std::size_t i = 0; i < layers.size(); ++i)
        os << summary_row({layers[i].name, layers[i].output_shape, std::to_string(layers[i].params)}, ends) << '\n'
           << (i + 1 == layers.size() ? rule_thick : rule_thin) << '\n';
    os << "Total params: " << with_thousands(total) << '\n';
    os << "Trainable params: " << with_thousands(trainable) << '\n';
    os << "Non-trainable params: " << with_thousands(non_trainable) << '\n';
    os << rule_thin << '\n';
}

} // namespace detail

/// Prints Keras' summary table of `Model` (tf.keras 2.x, as TF 2.0-2.6 print it: 65 columns,
/// positions .45/.85/1, zero-based auto-names, counts with thousands separators in the footer).
/// @tparam Model a `Sequential<...>`
template <class Model>
void
summary(std::ostream& os = std::cout, std::string_view model_name = "sequential")
{
    const auto layers = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<detail::summary_layer, Model::layer_count>{detail::summary_layer{
            detail::concat({Model::template layer_name<I>(), " (", Model::template layer<I>::spec::class_name, ")"}),
            Model::template layer<I>::output_shape::keras_string(), Model::template layer<I>::param_count}...};
    }(std::make_index_sequence<Model::layer_count>{});
    detail::print_summary(os, model_name, layers, Model::param_count, Model::trainable_param_count,
                          Model::non_trainable_param_count);
}

} // namespace tpudsl

#endif // !TPUDSL_MODEL_SUMMARY_HPP
