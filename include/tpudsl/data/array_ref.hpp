/// @file Defines array_ref, the boundary where run-time arrays (xtensor containers, std::vector)
/// enter a model: element type, shape and values are checked there, once, with messages that say
/// what, where and what was expected.
#ifndef TPUDSL_DATA_ARRAY_REF_HPP
#define TPUDSL_DATA_ARRAY_REF_HPP

#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl {

/// The element types an array may hold where it enters a model: the model reads float32 or int32,
/// and fit/evaluate/predict convert the others once, where they enter (data/convert.hpp).
enum class dtype { float32, int32, float64, int8, uint8, int16, uint16, uint32, int64, uint64, other };

template <class T>
inline constexpr dtype dtype_of = std::is_same_v<T, float>           ? dtype::float32
                                  : std::is_same_v<T, std::int32_t>  ? dtype::int32
                                  : std::is_same_v<T, double>        ? dtype::float64
                                  : std::is_same_v<T, std::int8_t>   ? dtype::int8
                                  : std::is_same_v<T, std::uint8_t>  ? dtype::uint8
                                  : std::is_same_v<T, std::int16_t>  ? dtype::int16
                                  : std::is_same_v<T, std::uint16_t> ? dtype::uint16
                                  : std::is_same_v<T, std::uint32_t> ? dtype::uint32
                                  : std::is_same_v<T, std::int64_t>  ? dtype::int64
                                  : std::is_same_v<T, std::uint64_t> ? dtype::uint64
                                                                     : dtype::other;

[[nodiscard]] inline std::string
dtype_name(dtype t)
{
    switch (t) {
    case dtype::float32: return "float32";
    case dtype::int32: return "int32";
    case dtype::float64: return "float64";
    case dtype::int8: return "int8";
    case dtype::uint8: return "uint8";
    case dtype::int16: return "int16";
    case dtype::uint16: return "uint16";
    case dtype::uint32: return "uint32";
    case dtype::int64: return "int64";
    case dtype::uint64: return "uint64";
    case dtype::other: break;
    }
    return "an unsupported element type";
}

namespace detail {

/// A number as Python prints it (2.5, 1e+20, 7): the shortest text that reads back the same.
template <class T>
[[nodiscard]] std::string
number_text(T v)
{
    if constexpr (std::is_integral_v<T>) {
        return std::to_string(+v);   // + prints an int8/uint8 as a number, not a character
    } else {
        char buf[32];
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v));
        return ec == std::errc{} ? std::string(buf, end) : std::to_string(v);
    }
}

/// Where element i of an array of samples of `size` elements lies: "sample s" (and ", position p"
/// when a sample holds more than one).
[[nodiscard]] inline std::string
element_place(std::size_t i, std::size_t size)
{
    return detail::concat({"sample ", std::to_string(i / size), size > 1 ? ", position " : "",
                           size > 1 ? std::to_string(i % size) : ""});
}

/// Refuses an id (`value` as number_text prints it) at element i: not a whole number, or outside
/// [0, bound). Out of line and cold: the conversions of every element type share it.
[[noreturn, gnu::cold, gnu::noinline]] inline void
refuse_id(const std::string& value, bool whole, std::size_t i, std::size_t size, std::size_t bound, const char* what,
          const char* name, const char* range, const std::int32_t* ignored)
{
    if (!whole)
        bad_input(detail::concat({what, " ", value, " at ", element_place(i, size), " of ", name,
                                  " is not a whole number, but ", range,
                                  " are whole numbers (Keras would truncate it without a word)"}));
    bad_input(detail::concat({what, " ", value, " at ", element_place(i, size), " of ", name, " is outside [0, ",
                              std::to_string(bound), ") (", range, ")",
                              ignored ? " and is not the loss's ignore_class, " : "",
                              ignored ? std::to_string(*ignored) : ""}));
}

/// Converts the n whole numbers of v to int32 in [0, bound) (or equal to `*ignored`, a loss's
/// ignore_class, when it is given), or refuses the first that is not one, with `what` ("label",
/// "token id"), its place and `range` (what the bound is).
template <class T>
void
convert_ids(const T* v, std::size_t n, std::size_t size, std::size_t bound, std::int32_t* out, const char* what,
            const char* name, const char* range, const std::int32_t* ignored)
{
    for (std::size_t i = 0; i < n; ++i) {
        const T x = v[i];
        bool whole = true, in_range;
        if constexpr (std::is_integral_v<T>) {
            in_range = (std::cmp_greater_equal(x, 0) && std::cmp_less(x, bound)) || (ignored && std::cmp_equal(x, *ignored));
        } else {
            whole = std::trunc(x) == x;   // false for NaN, the infinities and fractions
            in_range = whole && ((x >= 0 && static_cast<long double>(x) < static_cast<long double>(bound)) ||
                                 (ignored && static_cast<long double>(x) == *ignored));
        }
        if (!in_range) [[unlikely]]
            refuse_id(number_text(x), whole, i, size, bound, what, name, range, ignored);
        out[i] = static_cast<std::int32_t>(x);
    }
}

/// The two conversions an array's elements may need where they enter a model (data/convert.hpp):
/// to int32 ids checked against a bound (token ids, class ids), and to float32 (inputs, targets).
/// make_array_ref takes them for the element type it sees, so a program compiles them for the
/// element types it passes, not for all ten that dtype names.
struct element_conversions {
    void (*to_ids)(const void* v, std::size_t n, std::size_t size, std::size_t bound, std::int32_t* out,
                   const char* what, const char* name, const char* range, const std::int32_t* ignored);
    void (*to_floats)(const void* v, std::size_t n, float* out);
};

template <class T>
inline constexpr element_conversions conversions_of{
    [](const void* v, std::size_t n, std::size_t size, std::size_t bound, std::int32_t* out, const char* what,
       const char* name, const char* range, const std::int32_t* ignored) {
        convert_ids(static_cast<const T*>(v), n, size, bound, out, what, name, range, ignored);
    },
    [](const void* v, std::size_t n, float* out) {
        const T* t = static_cast<const T*>(v);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = static_cast<float>(t[i]);   // float64 to the nearest float32, as Keras casts
    }};

} // namespace detail

/// A non-owning view of a run-time array: its first dimension counts samples. Its elements are read
/// row-major from `data`; an array laid out otherwise (column-major, a strided view) keeps its
/// strides in `strides`, and the checks refuse it by name.
struct array_ref {
    const void* data = nullptr;
    dtype type = dtype::other;
    std::vector<std::size_t> shape;
    std::vector<std::ptrdiff_t> strides;   // in elements; empty: row-major contiguous
    /// How the elements convert to the model's types (make_array_ref sets it for every type dtype
    /// names); null: they are not converted, and the checks name the element type they refuse.
    const detail::element_conversions* conversions = nullptr;

    /// True when the elements lie row-major, one after another, from `data`.
    [[nodiscard]] bool
    row_major() const noexcept
    {
        return strides.empty();
    }

    [[nodiscard]] std::size_t
    samples() const noexcept
    {
        return shape.empty() ? 0 : shape[0];
    }
    [[nodiscard]] std::size_t
    sample_size() const noexcept
    {
        std::size_t n = 1;
        for (std::size_t d = 1; d < shape.size(); ++d)
            n *= shape[d];
        return n;
    }
    [[nodiscard]] std::string
    shape_string() const
    {
        std::string s = "(";
        for (std::size_t d = 0; d < shape.size(); ++d)
            s += (d ? ", " : "") + std::to_string(shape[d]);
        return s + (shape.size() == 1 ? ",)" : ")");
    }
    template <class T>
    [[nodiscard]] const T*
    as() const noexcept
    {
        return static_cast<const T*>(data);
    }
};

/// An array_ref of an xtensor container (anything with data() and shape()) or of a std::vector
/// (one sample per element).
template <class A>
[[nodiscard]] array_ref
make_array_ref(const A& a)
{
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(a.data())>>;
    array_ref r;
    r.data = a.data();
    if constexpr (requires { a.data_offset(); })   // a view starts inside its container
        r.data = a.data() + a.data_offset();
    r.type = dtype_of<T>;
    if constexpr (dtype_of<T> != dtype::other)
        r.conversions = &detail::conversions_of<T>;
    if constexpr (requires { a.shape(); }) {
        for (auto d : a.shape())
            r.shape.push_back(static_cast<std::size_t>(d));
    } else {
        r.shape.push_back(a.size());
    }
    if constexpr (requires { a.strides(); }) {
        // Row-major contiguous: each dimension's stride is the product of the extents after it (a
        // dimension of extent 1 may have any stride).
        std::ptrdiff_t expected = 1;
        bool row_major = true;
        const auto& strides = a.strides();
        for (std::size_t d = r.shape.size(); d-- > 0;) {
            if (r.shape[d] > 1 && static_cast<std::ptrdiff_t>(strides[d]) != expected)
                row_major = false;
            expected *= static_cast<std::ptrdiff_t>(r.shape[d]);
        }
        if (!row_major)
            for (auto st : strides)
                r.strides.push_back(static_cast<std::ptrdiff_t>(st));
    }
    return r;
}

/// Bytes of one element of type t (0 for dtype::other).
[[nodiscard]] constexpr std::size_t
dtype_size(dtype t) noexcept
{
    switch (t) {
    case dtype::int8:
    case dtype::uint8: return 1;
    case dtype::int16:
    case dtype::uint16: return 2;
    case dtype::float32:
    case dtype::int32:
    case dtype::uint32: return 4;
    case dtype::float64:
    case dtype::int64:
    case dtype::uint64: return 8;
    default: return 0;
    }
}

/// Samples [begin, end) of `a` (begin <= end <= a.samples()), the same elements, not copied.
[[nodiscard]] inline array_ref
samples_of(const array_ref& a, std::size_t begin, std::size_t end)
{
    array_ref r = a;
    const std::ptrdiff_t step = a.row_major() ? static_cast<std::ptrdiff_t>(a.sample_size()) : a.strides[0];
    r.data = static_cast<const unsigned char*>(a.data) +
             static_cast<std::ptrdiff_t>(begin) * step * static_cast<std::ptrdiff_t>(dtype_size(a.type));
    r.shape[0] = end - begin;
    return r;
}

/// A pair (x, y) as `validation_data`, or as the data of fit/evaluate.
struct dataset_ref {
    array_ref x;
    array_ref y;
};

/// `validation_data=(x_val, y_val)`.
template <class X, class Y>
[[nodiscard]] dataset_ref
validation_data(const X& x, const Y& y)
{
    return {make_array_ref(x), make_array_ref(y)};
}

namespace detail {

/// Refuses an array whose elements do not lie row-major and contiguous (array_ref::strides).
[[gnu::cold]] inline void
check_layout(const array_ref& a, const std::string& name)
{
    if (a.row_major())
        return;
    std::string strides = "(";
    for (std::size_t d = 0; d < a.strides.size(); ++d)
        strides += (d ? ", " : "") + std::to_string(a.strides[d]);
    bad_input(detail::concat({name, " of shape ", a.shape_string(),
                              " is not a row-major contiguous array (its strides, in elements, are ", strides,
                              ")); tpudsl reads arrays row-major: copy it into one first, for instance "
                              "xt::xtensor<float, N> copy = ", name}));
}

/// True when per-sample dims `got` are the model's `want`, as Keras accepts them: equal, or with a
/// trailing axis of 1 added or dropped (Keras' input rank adjustment: (28, 28) for (28, 28, 1)).
inline bool
same_sample_shape(const std::vector<std::size_t>& got, const std::vector<std::size_t>& want)
{
    if (got == want)
        return true;
    if (got.size() + 1 == want.size() && want.back() == 1)
        return std::equal(got.begin(), got.end(), want.begin());
    if (want.size() + 1 == got.size() && got.back() == 1)
        return std::equal(want.begin(), want.end(), got.begin());
    return false;
}

/// The index of the first of v[0, n) for which `bad` holds, or n. Blocks of 1024 are tested without a
/// branch (an OR over the block, which the compiler vectorises), and only a block that fails is searched
/// again element by element: fit checks every input of its data each time it is called.
template <class T, class Bad>
std::size_t
first_where(const T* v, std::size_t n, Bad bad) noexcept
{
    constexpr std::size_t block = 1024;
    for (std::size_t b = 0; b < n; b += block) {
        const std::size_t e = std::min(n, b + block);
        unsigned any = 0;
        for (std::size_t i = b; i < e; ++i)
            any |= static_cast<unsigned>(bad(v[i]));
        if (any)
            for (std::size_t i = b; i < e; ++i)
                if (bad(v[i]))
                    return i;
    }
    return n;
}

/// True unless x is finite (NaN fails the comparison). A function object, not a function: passed to
/// first_where as a type it is inlined into the block's OR and vectorised, where a function pointer
/// left one call per element: a cost fit pays on every call, which matters when it is called on a few
/// batches at a time.
inline constexpr struct not_finite_fn {
    bool
    operator()(float x) const noexcept
    {
        return !(std::fabs(x) <= std::numeric_limits<float>::max());
    }
} not_finite{};

/// Checks x against a model's input (type, per-sample shape, and unless `values` is false its values:
/// token ids within the vocabulary, floats finite).
template <class Model>
void
check_inputs(const array_ref& x, const char* name, std::size_t vocab, bool values = true)
{
    using In = typename Model::input_type;
    constexpr std::size_t size = Model::input_shape::size;
    if (x.type != dtype_of<In>)
        bad_input(detail::concat({name, " holds ", dtype_name(x.type), ", but the model's Input expects ",
                                  dtype_name(dtype_of<In>)}));
    const std::vector<std::size_t> want(Model::input_shape::dims.begin(), Model::input_shape::dims.end());
    if (x.shape.size() < 2 || x.sample_size() != size ||
        !same_sample_shape(std::vector<std::size_t>(x.shape.begin() + 1, x.shape.end()), want))
        bad_input(detail::concat({name, " has shape ", x.shape_string(), ", but the model expects (samples",
                                  Model::input_shape::keras_string().substr(5), " per sample"}));
    check_layout(x, name);
    if (!values)
        return;
    const In* v = x.as<In>();
    const std::size_t n = x.samples() * size;
    if constexpr (std::is_integral_v<In>) {
        using U = std::make_unsigned_t<In>;   // a negative id wraps above any vocabulary
        const std::size_t i = first_where(v, n, [vocab](In id) { return static_cast<std::size_t>(static_cast<U>(id)) >= vocab; });
        if (i < n)
            bad_input(detail::concat({"token id ", std::to_string(v[i]), " at sample ", std::to_string(i / size),
                                      ", position ", std::to_string(i % size), " of ", name, " is outside [0, ",
                                      std::to_string(vocab), ") (the Embedding's vocabulary)"}));
    } else {
        const std::size_t i = first_where(v, n, not_finite);
        if (i < n)
            bad_input(detail::concat({"non-finite value ", std::to_string(v[i]), " at sample ",
                                      std::to_string(i / size), ", element ", std::to_string(i % size), " of ", name}));
    }
}

/// Checks labels: sparse ones as int32 class ids in [0, width) or equal to `ignored` (a loss's
/// ignore_class), `positions` per sample (one per timestep of a (T, classes) output), dense ones as
/// finite float rows of `width` (the values unless `values` is false); and as many as there are samples.
[[gnu::cold]] inline void
check_labels(const array_ref& y, const char* name, std::size_t samples, bool sparse, std::size_t width,
             bool values = true, std::size_t positions = 1, std::optional<std::int32_t> ignored = std::nullopt)
{
    if (y.samples() != samples)
        bad_input(detail::concat({"x and ", name, " have different lengths: x has ", std::to_string(samples),
                                  " samples, ", name, " has ", std::to_string(y.samples())}));
    check_layout(y, name);
    if (sparse) {
        if (y.sample_size() != positions)
            bad_input(detail::concat({name, " has shape ", y.shape_string(),
                                      positions == 1 ? ", but sparse labels are one class id per sample"
                                                     : ", but sparse labels are one class id per timestep: (samples, ",
                                      positions == 1 ? "" : std::to_string(positions), positions == 1 ? "" : ")"}));
        if (y.type != dtype::int32)
            bad_input(detail::concat({name, " holds ", dtype_name(y.type),
                                      ", but a sparse loss or metric reads int32 class ids (arrays of any integer type, or of "
                                      "floats holding whole numbers, are converted where they enter fit and evaluate)"}));
        const std::int32_t* v = y.as<std::int32_t>();
        for (std::size_t i = 0; values && i < samples * positions; ++i)
            if ((v[i] < 0 || static_cast<std::size_t>(v[i]) >= width) && v[i] != ignored)
                bad_input(detail::concat({"label ", std::to_string(v[i]), " at sample ",
                                          std::to_string(i / positions),
                                          positions > 1 ? ", position " : "",
                                          positions > 1 ? std::to_string(i % positions) : "",
                                          " of ", name, " is outside [0, ", std::to_string(width),
                                          ") (the model's classes)",
                                          ignored ? " and is not the loss's ignore_class, " : "",
                                          ignored ? std::to_string(*ignored) : ""}));
    } else {
        if (y.sample_size() != width)
            bad_input(detail::concat({name, " has shape ", y.shape_string(), ", but the model's output has ",
                                      std::to_string(width), " values per sample"}));
        if (y.type != dtype::float32)
            bad_input(detail::concat({name, " holds ", dtype_name(y.type), ", but this loss reads float32 targets"}));
        const float* v = y.as<float>();
        const std::size_t n = values ? samples * width : 0, i = first_where(v, n, not_finite);
        if (i < n)
            bad_input(detail::concat({"non-finite target ", std::to_string(v[i]), " at sample ",
                                      std::to_string(i / width), " of ", name}));
    }
}

} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_DATA_ARRAY_REF_HPP
