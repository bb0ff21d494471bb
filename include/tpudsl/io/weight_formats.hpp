/// @file Chooses a weights file's format by its path, as Keras does: `*.weights.h5` is Keras 3's HDF5
/// layout, any other `*.h5` Keras 2's legacy one, everything else tpudsl's own binary format
/// (io/weights.hpp).
///
/// The HDF5 formats need HDF5's C library, which is optional: a program built with the macro
/// TPUDSL_WITH_HDF5 (what linking the CMake target tpudsl::keras_h5 defines, project-wide) gets them
/// through io/keras_h5.hpp; without it, a `.h5` path is refused with std::invalid_argument saying how to
/// switch HDF5 on. Define the macro the same way in every translation unit of a program.
#ifndef TPUDSL_IO_WEIGHT_FORMATS_HPP
#define TPUDSL_IO_WEIGHT_FORMATS_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/weights.hpp>

#ifdef TPUDSL_WITH_HDF5
#include <tpudsl/io/keras_h5.hpp>
#endif

#include <stdexcept>
#include <string>
#include <string_view>

namespace tpudsl {

/// The formats of a weights file.
enum class weights_format {
    tpudsl,        ///< tpudsl's binary format (any path not ending in .h5)
    keras3_h5,     ///< Keras 3's `*.weights.h5`
    keras2_h5      ///< Keras 2's legacy `*.h5`
};

/// The format a path asks for, by its suffix.
[[nodiscard]] constexpr weights_format
weights_format_of(std::string_view path) noexcept
{
    if (path.ends_with(".weights.h5"))
        return weights_format::keras3_h5;
    if (path.ends_with(".h5"))
        return weights_format::keras2_h5;
    return weights_format::tpudsl;
}

/// True when this program can read and write Keras' HDF5 files (built with TPUDSL_WITH_HDF5).
inline constexpr bool keras_h5_enabled =
#ifdef TPUDSL_WITH_HDF5
    true;
#else
    false;
#endif

namespace detail {

[[noreturn]] inline void
keras_h5_disabled(std::string_view who, const std::string& path)
{
    throw std::invalid_argument(
        detail::concat({who, ": '", path, "' names a Keras HDF5 weights file (by its suffix ",
                        (weights_format_of(path) == weights_format::keras3_h5 ? ".weights.h5" : ".h5"),
                        "), but this program was built without HDF5; link the CMake target tpudsl::keras_h5 (it defines "
                        "TPUDSL_WITH_HDF5 and links HDF5's C library, Debian's libhdf5-dev), or give a path without .h5 for "
                        "tpudsl's own format"}));
}

} // namespace detail

/// Saves the parameters of `Model` to `path` in the format its suffix asks for (weights_format_of),
/// atomically.
template <class Model>
void
save_weights_by_path(const std::string& path, const float* params)
{
    const weights_format format = weights_format_of(path);
    if (format == weights_format::tpudsl)
        return save_weights<Model>(path, params);
#ifdef TPUDSL_WITH_HDF5
    save_keras_weights<Model>(path, params,
                              format == weights_format::keras3_h5 ? keras_h5_layout::keras3 : keras_h5_layout::keras2);
#else
    detail::keras_h5_disabled("tpudsl::save_weights", path);
#endif
}

/// Loads parameters into `params` from `path`: a `.h5` file of either Keras layout (the file's groups
/// tell which), or tpudsl's format. `params` is left untouched on any error.
template <class Model>
void
load_weights_by_path(const std::string& path, float* params)
{
    if (weights_format_of(path) == weights_format::tpudsl)
        return load_weights<Model>(path, params);
#ifdef TPUDSL_WITH_HDF5
    load_keras_weights<Model>(path, params);
#else
    detail::keras_h5_disabled("tpudsl::load_weights", path);
#endif
}

} // namespace tpudsl

#endif // !TPUDSL_IO_WEIGHT_FORMATS_HPP
