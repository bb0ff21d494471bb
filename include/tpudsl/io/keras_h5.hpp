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

#include <tpudsl/core/weights.hpp>
#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/io/weights.hpp>
#include <tpudsl/model/sequential.hpp>

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

/// An HDF5 identifier, closed with its kind's close function when it goes out of scope.
class handle {
public:
    handle() noexcept = default;
    handle(hid_t id, herr_t (*close)(hid_t)) noexcept : id_(id), close_(close) {}
    handle(handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
    handle&
    operator=(handle&& o) noexcept
    {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, H5I_INVALID_HID);
            close_ = o.close_;
        }
        return *this;
    }
    handle(const handle&) = delete;
    handle& operator=(const handle&) = delete;
    ~handle() { reset(); }

    [[nodiscard]] hid_t get() const noexcept { return id_; }
    [[nodiscard]] explicit operator bool() const noexcept { return id_ >= 0; }
    void
    reset() noexcept
    {
        if (id_ >= 0 && close_ != nullptr)
            (void)close_(std::exchange(id_, H5I_INVALID_HID));
        id_ = H5I_INVALID_HID;
    }

private:
    hid_t id_ = H5I_INVALID_HID;
    herr_t (*close_)(hid_t) = nullptr;
};

/// Serialises tpudsl's use of HDF5: a build of HDF5 without its thread-safety option may not be
/// called from two threads at once (Debian's is thread-safe; the lock costs nothing next to a file).
[[nodiscard]] inline std::mutex&
library_mutex() noexcept
{
    static std::mutex m;
    return m;
}

/// Turns HDF5's own printing of its error stack off while it lives (tpudsl reports errors itself),
/// and puts the previous handler back after.
class quiet_errors {
public:
    quiet_errors() noexcept
    {
        (void)H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
        (void)H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    quiet_errors(const quiet_errors&) = delete;
    quiet_errors& operator=(const quiet_errors&) = delete;
    ~quiet_errors() { (void)H5Eset_auto2(H5E_DEFAULT, func_, data_); }

private:
    H5E_auto2_t func_ = nullptr;
    void* data_ = nullptr;
};

/// The innermost description on HDF5's error stack ("unable to open file", ...), or "".
[[nodiscard]] inline std::string
last_error()
{
    std::string what;
    (void)H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_UPWARD,
        [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
            if (n == 0 && e != nullptr && e->desc != nullptr)
                *static_cast<std::string*>(out) = e->desc;
            return 0;
        },
        &what);
    return what;
}

[[nodiscard]] inline std::string
dims_string(const std::vector<std::size_t>& d)
{
    std::string s = "(";
    for (std::size_t i = 0; i < d.size(); ++i)
        s += (i > 0 ? ", " : "") + std::to_string(d[i]);
    return s + (d.size() == 1 ? ",)" : ")");
}

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

/// What every message starts with: "tpudsl::load_weights: '<path>'". What follows may quote names
/// the file holds: it is made one line of plain text (detail::printable).
struct context {
    std::string who;
    std::string path;
    [[noreturn]] void
    fail(const std::string& what) const
    {
        throw std::runtime_error(detail::concat({who, ": '", path, "' ", detail::printable(what)}));
    }
};

/// The path of an open object in its file ("/layers/dense/vars"), for messages.
[[nodiscard]] inline std::string
object_path(hid_t obj)
{
    const ssize_t n = H5Iget_name(obj, nullptr, 0);
    if (n <= 0)
        return "?";
    std::string name(static_cast<std::size_t>(n) + 1, '\0');
    (void)H5Iget_name(obj, name.data(), name.size());
    name.resize(static_cast<std::size_t>(n));
    return name;
}

/// `name` under the object `loc`, as a path from the file's root, for messages.
[[nodiscard]] inline std::string
path_in_file(hid_t loc, const std::string& name)
{
    std::string base = object_path(loc);
    if (!base.empty() && base.back() != '/')
        base += '/';
    return base + name;
}

/// What a link that is not a hard link is, in words; a weights file is refused for holding one.
[[nodiscard]] inline std::string
link_kind(const H5L_info_t& info)
{
    switch (info.type) {
    case H5L_TYPE_SOFT:
        return "a soft link";
    case H5L_TYPE_EXTERNAL:
        return "an external link (to an object in another file)";
    default:
        return "a user-defined link";
    }
}

/// Whether `name` (a path below `loc`) names an object, following only hard links: a path through
/// an external, soft or user-defined link is refused, naming it. HDF5 would follow an external link
/// into any file of the machine (a FIFO there blocks the reader for ever); Keras writes hard links
/// only.
[[nodiscard]] inline bool
has_link(const context& ctx, hid_t loc, const std::string& name)
{
    // H5Lexists checks one link; a path is walked one component at a time, each checked before
    // anything follows it.
    std::size_t start = 0;
    while (true) {
        const std::size_t slash = name.find('/', start);
        const std::string prefix = name.substr(0, slash);
        if (prefix.empty() || H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0)
            return false;
        H5L_info_t info{};
        if (H5Lget_info(loc, prefix.c_str(), &info, H5P_DEFAULT) < 0)
            ctx.fail(detail::concat({"cannot be read: the link '", path_in_file(loc, prefix), "': ", last_error()}));
        if (info.type != H5L_TYPE_HARD)
            ctx.fail(detail::concat({"has ", link_kind(info), " at '", path_in_file(loc, prefix),
                                     "'; a weights file that reaches outside itself is refused (Keras writes none)"}));
        if (slash == std::string::npos)
            return true;
        start = slash + 1;
    }
}

[[nodiscard]] inline bool
is_group(const context& ctx, hid_t loc, const std::string& name)
{
    if (!has_link(ctx, loc, name))
        return false;
    H5O_info_t info{};
    return H5Oget_info_by_name(loc, name.c_str(), &info, H5P_DEFAULT) >= 0 && info.type == H5O_TYPE_GROUP;
}

/// The group `name` below `loc` (an invalid handle when there is none), reached through hard links
/// only (has_link).
[[nodiscard]] inline handle
open_group(const context& ctx, hid_t loc, const std::string& name)
{
    if (!is_group(ctx, loc, name))
        return {};
    return {H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose};
}

/// The names of the links in a group, in name order.
[[nodiscard]] inline std::vector<std::string>
link_names(hid_t group)
{
    std::vector<std::string> names;
    (void)H5Literate(
        group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
            static_cast<std::vector<std::string>*>(out)->emplace_back(name);
            return 0;
        },
        &names);
    return names;
}

/// A list of strings from the attribute `name` of `obj`: fixed-length or variable-length strings, a
/// scalar or a 1-D array; an empty array of any type (Keras writes `np.asarray([])`, float64) is an
/// empty list. nullopt when there is no such attribute.
[[nodiscard]] inline std::optional<std::vector<std::string>>
read_string_attribute(const context& ctx, hid_t obj, const std::string& name, const std::string& where)
{
    if (H5Aexists(obj, name.c_str()) <= 0)
        return std::nullopt;
    const handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
    const handle space(attr ? H5Aget_space(attr.get()) : H5I_INVALID_HID, H5Sclose);
    const handle type(attr ? H5Aget_type(attr.get()) : H5I_INVALID_HID, H5Tclose);
    if (!attr || !space || !type)
        ctx.fail(detail::concat({"cannot be read: the attribute '", name, "' of ", where, " cannot be opened"}));
    const H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
    hssize_t count = 1;
    if (space_class == H5S_NULL)
        count = 0;
    else if (space_class == H5S_SIMPLE) {
        if (H5Sget_simple_extent_ndims(space.get()) != 1)
            ctx.fail(detail::concat({"has an attribute '", name, "' of ", where, " that is not a list (rank ",
                                     std::to_string(H5Sget_simple_extent_ndims(space.get())), ")"}));
        count = H5Sget_simple_extent_npoints(space.get());
    }
    std::vector<std::string> out;
    if (count == 0)
        return out;
    if (H5Tget_class(type.get()) != H5T_STRING)
        ctx.fail(detail::concat({"has an attribute '", name, "' of ", where, " that holds no strings"}));
    // Keras' lists name layers or weights: 65,536 names is beyond any model. The bound is checked
    // before anything is allocated for them (HDF5 copies each variable-length string it reads, so a
    // crafted list whose elements all point at one long string asks for count times its length).
    constexpr hssize_t most_names = hssize_t{1} << 16;
    if (count < 0 || count > most_names)
        ctx.fail(detail::concat({"has an attribute '", name, "' of ", where, " with ", std::to_string(count),
                                 " strings; a Keras file's lists hold at most ", std::to_string(most_names)}));
    const auto n = static_cast<std::size_t>(count);
    if (H5Tis_variable_str(type.get()) > 0) {
        const handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
        (void)H5Tset_size(mem.get(), H5T_VARIABLE);
        (void)H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
        std::vector<char*> ptrs(n, nullptr);
        if (H5Aread(attr.get(), mem.get(), ptrs.data()) < 0)
            ctx.fail(detail::concat({"cannot be read: the attribute '", name, "' of ", where, ": ", last_error()}));
        for (char* p : ptrs)
            out.emplace_back(p != nullptr ? p : "");
        (void)H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    } else {
        const std::size_t size = H5Tget_size(type.get());
        if (size == 0 || size > (std::size_t{1} << 20) || size * n > (std::size_t{64} << 20))
            ctx.fail(detail::concat({"has an attribute '", name, "' of ", where, " with ", std::to_string(n),
                                     " strings of ", std::to_string(size), " bytes"}));
        std::vector<char> bytes(size * n);
        if (H5Aread(attr.get(), type.get(), bytes.data()) < 0)
            ctx.fail(detail::concat({"cannot be read: the attribute '", name, "' of ", where, ": ", last_error()}));
        for (std::size_t i = 0; i < n; ++i) {
            const char* p = bytes.data() + i * size;
            out.emplace_back(p, strnlen(p, size));   // null-terminated, null- or space-padded
            while (!out.back().empty() && out.back().back() == ' ' &&
                   H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD)
                out.back().pop_back();
        }
    }
    return out;
}

/// Keras' `load_attributes_from_hdf5_group`: `name`, or its chunks `name0`, `name1`, ... joined.
[[nodiscard]] inline std::optional<std::vector<std::string>>
read_chunked_string_attribute(const context& ctx, hid_t obj, const std::string& name, const std::string& where)
{
    if (auto whole = read_string_attribute(ctx, obj, name, where))
        return whole;
    std::optional<std::vector<std::string>> joined;
    for (int chunk = 0;; ++chunk) {
        auto part = read_string_attribute(ctx, obj, name + std::to_string(chunk), where);
        if (!part)
            return joined;
        if (!joined)
            joined.emplace();
        joined->insert(joined->end(), part->begin(), part->end());
        if (joined->size() > (std::size_t{1} << 16))
            ctx.fail(detail::concat({"has attributes '", name, "0', '", name, "1', ... of ", where,
                                     " with more than ", std::to_string(std::size_t{1} << 16),
                                     " strings together; a Keras file's lists hold fewer"}));
    }
}

/// The name of the HDF5 filter `id` ("deflate", "lzf", ...) for messages.
[[nodiscard]] inline std::string
filter_name(H5Z_filter_t id, const char* stored)
{
    std::string name = stored != nullptr ? std::string(stored) : std::string();
    if (name.empty()) {
        switch (id) {
        case H5Z_FILTER_DEFLATE: name = "deflate"; break;
        case H5Z_FILTER_SHUFFLE: name = "shuffle"; break;
        case H5Z_FILTER_FLETCHER32: name = "fletcher32"; break;
        case H5Z_FILTER_SZIP: name = "szip"; break;
        case H5Z_FILTER_NBIT: name = "nbit"; break;
        case H5Z_FILTER_SCALEOFFSET: name = "scaleoffset"; break;
        case 32000: name = "lzf"; break;
        default: name = "unnamed"; break;
        }
    }
    return detail::concat({"'", name, "' (id ", std::to_string(id), ")"});
}

/// The dataset creation properties of `ds` (its layout, external files, filters).
[[nodiscard]] inline handle
creation_properties(const context& ctx, hid_t ds, const std::string& what)
{
    handle dcpl(H5Dget_create_plist(ds), H5Pclose);
    if (!dcpl)
        ctx.fail(detail::concat({"cannot be read: the storage of ", what, ": ", last_error()}));
    return dcpl;
}

/// Refuses a dataset whose values are not in this file: external raw storage (its bytes are another
/// file's) or a virtual dataset (made of other files' datasets). Called right after the dataset is
/// opened, before anything that could open the other files.
inline void
check_dataset_in_file(const context& ctx, hid_t ds, const std::string& what)
{
    const handle dcpl = creation_properties(ctx, ds, what);
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL)
        ctx.fail(detail::concat({"holds ", what, " as a virtual dataset, made of datasets in other files; a weights "
                                 "file that reaches outside itself is refused (Keras writes none)"}));
    if (const int external = H5Pget_external_count(dcpl.get()); external != 0)
        ctx.fail(detail::concat({"holds ", what, " in external storage (its values in ",
                                 external > 0 ? std::to_string(external) : std::string("some"),
                                 " other file(s)); a weights file that reaches outside itself is refused (Keras "
                                 "writes none)"}));
    if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT)
        ctx.fail(detail::concat({"holds ", what, " in a storage layout this reader does not know"}));
}

/// Refuses a dataset that this HDF5 cannot decode (a filter the library lacks) or whose values were
/// never all written (HDF5 would give its fill value).
inline void
check_dataset_written(const context& ctx, hid_t ds, const std::string& what)
{
    const handle dcpl = creation_properties(ctx, ds, what);
    const int filters = H5Pget_nfilters(dcpl.get());
    for (int i = 0; i < filters; ++i) {
        unsigned flags = 0, config = 0;
        std::size_t values = 0;
        char name[64] = {};
        const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &values, nullptr,
                                               sizeof name, name, &config);
        if (id < 0)
            ctx.fail(detail::concat({"cannot be read: the filters of ", what, ": ", last_error()}));
        name[sizeof name - 1] = '\0';
        if (H5Zfilter_avail(id) <= 0)
            ctx.fail(detail::concat({"holds ", what, " compressed with the HDF5 filter ", filter_name(id, name),
                                     ", which this HDF5 library does not have (install its plugin, or save the "
                                     "weights without compression)"}));
    }
    // Contiguous storage is there once written; chunked storage has a chunk for each part written
    // (H5Dget_space_status says "partly" for every compressed dataset, so the chunks are counted); a
    // compact dataset's space is in its header from the start, and cannot tell.
    bool never = false, partly = false;
    if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
        const handle space(H5Dget_space(ds), H5Sclose);
        const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : -1;
        std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0))), chunk(dims.size());
        hsize_t chunks = 0;
        if (rank < 0 || H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0 ||
            H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank || H5Dget_num_chunks(ds, space.get(), &chunks) < 0)
            ctx.fail(detail::concat({"cannot be read: the chunks of ", what, ": ", last_error()}));
        hsize_t expected = 1;   // the shape was checked: small, and no extent is 0
        for (std::size_t d = 0; d < dims.size(); ++d)
            expected *= chunk[d] == 0 ? 1 : (dims[d] + chunk[d] - 1) / chunk[d];
        never = chunks == 0;
        partly = !never && chunks < expected;
    } else {
        H5D_space_status_t status{};
        if (H5Dget_space_status(ds, &status) < 0)
            ctx.fail(detail::concat({"cannot be read: the storage of ", what, ": ", last_error()}));
        never = status == H5D_SPACE_STATUS_NOT_ALLOCATED;
    }
    if (never || partly)
        ctx.fail(detail::concat({"holds ", what, " in a dataset ", never ? "created but never written" : "only partly written",
                                 "; HDF5 would give its fill value (zeros) for weights"}));
}

/// Reads the dataset `name` of `loc` into `out` as float32 (HDF5 converts float64 and other float
/// sizes), after checking that its values are in this file (check_dataset_in_file), that its shape
/// is `expected` and that it was written (check_dataset_written); then that every value is finite (a float64 beyond float32's range becomes an
/// infinity). `what` names the weight for messages.
inline void
read_weight(const context& ctx, hid_t loc, const std::string& name, const std::vector<std::size_t>& expected,
            float* out, const std::string& what)
{
    if (!has_link(ctx, loc, name))
        ctx.fail(detail::concat({"has no dataset for ", what}));
    const handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds)
        ctx.fail(detail::concat({"has no dataset for ", what, ": ", last_error()}));
    check_dataset_in_file(ctx, ds.get(), what);
    const handle type(H5Dget_type(ds.get()), H5Tclose);
    if (!type || H5Tget_class(type.get()) != H5T_FLOAT)
        ctx.fail(detail::concat({"holds ", what, " in a dataset that is not of floating-point numbers"}));
    const handle space(H5Dget_space(ds.get()), H5Sclose);
    const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : -1;
    if (rank < 0)
        ctx.fail(detail::concat({"cannot be read: the shape of ", what, ": ", last_error()}));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    (void)H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    const std::vector<std::size_t> got(dims.begin(), dims.end());
    if (got != expected)
        ctx.fail(detail::concat({"holds ", what, " of shape ", dims_string(got), "; this model's is ",
                                 dims_string(expected)}));
    check_dataset_written(ctx, ds.get(), what);
    if (H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        ctx.fail(detail::concat({"cannot be read: the values of ", what, ": ", last_error()}));
    std::size_t count = 1;
    for (std::size_t d : expected)
        count *= d;
    for (std::size_t e = 0; e < count; ++e)
        if (!std::isfinite(out[e]))
            ctx.fail(detail::concat({"holds ", std::isnan(out[e]) ? "nan" : out[e] > 0 ? "inf" : "-inf",
                                     " at element ", std::to_string(e), " of ", what,
                                     " (a float64 beyond float32's range reads as an infinity); weights must be "
                                     "finite"}));
}

/// One weight of a model, as the readers and writers see it.
struct weight_ref {
    std::string role;                   // "kernel", "bias", "embeddings"
    std::vector<std::size_t> shape;     // Keras' shape
    std::size_t offset;                 // floats into the flat parameter buffer
    std::size_t size;                   // floats
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
    return {std::string(weight_role_name(W::role)),
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

/// The model's layers, in order, with the names Keras gives them.
template <class Model>
[[nodiscard]] std::vector<layer_ref>
layers_of()
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
    // Keras 3's `_get_unique_name`: the first of a class keeps the bare name, the next get _1, _2, ...
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string base = to_snake_case(layers[i].class_name);
        std::size_t before = 0;
        for (std::size_t j = 0; j < i; ++j)
            before += to_snake_case(layers[j].class_name) == base;
        layers[i].group = before == 0 ? base : detail::concat({base, "_", std::to_string(before)});
    }
    return layers;
}

[[nodiscard]] inline std::string
describe(const layer_ref& l, std::size_t index)
{
    return "layer " + std::to_string(index) + " '" + l.name + "' (" + l.class_name + ")";
}

// ---------------------------------------------------------------------------------------------
// Writing

/// A file built in memory (HDF5's core driver, no backing store).
[[nodiscard]] inline handle
create_memory_file(const context& ctx)
{
    const handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    if (!fapl || H5Pset_fapl_core(fapl.get(), std::size_t{1} << 20, 0) < 0)
        ctx.fail(detail::concat({"cannot be written: HDF5's in-memory driver is not available: ", last_error()}));
    handle file(H5Fcreate("tpudsl-weights.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
    if (!file)
        ctx.fail(detail::concat({"cannot be written: HDF5 cannot create a file in memory: ", last_error()}));
    return file;
}

[[nodiscard]] inline handle
create_group(const context& ctx, hid_t loc, const std::string& name)
{
    handle g(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g)
        ctx.fail(detail::concat({"cannot be written: the group '", name, "': ", last_error()}));
    return g;
}

/// A scalar variable-length UTF-8 string attribute, as h5py writes a Python `str`.
inline void
write_string_attribute(const context& ctx, hid_t obj, const std::string& name, const std::string& value)
{
    const handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    (void)H5Tset_size(type.get(), H5T_VARIABLE);
    (void)H5Tset_cset(type.get(), H5T_CSET_UTF8);
    const handle space(H5Screate(H5S_SCALAR), H5Sclose);
    const handle attr(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    const char* p = value.c_str();
    if (!attr || H5Awrite(attr.get(), type.get(), &p) < 0)
        ctx.fail(detail::concat({"cannot be written: the attribute '", name, "': ", last_error()}));
}

/// A 1-D array of fixed-length, null-padded strings, as h5py writes numpy's `S` arrays (Keras 2's
/// `layer_names` and `weight_names`); an empty list is an empty float64 array, as `np.asarray([])`.
inline void
write_string_list_attribute(const context& ctx, hid_t obj, const std::string& name,
                            const std::vector<std::string>& values)
{
    const hsize_t n = values.size();
    const handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (values.empty()) {
        const handle attr(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                          H5Aclose);
        if (!attr)
            ctx.fail(detail::concat({"cannot be written: the attribute '", name, "': ", last_error()}));
        return;
    }
    std::size_t width = 1;
    for (const auto& v : values)
        width = std::max(width, v.size());
    std::vector<char> bytes(width * values.size(), '\0');
    for (std::size_t i = 0; i < values.size(); ++i)
        std::memcpy(bytes.data() + i * width, values[i].data(), values[i].size());
    const handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    (void)H5Tset_size(type.get(), width);
    (void)H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
    const handle attr(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr || H5Awrite(attr.get(), type.get(), bytes.data()) < 0)
        ctx.fail(detail::concat({"cannot be written: the attribute '", name, "': ", last_error()}));
}

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
write_keras3(const context& ctx, hid_t file, const std::vector<layer_ref>& layers, const float* params)
{
    const handle own = create_group(ctx, file, "vars");
    write_string_attribute(ctx, own.get(), "name", "sequential");
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
        for (std::size_t j = 0; j < l.weights.size(); ++j)
            write_weight(ctx, vars, std::to_string(j), l.weights[j], params);
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
        std::vector<std::string> datasets;
        handle vars;
        if (is_group(ctx, all.get(), vars_path)) {
            vars = open_group(ctx, all.get(), vars_path);
            datasets = link_names(vars.get());
        } else if (!l.weights.empty()) {
            ctx.fail(detail::concat({"has no group 'layers/", vars_path, "' for ", describe(l, i), ", which has ",
                                     std::to_string(l.weights.size()), " weights"}));
        }
        if (datasets.size() != l.weights.size())
            ctx.fail(detail::concat({"holds ", std::to_string(datasets.size()), " weights in 'layers/", vars_path,
                                     "' for ", describe(l, i), ", which has ", std::to_string(l.weights.size())}));
        for (std::size_t j = 0; j < l.weights.size(); ++j)
            read_weight(ctx, vars.get(), std::to_string(j), l.weights[j].shape, params + l.weights[j].offset,
                        detail::concat({"'layers/", vars_path, "/", std::to_string(j), "', the ", l.weights[j].role,
                                        " of ", describe(l, i)}));
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
/// @tparam Model a `Sequential<...>`
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
            detail::h5::write_keras3(ctx, file.get(), layers, params);
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
/// @tparam Model a `Sequential<...>`
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
