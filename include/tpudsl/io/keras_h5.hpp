/// @file Saves and loads a model's weights in Keras' HDF5 files, through HDF5's C library (optional:
/// only a program that includes this header needs libhdf5; see docs/interop.md).
///
/// Two layouts, both as Keras reads them:
/// - Keras 3, `*.weights.h5` (keras/src/saving/saving_lib.py): a group `vars` (the model's own, empty,
///   with the attribute name="sequential"), and per layer `layers/<snake_case(ClassName)>[_k]/vars`
///   (attribute name=<the layer's name>) holding the datasets `0`, `1`, ... in the layer's order (kernel,
///   then bias). Layers without weights get an empty `vars` group too. The `_k` counter runs per class
///   from the model's first layer, as Keras 3 numbers the entries of `model.layers`.
/// - Keras 2, `*.h5` (tf-keras saving/legacy/hdf5_format.py, Keras 3 legacy/saving/legacy_h5_format.py):
///   the attributes `layer_names` (every layer, in order), `backend` and `keras_version` at the root, a group
///   per layer with the attribute `weight_names` (`dense/kernel:0`, ...) and the datasets at
///   `<layer>/<layer>/kernel:0`. Reading follows Keras: the layers with weights in the file are matched, in
///   order, to the layers with weights in the model, and each layer's weights are read in the order of its
///   `weight_names`, wherever they are in the group. A whole-model file (`model.save("m.h5")`) keeps the
///   same layout under `model_weights/`, and is read too. Attributes split by Keras into `layer_names0`,
///   `layer_names1`, ... (past 64,512 bytes) are joined.
/// Reading takes either layout from any `.h5` file (the groups tell which); datasets may be float32 or
/// float64 (converted). Files are written atomically (detail::replace_file): the HDF5 image is built in
/// memory, then written to a temporary beside the target and renamed over it.
#ifndef TPUDSL_IO_KERAS_H5_HPP
#define TPUDSL_IO_KERAS_H5_HPP

#include <tpudsl/core/weight_spec.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/io/hdf5.hpp>
#include <tpudsl/io/weights.hpp>
#include <tpudsl/model/sequential.hpp>
#include <tpudsl/model/graph_summary.hpp>

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/stat.h>

namespace tpudsl {

/// Which of Keras' HDF5 layouts a file has (or is to have).
enum class keras_h5_layout {
    keras3,   ///< `*.weights.h5`: `layers/<class>[_k]/vars/<i>`
    keras2    ///< legacy `*.h5`: `layer_names`, `weight_names`, `<layer>/<layer>/kernel:0`
};

namespace detail::h5 {

/// Keras' `to_snake_case`: "MaxPooling2D" -> "max_pooling2d", "Conv1D" -> "conv1d".
[[nodiscard]] inline std::string
to_snake_case(std::string_view name)
{
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    std::string s;
    for (char c : name)   // re.sub(r"\W+", "", name)
        if (upper(c) || lower(c) || (c >= '0' && c <= '9') || c == '_')
            s += c;
    // re.sub("(.)([A-Z][a-z]+)", r"\1_\2", s): an underscore before each capital that starts a
    // lowercase run and is not the first character. (Python's matches do not overlap, so it skips
    // a capital right after such a run; the next step puts that underscore in.)
    std::string a;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i > 0 && upper(s[i]) && i + 1 < s.size() && lower(s[i + 1]))
            a += '_';
        a += s[i];
    }
    // re.sub("([a-z])([A-Z])", r"\1_\2", a)
    std::string b;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (i > 0 && lower(a[i - 1]) && upper(a[i]))
            b += '_';
        b += a[i];
    }
    for (char& c : b)
        if (upper(c))
            c = static_cast<char>(c - 'A' + 'a');
    return b;
}

/// One weight of a model, as the readers and writers see it.
struct weight_ref {
    std::string role;                   // "kernel", "bias", "embeddings"
    std::vector<std::size_t> shape;     // Keras' shape
    std::size_t offset;                 // floats into the flat parameter buffer
    std::size_t size;                   // floats
    /// A weight of a layer's sublayer (MultiHeadAttention's "query/kernel"): where Keras 3 keeps it
    /// under the layer's group ("query_dense/vars/0"); empty for a layer's own weights.
    std::string keras3_path = {};
};

/// One layer of a model: its Keras names and weights.
struct layer_ref {
    std::string name;         // Keras' auto-name: "conv2d", "dense_1"
    std::string class_name;   // "Conv2D"
    std::string group;        // Keras 3's group: snake_case(class_name) with a per-class counter
    std::vector<weight_ref> weights;
    std::string wrapped;      // a wrapper's (TimeDistributed's) wrapped layer, by its auto-name: Keras 3
                              // keeps the weights in `<group>/layer/vars`; empty for other layers
    std::string cell;         // the cell that holds a recurrent layer's weights ("lstm_cell"): Keras 3
                              // keeps them in `<group>/cell/vars`; empty for other layers

    /// The group under the layer's own that holds its weights in Keras 3 ("layer", "cell"), or empty.
    [[nodiscard]] std::string
    inner_group() const
    {
        return !cell.empty() ? "cell" : !wrapped.empty() ? "layer" : "";
    }

    /// Where Keras 3 keeps the layer's weights, under `layers/`.
    [[nodiscard]] std::string
    vars_path() const
    {
        const std::string inner = inner_group();
        return inner.empty() ? detail::concat({group, "/vars"}) : detail::concat({group, "/", inner, "/vars"});
    }
};


template <class W>
[[nodiscard]] weight_ref
weight_of()
{
    return {std::string(W::name),
            std::vector<std::size_t>(W::shape::dims.begin(), W::shape::dims.end()), W::offset, W::size};
}

/// The weights of a bound layer, in Keras' order.
template <class L>
[[nodiscard]] std::vector<weight_ref>
weights_of()
{
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
        return std::vector<weight_ref>{weight_of<typename L::template weight<J>>()...};
    }(std::make_index_sequence<L::weight_count>{});
}

/// The weights of a bound layer whose spec keeps some in sublayers (`keras_sublayers`: a weight named
/// "<sublayer>/<role>" lies in Keras 3's group of that sublayer, as its J-th): with their Keras 3 paths.
template <class L>
[[nodiscard]] std::vector<weight_ref>
keras_weights_of()
{
    std::vector<weight_ref> weights = weights_of<L>();
    if constexpr (requires { L::spec::keras_sublayers; })
        for (auto& w : weights)
            for (const auto& [name, group] : L::spec::keras_sublayers)
                if (w.role.starts_with(std::string(name) + "/")) {
                    std::size_t before = 0;
                    for (const auto& o : weights)
                        before += &o < &w && o.role.starts_with(std::string(name) + "/");
                    w.keras3_path = detail::concat({group, "/vars/", std::to_string(before)});
                }
    return weights;
}

/// The cell that holds a layer's weights in Keras' files (layer_base::keras_cell), or empty.
template <class Spec>
[[nodiscard]] std::string
keras_cell_of()
{
    if constexpr (requires { Spec::keras_cell; })
        return std::string(Spec::keras_cell);
    else
        return {};
}

/// Keras 3's group of each layer (`_save_container_state`): snake_case(class name), and for the
/// later layers of a class, in `model.layers`' order, _1, _2, ...
inline void
name_groups(std::vector<layer_ref>& layers)
{
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string base = to_snake_case(layers[i].class_name);
        std::size_t before = 0;
        for (std::size_t j = 0; j < i; ++j)
            before += to_snake_case(layers[j].class_name) == base;
        layers[i].group = before == 0 ? base : detail::concat({base, "_", std::to_string(before)});
    }
}

/// A Functional model's layers as Keras lists them (`model.layers`): by depth from the inputs, its
/// InputLayers included, a shared layer once; each named as its node.
template <class Model>
[[nodiscard]] std::vector<layer_ref>
functional_layers_of()
{
    using rows = tpudsl::detail::functional_summary_rows<Model>;
    std::vector<std::size_t> order(Model::node_count);
    const auto keras = tpudsl::detail::keras_layer_order(rows::rows, Model::output_nodes, order.data());
    std::vector<layer_ref> by_node(Model::node_count);
    for (std::size_t i = 0; i < Model::node_count; ++i)
        by_node[i] = layer_ref{std::string(Model::node_names[i]), "InputLayer", {}, {}, {}, {}};
    [&]<std::size_t... L>(std::index_sequence<L...>) {
        ((by_node[Model::layer_node[L]] =
              layer_ref{std::string(Model::node_names[Model::layer_node[L]]),
                        std::string(Model::template layer<L>::spec::class_name), {},
                        keras_weights_of<typename Model::template layer<L>>(),
                        std::string(tpudsl::detail::wrapped_base_name<typename Model::template layer<L>::spec>()),
                        keras_cell_of<typename Model::template layer<L>::spec>()}),
         ...);
    }(std::make_index_sequence<Model::layer_count>{});
    std::vector<layer_ref> layers;
    for (std::size_t k = 0; k < keras.count; ++k)
        layers.push_back(std::move(by_node[order[k]]));
    name_groups(layers);
    return layers;
}

/// A Sequential's layers, in order, with the names Keras gives them.
template <class Model>
[[nodiscard]] std::vector<layer_ref>
sequential_layers_of()
{
    std::vector<layer_ref> layers;
    std::vector<std::string_view> bases, wrapped;   // auto-name prefixes, of the layers and of what they wrap
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (layers.push_back(layer_ref{Model::template layer_name<I>(),
                                    std::string(Model::template layer<I>::spec::class_name), {},
                                    weights_of<typename Model::template layer<I>>(), {},
                                    keras_cell_of<typename Model::template layer<I>::spec>()}),
         ...);
        (bases.push_back(Model::template layer<I>::spec::base_name), ...);
        (wrapped.push_back(tpudsl::detail::wrapped_base_name<typename Model::template layer<I>::spec>()), ...);
    }(std::make_index_sequence<Model::layer_count>{});
    // A wrapped layer is named as Keras names it, made just before its wrapper: counted with the
    // layers and the wrapped layers of its class before it.
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (wrapped[i].empty())
            continue;
        std::size_t before = 0;
        for (std::size_t j = 0; j < i; ++j)
            before += (bases[j] == wrapped[i]) + (wrapped[j] == wrapped[i]);
        // (concat, not "_" + std::to_string(...): GCC 12 warns, wrongly, of an overlapping memcpy there)
        layers[i].wrapped = before == 0 ? std::string(wrapped[i])
                                        : detail::concat({wrapped[i], "_", std::to_string(before)});
    }
    name_groups(layers);
    return layers;
}

/// The model's layers, in Keras' order, with the names Keras gives them.
template <class Model>
[[nodiscard]] std::vector<layer_ref>
layers_of()
{
    if constexpr (requires { Model::node_names; })
        return functional_layers_of<Model>();
    else
        return sequential_layers_of<Model>();
}

[[nodiscard]] inline std::string
describe(const layer_ref& l, std::size_t index)
{
    return "layer " + std::to_string(index) + " '" + l.name + "' (" + l.class_name + ")";
}

// ---------------------------------------------------------------------------------------------
// Writing

/// A contiguous little-endian float32 dataset of `w`'s shape; `name` may be a path (its groups are
/// created).
inline void
write_weight(const context& ctx, hid_t loc, const std::string& name, const weight_ref& w, const float* params)
{
    const std::vector<hsize_t> dims(w.shape.begin(), w.shape.end());
    const handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    const handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    (void)H5Pset_create_intermediate_group(lcpl.get(), 1);
    const handle ds(H5Dcreate2(loc, name.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                    H5Dclose);
    if (!ds || H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, params + w.offset) < 0)
        ctx.fail(detail::concat({"cannot be written: the dataset '", name, "': ", last_error()}));
}

inline void
write_keras3(const context& ctx, hid_t file, const std::vector<layer_ref>& layers, const float* params,
             std::string_view model_name = "sequential")
{
    const handle own = create_group(ctx, file, "vars");
    write_string_attribute(ctx, own.get(), "name", std::string(model_name));
    const handle all = create_group(ctx, file, "layers");
    for (const auto& l : layers) {
        const handle lg = create_group(ctx, all.get(), l.group);
        const handle own_vars = create_group(ctx, lg.get(), "vars");
        write_string_attribute(ctx, own_vars.get(), "name", l.name);
        // A wrapper's own vars stay empty; the wrapped layer's are in `layer/vars`, named after it. So
        // do a recurrent layer's: its cell's are in `cell/vars`, named after the cell.
        const std::string inner_group = l.inner_group();
        const handle inner = inner_group.empty() ? handle{} : create_group(ctx, lg.get(), inner_group);
        const handle inner_vars = inner_group.empty() ? handle{} : create_group(ctx, inner.get(), "vars");
        if (!inner_group.empty())
            write_string_attribute(ctx, inner_vars.get(), "name", l.cell.empty() ? l.wrapped : l.cell);
        const hid_t vars = inner_group.empty() ? own_vars.get() : inner_vars.get();
        std::size_t own = 0;
        for (const weight_ref& w : l.weights)
            if (w.keras3_path.empty())
                write_weight(ctx, vars, std::to_string(own++), w, params);
            else
                write_weight(ctx, lg.get(), w.keras3_path, w, params);
    }
}

/// The Keras version whose layout a Keras 2 file follows (Keras reads `keras_version` to decide
/// whether to convert Keras 1 kernels: it must be present and not "1").
inline constexpr std::string_view keras2_version = "2.15.0";

inline void
write_keras2(const context& ctx, hid_t file, const std::vector<layer_ref>& layers, const float* params)
{
    std::vector<std::string> names;
    for (const auto& l : layers)
        names.push_back(l.name);
    write_string_list_attribute(ctx, file, "layer_names", names);
    write_string_attribute(ctx, file, "backend", "tensorflow");
    write_string_attribute(ctx, file, "keras_version", std::string(keras2_version));
    for (const auto& l : layers) {
        const handle lg = create_group(ctx, file, l.name);
        std::vector<std::string> weight_names;
        for (const auto& w : l.weights)
            weight_names.push_back(detail::concat({l.name, "/", (l.cell.empty() ? "" : l.cell + "/"), w.role, ":0"}));
        write_string_list_attribute(ctx, lg.get(), "weight_names", weight_names);
        for (std::size_t j = 0; j < l.weights.size(); ++j)
            write_weight(ctx, lg.get(), weight_names[j], l.weights[j], params);
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

inline void
read_keras3(const context& ctx, hid_t file, const std::vector<layer_ref>& layers, float* params)
{
    const handle all = open_group(ctx, file, "layers");
    if (!all)
        ctx.fail("has no group 'layers'; a Keras 3 weights file has one");
    // Every group of the file that holds weights is one of the model's layers: Keras would ignore
    // the others, but a file of another model is better refused. Groups without weights (the
    // `input_layer` of a functional Keras model) are passed over.
    for (const auto& g : link_names(all.get())) {
        bool known = false;
        for (const auto& l : layers)
            known = known || l.group == g;
        if (!known && is_group(ctx, all.get(), g + "/vars") &&
            link_names(open_group(ctx, all.get(), g + "/vars").get()).empty())
            continue;
        if (!known)
            ctx.fail(detail::concat({"holds weights for a layer 'layers/", g, "' that this model does not have (its ",
                                     std::to_string(layers.size()), " layers are grouped as ", [&] {
                                         std::string s;
                                         for (const auto& l : layers)
                                             s += (s.empty() ? "" : ", ") + l.group;
                                         return s;
                                     }(), ")"}));
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const auto& l = layers[i];
        const std::string vars_path = l.vars_path();
        const auto own = static_cast<std::size_t>(
            std::count_if(l.weights.begin(), l.weights.end(), [](const weight_ref& w) { return w.keras3_path.empty(); }));
        std::vector<std::string> datasets;
        handle vars;
        if (is_group(ctx, all.get(), vars_path)) {
            vars = open_group(ctx, all.get(), vars_path);
            datasets = link_names(vars.get());
        } else if (own > 0) {
            ctx.fail(detail::concat({"has no group 'layers/", vars_path, "' for ", describe(l, i), ", which has ",
                                     std::to_string(own), " weights"}));
        }
        if (datasets.size() != own)
            ctx.fail(detail::concat({"holds ", std::to_string(datasets.size()), " weights in 'layers/", vars_path,
                                     "' for ", describe(l, i), ", which has ", std::to_string(own)}));
        std::size_t j = 0;
        for (const weight_ref& w : l.weights) {
            const bool in_sublayer = !w.keras3_path.empty();
            const std::string name = in_sublayer ? w.keras3_path : std::to_string(j++);
            const std::string path = in_sublayer ? detail::concat({l.group, "/", name}) : detail::concat({vars_path, "/", name});
            read_weight(ctx, in_sublayer ? all.get() : vars.get(), in_sublayer ? path : name, w.shape,
                        params + w.offset, detail::concat({"'layers/", path, "', the ", w.role, " of ", describe(l, i)}));
        }
    }
}

inline void
read_keras2(const context& ctx, hid_t root, const std::string& prefix, const std::vector<layer_ref>& layers,
            float* params)
{
    const std::string where = prefix.empty() ? "the file" : "'" + prefix + "'";
    const auto names = read_chunked_string_attribute(ctx, root, "layer_names", where);
    if (!names)
        ctx.fail(detail::concat({"has no attribute 'layer_names' in ", where, "; a Keras 2 weights file has one"}));
    struct saved {
        std::string name;
        std::vector<std::string> weights;
    };
    std::vector<saved> in_file;   // the file's layers with weights, in order
    for (const auto& n : *names) {
        if (!is_group(ctx, root, n))
            ctx.fail(detail::concat({"lists a layer '", n, "' in 'layer_names' but has no group for it"}));
        const handle g = open_group(ctx, root, n);
        auto w = read_chunked_string_attribute(ctx, g.get(), "weight_names", detail::concat({"the layer '", n, "'"}));
        if (w && !w->empty())
            in_file.push_back({n, std::move(*w)});
    }
    std::vector<std::size_t> in_model;   // the model's layers with weights, by index
    for (std::size_t i = 0; i < layers.size(); ++i)
        if (!layers[i].weights.empty())
            in_model.push_back(i);
    for (std::size_t k = 0; k < std::max(in_file.size(), in_model.size()); ++k) {
        if (k >= in_file.size())
            ctx.fail(detail::concat({"holds weights for ", std::to_string(in_file.size()), " layers; this model has ",
                                     std::to_string(in_model.size()),
                                     " layers with weights, the first without a match being ",
                                     describe(layers[in_model[k]], in_model[k])}));
        if (k >= in_model.size())
            ctx.fail(detail::concat({"holds weights for ", std::to_string(in_file.size()), " layers; this model has ",
                                     std::to_string(in_model.size()),
                                     " layers with weights, and none for the file's layer '", in_file[k].name, "'"}));
        const auto& l = layers[in_model[k]];
        const auto& s = in_file[k];
        if (s.weights.size() != l.weights.size())
            ctx.fail(detail::concat({"holds ", std::to_string(s.weights.size()), " weights for its layer '", s.name,
                                     "'; ", describe(l, in_model[k]), " has ", std::to_string(l.weights.size())}));
        const handle g = open_group(ctx, root, s.name);
        for (std::size_t j = 0; j < l.weights.size(); ++j)
            read_weight(ctx, g.get(), s.weights[j], l.weights[j].shape, params + l.weights[j].offset,
                        detail::concat({"'", s.weights[j], "' of its layer '", s.name, "', the ", l.weights[j].role,
                                        " of ", describe(l, in_model[k])}));
    }
}

} // namespace detail::h5

/// Writes the parameters of `Model` as a Keras HDF5 weights file of `layout`, atomically (the file is
/// one complete save or left as it was). Throws std::runtime_error when HDF5 fails or a weight is NaN
/// or infinite (nothing is written), std::system_error when writing the file fails (detail::replace_file).
/// @tparam Model a `Sequential<...>` or a `Functional<...>`
template <class Model>
void
save_keras_weights(const std::string& path, const float* params, keras_h5_layout layout)
{
    const detail::h5::context ctx{"tpudsl::save_weights", path};
    detail::require_finite_to_save<Model>(ctx.who, path, params);
    const auto layers = detail::h5::layers_of<Model>();
    std::vector<unsigned char> image;
    {
        const std::lock_guard lock(detail::h5::library_mutex());
        const detail::h5::quiet_errors quiet;
        const detail::h5::handle file = detail::h5::create_memory_file(ctx);
        if (layout == keras_h5_layout::keras3)
            detail::h5::write_keras3(ctx, file.get(), layers, params,
                                     requires { Model::node_names; } ? "functional" : "sequential");
        else
            detail::h5::write_keras2(ctx, file.get(), layers, params);
        if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0)
            ctx.fail(detail::concat({"cannot be written: ", detail::h5::last_error()}));
        const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
        if (size <= 0)
            ctx.fail(detail::concat({"cannot be written: HDF5 gives no file image: ", detail::h5::last_error()}));
        image.resize(static_cast<std::size_t>(size));
        if (H5Fget_file_image(file.get(), image.data(), image.size()) != size)
            ctx.fail(detail::concat({"cannot be written: HDF5's file image is incomplete: ", detail::h5::last_error()}));
    }
    detail::replace_file(ctx.who, path, [&](auto&& sink) { sink(image.data(), image.size()); });
}

/// Reads a Keras HDF5 weights file (either layout; a whole-model Keras 2 file too) into `params`,
/// which is left untouched on any error. A file whose layers, weight counts or shapes do not fit
/// `Model` is refused with std::runtime_error naming the file, the first layer that differs and both
/// shapes; a file that is not HDF5, or that HDF5 cannot read, with std::runtime_error saying so. A file
/// is read only where its weights are in the file itself: an external, soft or user-defined link, a
/// dataset in external storage or a virtual dataset is refused before anything outside the file is
/// opened; so is a dataset never written, one compressed by a filter this HDF5 lacks, and a NaN or an
/// infinity in any weight.
/// @tparam Model a `Sequential<...>` or a `Functional<...>`
template <class Model>
void
load_keras_weights(const std::string& path, float* params)
{
    const detail::h5::context ctx{"tpudsl::load_weights", path};
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        detail::throw_errno(errno, detail::concat({ctx.who, ": cannot open '", path, "'"}));
    detail::require_regular(st.st_mode, ctx.who, path, "a weights file is a regular file");

    const std::lock_guard lock(detail::h5::library_mutex());
    const detail::h5::quiet_errors quiet;
    if (const htri_t is_hdf5 = H5Fis_hdf5(path.c_str()); is_hdf5 < 0)
        ctx.fail(detail::concat({"cannot be read by HDF5: ", detail::h5::last_error()}));
    else if (is_hdf5 == 0)
        ctx.fail("is not an HDF5 file (a Keras weights file .weights.h5 or .h5 is one)");
    const detail::h5::handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file)
        ctx.fail(detail::concat({"cannot be opened by HDF5: ", detail::h5::last_error()}));

    const auto layers = detail::h5::layers_of<Model>();
    std::vector<float> staged(params, params + Model::param_buffer_size);
    if (detail::h5::is_group(ctx, file.get(), "layers")) {
        detail::h5::read_keras3(ctx, file.get(), layers, staged.data());
    } else if (H5Aexists(file.get(), "layer_names") > 0 || H5Aexists(file.get(), "layer_names0") > 0) {
        detail::h5::read_keras2(ctx, file.get(), "", layers, staged.data());
    } else if (detail::h5::is_group(ctx, file.get(), "model_weights")) {
        const detail::h5::handle mw = detail::h5::open_group(ctx, file.get(), "model_weights");
        detail::h5::read_keras2(ctx, mw.get(), "model_weights", layers, staged.data());
    } else {
        ctx.fail("has neither Keras 3's group 'layers' nor Keras 2's attribute 'layer_names' (nor a group "
                 "'model_weights'): it is not a Keras weights file");
    }
    std::memcpy(params, staged.data(), staged.size() * sizeof(float));
}

} // namespace tpudsl

#endif // !TPUDSL_IO_KERAS_H5_HPP
