/// @file Defines detail::function_ref<R(Args...)>: a non-owning reference to something callable, two
/// pointers wide, so that a non-template function can take a lambda without std::function's
/// allocation. It must not outlive what it refers to: it is for parameters, not members.
#ifndef TPUDSL_DETAIL_FUNCTION_REF_HPP
#define TPUDSL_DETAIL_FUNCTION_REF_HPP

#include <memory>
#include <type_traits>
#include <utility>

namespace tpudsl::detail {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
public:
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
    function_ref(F&& f) noexcept   // NOLINT(google-explicit-constructor): a lambda converts, as to std::function
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
          })
    {
    }

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_FUNCTION_REF_HPP
