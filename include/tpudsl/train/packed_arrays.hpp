/// @file Arrays of a graph of several inputs or outputs, given as tuples (`std::tie(tokens, meta)`, as
/// Keras takes lists), packed as its steps read them: one row of floats per sample holding every
/// input in declaration order (token ids checked against their vocabulary, then exact as floats),
/// and one holding every output's labels in Outputs' order (class ids for an output whose loss reads
/// them, else its targets). tpudsl::PackedArrays owns the rows; a model's `pack(x, y)` makes them.
#ifndef TPUDSL_TRAIN_PACKED_ARRAYS_HPP
#define TPUDSL_TRAIN_PACKED_ARRAYS_HPP

#include <tpudsl/data/array_ref.hpp>
#include <tpudsl/detail/text.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl {

namespace detail {
template <class Seq>
struct packer;
} // namespace detail

/// Arrays packed for a graph of several inputs or outputs (a model's `pack(x, y)`): `ref()` views them
/// as fit, evaluate and validation_data take arrays, valid while this object lives.
class PackedArrays {
public:
    PackedArrays() = default;
    PackedArrays(const PackedArrays&) = delete;
    PackedArrays& operator=(const PackedArrays&) = delete;
    PackedArrays(PackedArrays&&) = default;
    PackedArrays& operator=(PackedArrays&&) = default;

    [[nodiscard]] const dataset_ref& ref() const noexcept { return ref_; }

private:
    template <class>
    friend struct detail::packer;
    std::vector<float> x_rows_, y_rows_;
    dataset_ref ref_;
};

namespace detail {

template <class T>
inline constexpr bool is_tuple = false;
template <class... T>
inline constexpr bool is_tuple<std::tuple<T...>> = true;

/// True for a model whose steps read packed input rows (a graph of several inputs).
template <class Seq>
inline constexpr bool packed_inputs_of = requires { requires Seq::packed_inputs; };

/// Packs tuples of arrays for model Seq (a Functional), whose compiled losses say, per output,
/// whether its labels are class ids (`sparse`) and which label they ignore (`ignored`, optionals).
template <class Seq>
struct packer {
    /// "x[1] (Input "meta")": a part's name in messages.
    [[nodiscard]] static std::string
    part_name(const char* side, std::size_t k, std::string_view node, const char* kind)
    {
        return detail::concat({side, "[", std::to_string(k), "] (", kind, " \"", std::string(node), "\")"});
    }

    /// Refuses a part whose samples, shape or element type do not fit.
    static void
    check_part(const array_ref& a, const std::string& name, std::size_t samples, std::size_t size,
               const std::vector<std::size_t>& want)
    {
        if (a.samples() != samples)
            bad_input(detail::concat({name, " holds ", std::to_string(a.samples()), " samples, but the first part holds ",
                                      std::to_string(samples), "; every input and output needs one row per sample"}));
        const bool sample_ok = a.sample_size() == size &&
                               (a.shape.size() == 1 ? size == 1
                                                    : same_sample_shape(std::vector<std::size_t>(a.shape.begin() + 1, a.shape.end()), want));
        if (!sample_ok) {
            std::string expected = "(samples";
            for (const std::size_t d : want)
                expected += ", " + std::to_string(d);
            bad_input(detail::concat({name, " has shape ", a.shape_string(), ", but the model expects ", expected,
                                      want.size() == 1 && want[0] == 1 ? ") or (samples,)" : ")"}));
        }
        if (a.conversions == nullptr)
            bad_input(detail::concat({name, " holds ", dtype_name(a.type), ", which no input or label of a model reads"}));
        check_layout(a, name);
    }

    /// Writes `a` (n samples of `size` elements) into the rows at `at`: as ids below `bound` (or equal
    /// to `*ignored`, a loss's ignore_class) when `ids`.
    static void
    write(const array_ref& a, const std::string& name, bool ids, std::size_t size, std::size_t bound, const char* what,
          const char* range, float* rows, std::size_t width, std::size_t at, const std::int32_t* ignored = nullptr)
    {
        const std::size_t n = a.samples(), count = n * size;
        std::vector<float> values(count);
        if (ids) {
            std::vector<std::int32_t> converted(count);
            a.conversions->to_ids(a.data, count, size, bound, converted.data(), what, name.c_str(), range, ignored);
            for (std::size_t i = 0; i < count; ++i)
                values[i] = static_cast<float>(converted[i]);
        } else {
            a.conversions->to_floats(a.data, count, values.data());
        }
        for (std::size_t s = 0; s < n; ++s)
            std::copy_n(values.data() + s * size, size, rows + s * width + at);
    }

    /// The parts of a tuple of arrays, as array_refs.
    template <class... A>
    [[nodiscard]] static std::array<array_ref, sizeof...(A)>
    parts_of(const std::tuple<A...>& t)
    {
        return std::apply([](const auto&... a) { return std::array<array_ref, sizeof...(A)>{make_array_ref(a)...}; }, t);
    }

    /// The packed rows as an array of n samples of `dims`.
    template <class Dims>
    [[nodiscard]] static array_ref
    rows_ref(const std::vector<float>& rows, std::size_t n, const Dims& dims)
    {
        array_ref r;
        r.data = rows.data();
        r.type = dtype::float32;
        r.shape = {n};
        r.shape.insert(r.shape.end(), dims.begin(), dims.end());
        return r;
    }

    template <class... X>
    static array_ref
    inputs(const std::tuple<X...>& x, std::vector<float>& rows)
    {
        static_assert(sizeof...(X) == Seq::input_count,
                      "tpudsl: a graph of several inputs takes one array per Input, in declaration order "
                      "[TPUDSL_GRAPH_INPUT_COUNT]");
        constexpr std::size_t width = Seq::input_shape::size;
        const auto parts = parts_of(x);
        const std::size_t n = parts[0].samples();
        rows.assign(n * width, 0.0f);
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ([&] {
                using In = typename Seq::template input_at<K>;
                const std::string name = part_name("x", K, Seq::node_names[input_node<K>()], "Input");
                check_part(parts[K], name, n, In::shape::size,
                           std::vector<std::size_t>(In::shape::dims.begin(), In::shape::dims.end()));
                write(parts[K], name, Seq::input_integral[K], In::shape::size,
                      Seq::input_bounds[K] ? Seq::input_bounds[K] : (std::size_t{1} << 24), "token id",
                      "the Embedding's vocabulary", rows.data(), width, Seq::input_offsets[K]);
            }(),
             ...);
        }(std::make_index_sequence<sizeof...(X)>{});
        return rows_ref(rows, n, Seq::input_shape::dims);
    }

    template <class Sparse, class Ignored, class... Y>
    static array_ref
    targets(const std::tuple<Y...>& y, std::vector<float>& rows, const Sparse& sparse, const Ignored& ignored)
    {
        static_assert(sizeof...(Y) == Seq::output_count,
                      "tpudsl: a graph of several outputs takes one array of labels per output, in Outputs' order "
                      "[TPUDSL_GRAPH_OUTPUT_COUNT]");
        constexpr std::size_t width = Seq::output_shape::size;
        const auto parts = parts_of(y);
        const std::size_t n = parts[0].samples();
        rows.assign(n * width, 0.0f);
        [&]<std::size_t... H>(std::index_sequence<H...>) {
            ([&] {
                using shape = typename Seq::template output_shape_at<H>;
                constexpr std::size_t classes = shape::dims[shape::rank - 1], positions = shape::size / classes;
                const std::string name = part_name("y", H, Seq::node_names[Seq::output_nodes[H]], "output");
                std::vector<std::size_t> want(shape::dims.begin(), shape::dims.end());
                if (sparse[H])   // a class id per sample (per timestep of a (T, classes) output)
                    want = positions > 1 ? std::vector<std::size_t>(shape::dims.begin(), shape::dims.end() - 1)
                                         : std::vector<std::size_t>{1};
                check_part(parts[H], name, n, sparse[H] ? positions : shape::size, want);
                write(parts[H], name, sparse[H], sparse[H] ? positions : shape::size, classes, "label",
                      "the output's classes", rows.data(), width, Seq::output_offsets[H],
                      ignored[H] ? &*ignored[H] : nullptr);
            }(),
             ...);
        }(std::make_index_sequence<sizeof...(Y)>{});
        return rows_ref(rows, n, std::array<std::size_t, 1>{width});
    }

    template <std::size_t K>
    static constexpr std::size_t
    input_node() noexcept
    {
        std::size_t slot = 0;
        for (std::size_t i = 0; i < Seq::node_is_input.size(); ++i)
            if (Seq::node_is_input[i] && slot++ == K)
                return i;
        return 0;
    }

    /// x and y as the model's steps read them: each packed when given as a tuple, else as given.
    template <class X, class Y, class Sparse, class Ignored>
    static PackedArrays
    pack(const X& x, const Y& y, const Sparse& sparse, const Ignored& ignored)
    {
        PackedArrays p;
        if constexpr (is_tuple<X>)
            p.ref_.x = inputs(x, p.x_rows_);
        else
            p.ref_.x = make_array_ref(x);
        if constexpr (is_tuple<Y>)
            p.ref_.y = targets(y, p.y_rows_, sparse, ignored);
        else
            p.ref_.y = make_array_ref(y);
        if (p.ref_.x.samples() != p.ref_.y.samples())
            bad_input(detail::concat({"x holds ", std::to_string(p.ref_.x.samples()), " samples but y holds ",
                                      std::to_string(p.ref_.y.samples())}));
        return p;
    }
};

} // namespace detail
} // namespace tpudsl

#endif // !TPUDSL_TRAIN_PACKED_ARRAYS_HPP
