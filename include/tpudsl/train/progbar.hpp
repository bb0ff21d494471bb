/// @file Defines Keras' Progbar (tf.keras 2.x): `281/281 [==============================] - 6s 20ms/step
/// - loss: 3.2577 - ...`, redrawn in place on a terminal, one line per epoch otherwise (verbose 1);
/// `281/281 - 6s - loss: ...` once per epoch (verbose 2).
#ifndef TPUDSL_TRAIN_PROGBAR_HPP
#define TPUDSL_TRAIN_PROGBAR_HPP

#include <tpudsl/train/history.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <string>

namespace tpudsl {

namespace detail {

inline int
count_digits(std::size_t n) noexcept
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        ++d;
    }
    return d;
}

/// `" - name: 0.1234"`, or `%.4e` for |v| <= 1e-3 (Keras' rule).
inline void
append_value(std::string& s, const std::string& name, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, std::abs(v) > 1e-3 ? " %.4f" : " %.4e", v);
    s += " - ";
    s += name;
    s += ':';
    s += buf;
}

/// `" 20ms/step"`: seconds, milliseconds or microseconds per step, as Keras chooses.
inline void
append_step_time(std::string& s, double seconds_per_step)
{
    char buf[32];
    if (seconds_per_step >= 1.0 || seconds_per_step == 0.0)
        std::snprintf(buf, sizeof buf, " %.0fs/step", seconds_per_step);
    else if (seconds_per_step >= 1e-3)
        std::snprintf(buf, sizeof buf, " %.0fms/step", seconds_per_step * 1e3);
    else
        std::snprintf(buf, sizeof buf, " %.0fus/step", seconds_per_step * 1e6);
    s += buf;
}

} // namespace detail

/// The text of one verbose-1 progress line (without the line ending), given the times. A target of
/// 0 is unknown (a dataset's first pass): Keras prints `    281/Unknown - 6s 20ms/step - ...`.
[[gnu::cold]] inline std::string
progbar_line(std::size_t current, std::size_t target, double elapsed, double seconds_per_step, const Logs& values)
{
    std::string s;
    char buf[64];
    if (target == 0) {
        std::snprintf(buf, sizeof buf, "%7zu/Unknown - %.0fs", current, elapsed);
        s += buf;
        detail::append_step_time(s, seconds_per_step);
        for (const auto& [k, v] : values)
            detail::append_value(s, k, v);
        return s;
    }
    std::snprintf(buf, sizeof buf, "%*zu/%zu [", detail::count_digits(target), current, target);
    s += buf;
    const std::size_t width = std::min<std::size_t>(30, 30 * current / target);   // a longer pass stays in the bar
    if (width > 0) {
        s.append(width - 1, '=');
        s += current < target ? '>' : '=';
    }
    s.append(30 - width, '.');
    s += ']';
    if (current < target) {
        const double eta = seconds_per_step * static_cast<double>(target - current);
        const long e = static_cast<long>(eta);
        if (eta > 3600)
            std::snprintf(buf, sizeof buf, " - ETA: %ld:%02ld:%02ld", e / 3600, (e % 3600) / 60, e % 60);
        else if (eta > 60)
            std::snprintf(buf, sizeof buf, " - ETA: %ld:%02ld", e / 60, e % 60);
        else
            std::snprintf(buf, sizeof buf, " - ETA: %lds", e);
        s += buf;
    } else {
        std::snprintf(buf, sizeof buf, " - %.0fs", elapsed);
        s += buf;
        detail::append_step_time(s, seconds_per_step);
    }
    for (const auto& [k, v] : values)
        detail::append_value(s, k, v);
    return s;
}

/// The verbose-2 line of a finished epoch.
inline std::string
progbar_epoch_line(std::size_t target, double elapsed, const Logs& values)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu/%zu - %.0fs", target, target, elapsed);
    std::string s = buf;
    for (const auto& [k, v] : values)
        detail::append_value(s, k, v);
    return s;
}

/// One epoch's progress bar.
class Progbar {
public:
    using clock = std::chrono::steady_clock;

    /// @param dynamic redraw in place (a terminal); otherwise verbose 1 prints only the final line.
    Progbar(std::ostream& out, std::size_t target, int verbose, bool dynamic)
        : out_(out), target_(target), verbose_(verbose), dynamic_(dynamic), start_(clock::now()), last_draw_(start_)
    {
    }

    /// After step `current` (1-based), with the running values.
    void
    update(std::size_t current, const Logs& values)
    {
        const auto now = clock::now();
        if (current == 1)
            after_first_ = now;
        if (verbose_ != 1 || !dynamic_ || (target_ != 0 && current >= target_))
            return;
        if (now - last_draw_ < std::chrono::milliseconds(50))
            return;
        last_draw_ = now;
        draw(current, values, now, false);
    }

    /// At the end of the epoch, with the epoch's values (validation included).
    void
    finish(std::size_t current, const Logs& values)
    {
        const auto now = clock::now();
        if (verbose_ == 1)
            draw(current, values, now, true);
        else if (verbose_ == 2)
            out_ << progbar_epoch_line(current, seconds(now - start_), values) << '\n' << std::flush;
    }

private:
    static double
    seconds(clock::duration d) noexcept
    {
        return std::chrono::duration<double>(d).count();
    }

    double
    step_time(std::size_t current, clock::time_point now) const noexcept
    {
        if (current > 1 && after_first_ != clock::time_point{})
            return seconds(now - after_first_) / static_cast<double>(current - 1);   // the first step excluded
        return current ? seconds(now - start_) / static_cast<double>(current) : 0.0;
    }

    void
    draw(std::size_t current, const Logs& values, clock::time_point now, bool final)
    {
        std::string line = progbar_line(current, target_, seconds(now - start_), step_time(current, now), values);
        if (dynamic_) {
            const std::size_t width = line.size();
            if (width < width_)
                line.append(width_ - width, ' ');
            width_ = width;
            out_ << '\r';
        }
        out_ << line;
        if (final)
            out_ << '\n';
        out_ << std::flush;
    }

    std::ostream& out_;
    std::size_t target_;
    int verbose_;
    bool dynamic_;
    clock::time_point start_, last_draw_, after_first_{};
    std::size_t width_ = 0;
};

} // namespace tpudsl

#endif // !TPUDSL_TRAIN_PROGBAR_HPP
