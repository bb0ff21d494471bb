/// @file Defines Keras' accuracy metrics (keras-semantics §3.2). A metric counts hits over a batch;
/// the model keeps (total, count) per epoch, so the value is the exact per-sample mean.
#ifndef TPUDSL_TRAIN_METRICS_HPP
#define TPUDSL_TRAIN_METRICS_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpudsl {

namespace metrics {

/// `argmax(output) == label` (the first maximum on ties, as TensorFlow's ArgMax on CPU).
struct SparseCategoricalAccuracy {
    static constexpr std::string_view name = "sparse_categorical_accuracy";
    static constexpr bool sparse_labels = true;
};

/// `argmax(output) == argmax(target)`.
struct CategoricalAccuracy {
    static constexpr std::string_view name = "categorical_accuracy";
    static constexpr bool sparse_labels = false;
};

/// A hit when fewer than K classes score strictly higher than the label (ties at the boundary
/// count as hits, as `tf.math.in_top_k`), and every score is finite.
template <std::size_t K = 5>
struct SparseTopKCategoricalAccuracy {
    static_assert(K > 0, "tpudsl::metrics::SparseTopKCategoricalAccuracy<K>: requires K > 0");
    static constexpr std::string_view name = "sparse_top_k_categorical_accuracy";
    static constexpr bool sparse_labels = true;
    static constexpr std::size_t k = K;
};

} // namespace metrics

namespace detail {
inline std::size_t
argmax(const float* row, std::size_t d) noexcept
{
    std::size_t best = 0;
    for (std::size_t j = 1; j < d; ++j)
        if (row[j] > row[best])
            best = j;
    return best;
}
} // namespace detail

/// Hits of a batch of n rows of d outputs.
inline double
count_hits(const metrics::SparseCategoricalAccuracy&, const float* out, std::size_t n, std::size_t d,
           const std::int32_t* labels, const float*) noexcept
{
    double hits = 0;
    for (std::size_t s = 0; s < n; ++s)
        hits += detail::argmax(out + s * d, d) == static_cast<std::size_t>(labels[s]);
    return hits;
}

inline double
count_hits(const metrics::CategoricalAccuracy&, const float* out, std::size_t n, std::size_t d, const std::int32_t*,
           const float* targets) noexcept
{
    double hits = 0;
    for (std::size_t s = 0; s < n; ++s)
        hits += detail::argmax(out + s * d, d) == detail::argmax(targets + s * d, d);
    return hits;
}

template <std::size_t K>
inline double
count_hits(const metrics::SparseTopKCategoricalAccuracy<K>&, const float* out, std::size_t n, std::size_t d,
           const std::int32_t* labels, const float*) noexcept
{
    double hits = 0;
    for (std::size_t s = 0; s < n; ++s) {
        const float* row = out + s * d;
        const float target = row[labels[s]];
        std::size_t higher = 0;
        bool finite = true;
        for (std::size_t j = 0; j < d; ++j) {
            finite = finite && std::isfinite(row[j]);
            higher += row[j] > target;
        }
        hits += finite && higher < K;
    }
    return hits;
}

namespace detail {

/// A compiled metric: its name, whether it reads sparse labels, and how it counts hits.
struct metric_entry {
    std::string name;
    bool sparse_labels;
    double (*hits)(const float*, std::size_t, std::size_t, const std::int32_t*, const float*);
    std::size_t output = 0;   // the output it scores, of a graph of several
};

template <class M>
metric_entry
make_metric_entry(M)
{
    return {std::string(M::name), M::sparse_labels,
            +[](const float* out, std::size_t n, std::size_t d, const std::int32_t* sl, const float* dl) {
                return count_hits(M{}, out, n, d, sl, dl);
            }};
}

} // namespace detail

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_METRICS_HPP
