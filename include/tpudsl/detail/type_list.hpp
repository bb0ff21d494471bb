/// @file Defines a minimal type list with O(1)-depth indexing (private).
#ifndef TPUDSL_DETAIL_TYPE_LIST_HPP
#define TPUDSL_DETAIL_TYPE_LIST_HPP

#include <cstddef>
#include <type_traits>
#include <utility>

namespace tpudsl::detail {

template <class... Ts>
struct type_list {
    static constexpr std::size_t size = sizeof...(Ts);
};

template <std::size_t I, class T>
struct indexed {
    using type = T;
};

template <class Seq, class... Ts>
struct indexer;
template <std::size_t... I, class... Ts>
struct indexer<std::index_sequence<I...>, Ts...> : indexed<I, Ts>... {};

template <std::size_t I, class T>
indexed<I, T> select_indexed(indexed<I, T>);

template <std::size_t I, class List>
struct type_at;
template <std::size_t I, class... Ts>
struct type_at<I, type_list<Ts...>> {
    static_assert(I < sizeof...(Ts), "tpudsl: index out of range");
    using type = typename decltype(select_indexed<I>(indexer<std::index_sequence_for<Ts...>, Ts...>{}))::type;
};

/// The I-th type of a type_list (indexing by overload resolution, not recursion).
template <std::size_t I, class List>
using type_at_t = typename type_at<I, List>::type;

template <class T, class List>
struct prepend;
template <class T, class... Ts>
struct prepend<T, type_list<Ts...>> {
    using type = type_list<T, Ts...>;
};

} // namespace tpudsl::detail

#endif // !TPUDSL_DETAIL_TYPE_LIST_HPP
