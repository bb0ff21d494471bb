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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tpudsl::detail {

/// `a` as an array of U (int32 ids or float32): itself when it already holds U (or a type no
/// conversion knows, for the checks to name), else its elements converted into `store` by
/// `convert(conversions, data, n, out)`, with the conversions make_array_ref took for its element type.
template <class U, class Convert>
[[nodiscard]] array_ref
converted(const array_ref& a, const char* name, std::vector<U>& store, Convert&& convert)
{
    if (a.type == dtype_of<U> || a.conversions == nullptr)   // null for dtype::other
        return a;
    check_layout(a, name);   // read row-major below
    const std::size_t n = a.samples() * a.sample_size();
    store.resize(n);
    convert(*a.conversions, a.data, n, store.data());
    array_ref r = a;
    r.data = store.data();
    r.type = dtype_of<U>;
    r.conversions = nullptr;   // in the model's type now: nothing converts it again
    return r;
}

/// Inputs as a model of Input element type In reads them: floats cast as Keras casts them (float64 to
/// the nearest float32), token ids checked against the vocabulary before they are narrowed.
template <class In>
[[nodiscard]] array_ref
converted_inputs(const array_ref& x, const char* name, std::size_t vocabulary, std::vector<In>& store)
{
    const std::size_t size = x.sample_size() ? x.sample_size() : 1;
    return converted(x, name, store, [&](const element_conversions& c, const void* v, std::size_t n, In* out) {
        if constexpr (std::is_integral_v<In>)
            c.to_ids(v, n, size, vocabulary, out, "token id", name, "the Embedding's vocabulary", nullptr);
        else
            c.to_floats(v, n, out);
    });
}

/// Arrays (x, y) as a model reads them: x in its Input's element type, y as int32 class ids (a sparse
/// loss) or float32 targets. Owns what it had to convert; `ref()` views the result, valid while it
/// lives. Converting is one pass over the data, done once per fit/evaluate call, not per epoch.
template <class In>
class model_arrays {
public:
    model_arrays(const dataset_ref& d, const char* xname, const char* yname, bool sparse, std::size_t classes,
                 std::size_t vocabulary, std::size_t positions = 1, std::optional<std::int32_t> ignored = std::nullopt)
    {
        ref_.x = converted_inputs(d.x, xname, vocabulary, x_);
        if (sparse) {
            // One class id per sample, (n,) or (n, 1), or per timestep of a (T, classes) output, (n, T);
            // another shape is left to the checks to name.
            ref_.y = d.y.sample_size() != positions ? d.y : converted(d.y, yname, ids_, [&](const element_conversions& c, const void* v, std::size_t n, std::int32_t* out) {
                c.to_ids(v, n, positions, classes, out, "label", yname, "the model's classes", ignored ? &*ignored : nullptr);
            });
        } else {
            ref_.y = converted(d.y, yname, targets_, [](const element_conversions& c, const void* v, std::size_t n, float* out) {
                c.to_floats(v, n, out);
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
