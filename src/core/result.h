#pragma once
// The value lane's one error convention (style.md, "errors in two lanes"): a function that can
// fail on its input returns Result<T, E>, the value or the error that says why, where E is the
// layer's error type (api::ApiError: HTTP status, OpenAI type, field). Status<E> is the same
// for a function with no value. Both are Boost.System's result (boost/system/result.hpp, a
// subset of C++23's std::expected):
//
//   Result<Request, ApiError> Parse(...) { if (bad) return ApiError{...}; return request; }
//   auto r = Parse(...); if (!r) return Reply(r.error()); Use(*r);
//
// Read the value with `*r` or `r->` after checking `r`; r.error() returns a copy of the error.
// value() does not compile for our error types (Boost.System throws only for error codes and
// exception pointers), which keeps this lane free of exceptions. Configuration loaders are the
// other lane: they throw ConfigError (config/config_error.h) with file, line and field, once, at
// load time. Decisions that are not errors (admission's admit, degrade or refuse) are plain values
// with a verdict.

#include <boost/system/result.hpp>

namespace spillway {

template <class T, class E>
using Result = boost::system::result<T, E>;

template <class E>
using Status = boost::system::result<void, E>;

}  // namespace spillway
