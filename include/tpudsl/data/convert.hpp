/// @file Arrays of any numeric element type, converted once where they enter a model, as Keras casts
/// them: inputs to the Input's element type (uint8 images to float32, int64 token ids to int32), sparse
/// labels of any integer type, or float32/float64 holding whole numbers, to int32 class ids, dense
/// targets to float32. Arrays already of the model's types are read in place (nothing is copied).
///
/// Where Keras would convert silently and wrongly, the conversion refuses with the value and its place:
/// a class id or token id that is not a whole number (Keras truncates 2.5 to 2), or outside the classes
/// or the vocabulary (an int64 id that an int32 cast would wrap into range).
#ifndef TPUDSL_DATA_CONVERT_HPP
#define TPUDSL_DATA_CONVERT_HPP

#include <tpudsl/data/array_ref.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpudsl::detail {

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
    return "sample " + std::to_string(i / size) + (size > 1 ? ", position " + std::to_string(i % size) : "");
}

/// Refuses an id (`value` as number_text prints it) at element i: not a whole number, or outside
/// [0, bound). Out of line and cold: the conversions of every element type share it.
[[noreturn, gnu::cold, gnu::noinline]] inline void
refuse_id(const std::string& value, bool whole, std::size_t i, std::size_t size, std::size_t bound, const char* what,
          const char* name, const char* range)
{
    if (!whole)
        bad_input(std::string(what) + " " + value + " at " + element_place(i, size) + " of " + name +
                  " is not a whole number, but " + range + " are whole numbers (Keras would truncate it "
                  "without a word)");
    bad_input(std::string(what) + " " + value + " at " + element_place(i, size) + " of " + name + " is outside [0, " +
              std::to_string(bound) + ") (" + range + ")");
}

/// Converts the n whole numbers of v to int32 in [0, bound), or refuses the first that is not one, with
/// `what` ("label", "token id"), its place and `range` (what the bound is).
template <class T>
void
convert_ids(const T* v, std::size_t n, std::size_t size, std::size_t bound, std::int32_t* out, const char* what,
            const char* name, const char* range)
{
    for (std::size_t i = 0; i < n; ++i) {
        const T x = v[i];
        bool whole = true, in_range;
        if constexpr (std::is_integral_v<T>) {
            in_range = std::cmp_greater_equal(x, 0) && std::cmp_less(x, bound);
        } else {
            whole = std::trunc(x) == x;   // false for NaN, the infinities and fractions
            in_range = whole && x >= 0 && static_cast<long double>(x) < static_cast<long double>(bound);
        }
        if (!in_range) [[unlikely]]
            refuse_id(number_text(x), whole, i, size, bound, what, name, range);
        out[i] = static_cast<std::int32_t>(x);
    }
}

/// `a` as an array of U: itself when it already holds U (or a type no conversion knows, for the
/// checks to name), else its elements converted into `store` by `convert(source, n, out)`.
template <class U, class Convert>
[[nodiscard]] array_ref
converted(const array_ref& a, const char* name, std::vector<U>& store, Convert&& convert)
{
    if (a.type == dtype_of<U> || a.type == dtype::other)
        return a;
    check_layout(a, name);   // read row-major below
    const std::size_t n = a.samples() * a.sample_size();
    store.resize(n);
    visit_dtype(a.type, [&]<class T>(T) { convert(static_cast<const T*>(a.data), n, store.data()); });
    array_ref r = a;
    r.data = store.data();
    r.type = dtype_of<U>;
    return r;
}

/// Inputs as a model of Input element type In reads them: floats cast as Keras casts them (float64 to
/// the nearest float32), token ids checked against the vocabulary before they are narrowed.
template <class In>
[[nodiscard]] array_ref
converted_inputs(const array_ref& x, const char* name, std::size_t vocabulary, std::vector<In>& store)
{
    const std::size_t size = x.sample_size() ? x.sample_size() : 1;
    return converted(x, name, store, [&]<class T>(const T* v, std::size_t n, In* out) {
        if constexpr (std::is_integral_v<In>)
            convert_ids(v, n, size, vocabulary, out, "token id", name, "the Embedding's vocabulary");
        else
            for (std::size_t i = 0; i < n; ++i)
                out[i] = static_cast<In>(v[i]);
    });
}

/// Arrays (x, y) as a model reads them: x in its Input's element type, y as int32 class ids (a sparse
/// loss) or float32 targets. Owns what it had to convert; `ref()` views the result, valid while it
/// lives. Converting is one pass over the data, done once per fit/evaluate call, not per epoch.
template <class In>
class model_arrays {
public:
    model_arrays(const dataset_ref& d, const char* xname, const char* yname, bool sparse, std::size_t classes,
                 std::size_t vocabulary, std::size_t positions = 1)
    {
        ref_.x = converted_inputs(d.x, xname, vocabulary, x_);
        if (sparse) {
            // One class id per sample, (n,) or (n, 1), or per timestep of a (T, classes) output, (n, T);
            // another shape is left to the checks to name.
            ref_.y = d.y.sample_size() != positions ? d.y : converted(d.y, yname, ids_, [&]<class T>(const T* v, std::size_t n, std::int32_t* out) {
                convert_ids(v, n, positions, classes, out, "label", yname, "the model's classes");
            });
        } else {
            ref_.y = converted(d.y, yname, targets_, [](const auto* v, std::size_t n, float* out) {
                for (std::size_t i = 0; i < n; ++i)
                    out[i] = static_cast<float>(v[i]);
            });
        }
    }
    model_arrays(const model_arrays&) = delete;
    model_arrays& operator=(const model_arrays&) = delete;

    [[nodiscard]] const dataset_ref& ref() const noexcept { return ref_; }

private:
    std::vector<In> x_;
    std::vector<std::int32_t> ids_;
    std::vector<float> targets_;
    dataset_ref ref_;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_DATA_CONVERT_HPP
