/// @file Defines detail::aligned_floats_buffer: the zeroed, 64-byte aligned float storage that
/// parameters, gradients, optimizer slots and activations live in.
#ifndef TPUDSL_DETAIL_ALIGNED_BUFFER_HPP
#define TPUDSL_DETAIL_ALIGNED_BUFFER_HPP

#include <tpudsl/config.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>

namespace tpudsl::detail {

/// 64-byte aligned, zeroed float storage of a fixed size.
class aligned_floats_buffer {
public:
    aligned_floats_buffer() = default;
    explicit aligned_floats_buffer(std::size_t n) { resize(n); }
    void
    resize(std::size_t n)
    {
        data_.reset(n ? static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{buffer_alignment}))
                      : nullptr);
        size_ = n;
        std::fill_n(data_.get(), n, 0.0f);
    }
    [[nodiscard]] float* data() noexcept { return data_.get(); }
    [[nodiscard]] const float* data() const noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    struct deleter {
        void operator()(float* p) const noexcept { ::operator delete[](p, std::align_val_t{buffer_alignment}); }
    };
    std::unique_ptr<float[], deleter> data_;
    std::size_t size_ = 0;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_ALIGNED_BUFFER_HPP
