/// @file Writes what `fit` returns as files: `plot_history(history, "curves.svg")`, the training curves
/// as an SVG picture (one panel per quantity: the loss, then each metric, its training values and, where
/// validation ran, its `val_` values, epoch by epoch), and `save_history_csv(history, "history.csv")`,
/// one row per epoch as Keras' CSVLogger writes them. Both files are written atomically.
#ifndef TPUDSL_TRAIN_HISTORY_FILES_HPP
#define TPUDSL_TRAIN_HISTORY_FILES_HPP

#include <tpudsl/detail/text.hpp>
#include <tpudsl/io/files.hpp>
#include <tpudsl/train/history.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tpudsl {

namespace detail {

/// `s` with &, <, > and " as SVG's entities.
[[nodiscard]] inline std::string
svg_text(std::string_view s)
{
    std::string out;
    for (const char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

/// A number as "%.*g" prints it.
[[nodiscard]] inline std::string
fixed_digits(double v, int digits)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

[[gnu::cold]] inline void
require_epochs(const History& h, std::string_view who)
{
    if (h.epoch.empty())
        throw std::invalid_argument(concat({who, ": the History holds no epoch (the fit ran none)"}));
}

/// One panel of plot_history: quantity `name`'s training and validation curves in the box at (x0, y0).
[[gnu::cold]] inline std::string
history_panel(const History& h, const std::string& name, double x0, double y0, double width, double height)
{
    constexpr double left = 64, right = 16, top = 28, bottom = 36;
    const std::string val = "val_" + name;
    const bool has_train = h.contains(name), has_val = h.contains(val);
    const std::size_t first = h.epoch.front(), last = h.epoch.back();
    double lo = INFINITY, hi = -INFINITY;
    for (const std::string& key : {name, val})
        if (h.contains(key))
            for (const double v : h[key])
                if (std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
    if (!(lo <= hi))
        lo = 0, hi = 1;   // no finite value: an empty frame
    if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
        const double pad = std::max(1e-6, std::abs(hi) * 0.05);
        lo -= pad;
        hi += pad;
    }
    const double px = x0 + left, py = y0 + top, pw = width - left - right, ph = height - top - bottom;
    const auto xs = [&](std::size_t e) {
        return last == first ? px + pw / 2 : px + pw * static_cast<double>(e - first) / static_cast<double>(last - first);
    };
    const auto ys = [&](double v) { return py + ph * (hi - v) / (hi - lo); };
    const auto num = [](double v) { return fixed_digits(v, 6); };

    std::string s = concat({"<g>\n<rect x=\"", num(px), "\" y=\"", num(py), "\" width=\"", num(pw), "\" height=\"",
                            num(ph), "\" fill=\"none\" stroke=\"#888\"/>\n<text x=\"", num(x0 + 8), "\" y=\"",
                            num(y0 + 18), "\" font-size=\"14\">", svg_text(name), "</text>\n"});
    for (int t = 0; t <= 4; ++t) {   // five values on the y axis
        const double v = lo + (hi - lo) * t / 4;
        s += concat({"<text x=\"", num(px - 6), "\" y=\"", num(ys(v) + 4), "\" font-size=\"10\" text-anchor=\"end\">",
                     fixed_digits(v, 4), "</text>\n"});
    }
    const std::size_t span = last - first + 1, step = (span + 9) / 10;   // at most ten epoch labels
    for (std::size_t e = first; e <= last; e += step)
        s += concat({"<text x=\"", num(xs(e)), "\" y=\"", num(py + ph + 14), "\" font-size=\"10\" text-anchor=\"middle\">",
                     std::to_string(e + 1), "</text>\n"});
    s += concat({"<text x=\"", num(px + pw / 2), "\" y=\"", num(py + ph + 30),
                 "\" font-size=\"11\" text-anchor=\"middle\">epoch</text>\n"});
    // Each curve: one polyline per run of finite values (a non-finite value breaks the line).
    const auto curve = [&](const std::string& key, std::string_view color, std::string_view dash) {
        const std::vector<double>& values = h[key];
        const std::vector<std::size_t>& epochs = h.epochs_of(key);
        std::string points;
        const auto flush = [&] {
            if (!points.empty())
                s += concat({"<polyline data-key=\"", svg_text(key), "\" fill=\"none\" stroke=\"", color,
                             "\" stroke-width=\"2\"", dash, " points=\"", points, "\"/>\n"});
            points.clear();
        };
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (!std::isfinite(values[i])) {
                flush();
                continue;
            }
            points += concat({points.empty() ? "" : " ", num(xs(epochs[i])), ",", num(ys(values[i]))});
        }
        flush();
    };
    double legend_x = px + pw - 190;   // the legend on the title's line, clear of the curves
    const auto legend = [&](std::string_view label, std::string_view color, std::string_view dash) {
        const double y = y0 + 14;
        s += concat({"<line x1=\"", num(legend_x), "\" y1=\"", num(y), "\" x2=\"", num(legend_x + 24), "\" y2=\"",
                     num(y), "\" stroke=\"", color, "\" stroke-width=\"2\"", dash, "/>\n<text x=\"",
                     num(legend_x + 30), "\" y=\"", num(y + 4), "\" font-size=\"11\">", label, "</text>\n"});
        legend_x += 95;
    };
    constexpr std::string_view solid = "", dashed = " stroke-dasharray=\"6 4\"";
    if (has_train) {
        curve(name, "#1f77b4", solid);
        legend("training", "#1f77b4", solid);
    }
    if (has_val) {
        curve(val, "#ff7f0e", dashed);
        legend("validation", "#ff7f0e", dashed);
    }
    return s + "</g>\n";
}

} // namespace detail

/// Writes `history`'s curves to `path` as an SVG picture, atomically: a panel per quantity (the loss,
/// then each metric, in the order fit logged them), two panels a row, its training values solid and
/// its `val_` values dashed, against the epoch (counted from 1, as fit prints it). Throws
/// std::invalid_argument for a History of no epoch, std::system_error when the file cannot be written.
[[gnu::cold]] inline void
plot_history(const History& history, const std::string& path)
{
    detail::require_epochs(history, "tpudsl::plot_history");
    std::vector<std::string> names;   // "val_x" plots with "x"; one with no "x" alone
    for (const auto& [key, values] : history.history) {
        const std::string name = key.starts_with("val_") && history.contains(key.substr(4)) ? key.substr(4) : key;
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    }
    constexpr double width = 440, height = 280;
    const std::size_t columns = std::min<std::size_t>(2, names.size()), rows = (names.size() + 1) / 2;
    std::string svg = detail::concat(
        {"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", detail::fixed_digits(width * static_cast<double>(columns), 6),
         "\" height=\"", detail::fixed_digits(height * static_cast<double>(rows), 6),
         "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"});
    for (std::size_t i = 0; i < names.size(); ++i)
        svg += detail::history_panel(history, names[i], width * static_cast<double>(i % 2),
                                     height * static_cast<double>(i / 2), width, height);
    svg += "</svg>\n";
    detail::replace_file("tpudsl::plot_history", path, [&](const detail::file_sink& sink) { sink(svg.data(), svg.size()); });
}

/// Writes `history` to `path` as CSV, atomically, as Keras' CSVLogger writes a fit: a header `epoch`
/// and the entries' names in sorted order, then one row per epoch (0-based), each value to 17 digits,
/// `NA` where the epoch has none (a `val_` entry on an epoch validation skipped).
[[gnu::cold]] inline void
save_history_csv(const History& history, const std::string& path)
{
    detail::require_epochs(history, "tpudsl::save_history_csv");
    std::vector<std::string> keys;
    for (const auto& entry : history.history)
        keys.push_back(entry.first);
    std::sort(keys.begin(), keys.end());
    std::string text;
    detail::append_csv_header(text, keys, ',');
    std::vector<std::size_t> next(history.history.size(), 0);   // per entry, its next value's index
    Logs logs;
    for (const std::size_t e : history.epoch) {   // each epoch's logs as fit passed them to CSVLogger
        logs.clear();
        for (std::size_t k = 0; k < history.history.size(); ++k)
            if (next[k] < history.epochs_of_entry[k].size() && history.epochs_of_entry[k][next[k]] == e)
                logs.set(history.history[k].first, history.history[k].second[next[k]++]);
        detail::append_csv_row(text, e, keys, ',', logs);
    }
    detail::replace_file("tpudsl::save_history_csv", path,
                         [&](const detail::file_sink& sink) { sink(text.data(), text.size()); });
}

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_HISTORY_FILES_HPP
