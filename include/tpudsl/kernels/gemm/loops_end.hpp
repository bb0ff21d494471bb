/// @file Closes what loops_begin.hpp opened: GCC's warnings as they were before it (private; no
/// include guard).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
