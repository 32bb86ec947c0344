#include "api/routes.h"

#include <boost/url/parse.hpp>
#include <boost/url/scheme.hpp>

namespace spillway::api {

std::string_view PathOf(std::string_view target) {
  if (!target.empty() && target.front() != '/') {
    const auto uri = boost::urls::parse_absolute_uri(target);
    if (uri && uri->has_authority() &&
        (uri->scheme_id() == boost::urls::scheme::http ||
         uri->scheme_id() == boost::urls::scheme::https)) {
      const auto path = uri->encoded_path();
      target = path.empty() ? std::string_view("/") : std::string_view(path.data(), path.size());
    }
  }
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

}  // namespace spillway::api
