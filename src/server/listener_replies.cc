#include "server/listener_replies.h"

#include "api/overload_contract.h"
#include "api/responses.h"

namespace spillway::server {

net::HttpServerOptions WithApiListenerReplies(net::HttpServerOptions http) {
  http.overload_body =
      api::ErrorJson({503, "Too many connections.", "overloaded", "", "too_many_connections"});
  http.overload_headers = api::ContractHeaders("too_many_connections", 1);
  http.too_large_body = api::ErrorJson(
      {413, "Request body too large.", "invalid_request_error", "", "body_too_large"});
  http.bad_request_body = api::ErrorJson(
      {400, "Malformed HTTP request.", "invalid_request_error", "", "bad_http_request"});
  http.headers_too_large_body = api::ErrorJson(
      {431, "Request headers too large.", "invalid_request_error", "", "headers_too_large"});
  return http;
}

}  // namespace spillway::server
