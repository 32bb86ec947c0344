#pragma once
// The replies the HTTP listener makes on its own, before a request reaches a handler, in the
// OpenAI error format and the overload contract: 503 too_many_connections (Retry-After 1),
// 413 body_too_large, 400 bad_http_request, 431 headers_too_large. `spillway serve` and
// `spillway gateway` answer them alike.

#include "net/http_server.h"

namespace spillway::server {

/// `options` with the four bodies and the 503's contract headers filled in.
net::HttpServerOptions WithApiListenerReplies(net::HttpServerOptions options);

}  // namespace spillway::server
