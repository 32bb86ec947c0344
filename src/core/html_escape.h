#pragma once
// Text made safe for HTML, shared by the pages Spillway writes (the report, the policy page).

#include <string>
#include <string_view>

namespace spillway {

/// `text` safe as HTML element content or a quoted attribute value: & < > " ' escaped.
inline std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace spillway
