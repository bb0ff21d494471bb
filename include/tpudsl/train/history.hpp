/// @file Defines Logs (the values of one batch or epoch, in Keras' order), History (what `fit`
/// returns: `history.history["loss"]`, `history.epoch`, `history.params`) and Scores (what `evaluate`
/// returns: `scores[0]`, or `scores["loss"]` as with Keras' `return_dict=True`).
#ifndef TPUDSL_TRAIN_HISTORY_HPP
#define TPUDSL_TRAIN_HISTORY_HPP

#include <tpudsl/detail/text.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpudsl {

/// Named values in insertion order (Keras' `logs` dict). Setting an existing key never allocates.
class Logs {
public:
    void
    set(std::string_view key, double value)
    {
        for (auto& [k, v] : items_)
            if (k == key) {
                v = value;
                return;
            }
        items_.emplace_back(std::string(key), value);
    }
    [[nodiscard]] std::optional<double>
    get(std::string_view key) const noexcept
    {
        for (const auto& [k, v] : items_)
            if (k == key)
                return v;
        return std::nullopt;
    }
    [[nodiscard]] bool
    contains(std::string_view key) const noexcept
    {
        return get(key).has_value();
    }
    void
    erase(std::string_view key)
    {
        std::erase_if(items_, [&](const auto& kv) { return kv.first == key; });
    }
    void
    clear() noexcept
    {
        items_.clear();
    }
    [[nodiscard]] auto begin() const noexcept { return items_.begin(); }
    [[nodiscard]] auto end() const noexcept { return items_.end(); }
    [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }

private:
    std::vector<std::pair<std::string, double>> items_;
};

/// What `evaluate` returns: the loss, then each metric in compile order, read by position (Keras'
/// list: `scores[1]`) or by name (Keras' `return_dict=True`: `scores["sparse_categorical_accuracy"]`).
class Scores {
public:
    Scores() = default;
    Scores(std::vector<std::string> names, std::vector<double> values) : names_(std::move(names)), values_(std::move(values))
    {
    }

    [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
    [[nodiscard]] double operator[](std::size_t i) const { return values_.at(i); }
    /// The value named `name` ("loss", or a metric's name); throws std::out_of_range naming the ones
    /// there are.
    [[nodiscard]] double
    operator[](std::string_view name) const
    {
        for (std::size_t i = 0; i < names_.size(); ++i)
            if (names_[i] == name)
                return values_[i];
        std::string known;
        for (const auto& n : names_)
            known += (known.empty() ? "" : ", ") + n;
        throw std::out_of_range(detail::concat({"tpudsl::Scores: no value named '", name, "' (there are: ", known,
                                                ")"}));
    }
    [[nodiscard]] bool
    contains(std::string_view name) const noexcept
    {
        return std::find(names_.begin(), names_.end(), name) != names_.end();
    }
    [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
    [[nodiscard]] const std::vector<double>& values() const noexcept { return values_; }
    [[nodiscard]] auto begin() const noexcept { return values_.begin(); }
    [[nodiscard]] auto end() const noexcept { return values_.end(); }
    friend bool operator==(const Scores&, const Scores&) = default;

private:
    std::vector<std::string> names_;
    std::vector<double> values_;
};

namespace detail {

/// Keras' CSVLogger's header line: `epoch` and the keys, joined by `separator`.
inline void
append_csv_header(std::string& text, const std::vector<std::string>& keys, char separator)
{
    text += "epoch";
    for (const auto& k : keys)
        (text += separator) += k;
    text += '\n';
}

/// CSVLogger's row of an epoch: its 0-based index, then each key's value to 17 significant digits (it
/// reads back the same double), `NA` where the logs have none.
inline void
append_csv_row(std::string& text, std::size_t epoch, const std::vector<std::string>& keys, char separator,
               const Logs& logs)
{
    text += std::to_string(epoch);
    for (const auto& k : keys) {
        text += separator;
        if (const auto v = logs.get(k)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", *v);
            text += buf;
        } else {
            text += "NA";
        }
    }
    text += '\n';
}

} // namespace detail

/// What `fit` returns. `history["val_loss"]` has one entry per epoch on which validation ran.
struct History {
    struct Params {
        int verbose = 1;
        std::size_t epochs = 0;
        std::size_t steps = 0;
    };

    std::vector<std::pair<std::string, std::vector<double>>> history;
    std::vector<std::size_t> epoch;   // 0-based, as Keras
    Params params;
    /// Per entry of `history`, the epochs its values belong to (a `val_` entry has one only for the
    /// epochs validation ran on).
    std::vector<std::vector<std::size_t>> epochs_of_entry;

    [[nodiscard]] const std::vector<double>&
    operator[](std::string_view key) const
    {
        for (const auto& [k, v] : history)
            if (k == key)
                return v;
        throw std::out_of_range(detail::concat({"tpudsl::History: no entry '", key, "'"}));
    }
    [[nodiscard]] bool
    contains(std::string_view key) const noexcept
    {
        for (const auto& kv : history)
            if (kv.first == key)
                return true;
        return false;
    }
    /// The epochs (0-based) of `key`'s values; throws std::out_of_range as operator[] does.
    [[nodiscard]] const std::vector<std::size_t>&
    epochs_of(std::string_view key) const
    {
        for (std::size_t i = 0; i < history.size(); ++i)
            if (history[i].first == key)
                return epochs_of_entry.at(i);
        throw std::out_of_range(detail::concat({"tpudsl::History: no entry '", key, "'"}));
    }
    /// History.on_epoch_end: appends every value of the epoch's logs.
    void
    record(std::size_t e, const Logs& logs)
    {
        epoch.push_back(e);
        for (const auto& [k, v] : logs) {
            auto it = std::find_if(history.begin(), history.end(), [&](const auto& kv) { return kv.first == k; });
            if (it == history.end()) {
                history.emplace_back(k, std::vector<double>{v});
                epochs_of_entry.push_back({e});
            } else {
                it->second.push_back(v);
                epochs_of_entry[static_cast<std::size_t>(it - history.begin())].push_back(e);
            }
        }
    }
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_HISTORY_HPP
