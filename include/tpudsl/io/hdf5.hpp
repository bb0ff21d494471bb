/// @file HDF5's C library as tpudsl's Keras weights files use it (io/keras_h5.hpp; optional: only a
/// program that includes it needs libhdf5): identifiers closed by scope, HDF5's error stack quiet and
/// read back, paths walked through hard links only (an external, soft or user-defined link is refused
/// before anything follows it), string attributes read with bounds, float datasets read only when their
/// values are in the file, all written and finite, and the small writers of an in-memory file.
#ifndef TPUDSL_IO_HDF5_HPP
#define TPUDSL_IO_HDF5_HPP

#include <tpudsl/detail/text.hpp>

#include <hdf5.h>

#include <algorithm>
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

namespace tpudsl::detail::h5 {

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

} // namespace tpudsl::detail::h5

#endif // !TPUDSL_IO_HDF5_HPP
