#include "loadgen/stream_chunk.h"

#include <boost/json.hpp>

namespace spillway::loadgen {
namespace json = boost::json;
namespace {

std::string CodeText(const json::value* v) {
  if (v == nullptr) {
    return {};
  }
  if (v->is_string()) {
    return std::string(v->get_string());
  }
  if (v->is_int64()) {
    return std::to_string(v->get_int64());
  }
  if (v->is_uint64()) {
    return std::to_string(v->get_uint64());
  }
  return {};
}

std::optional<StreamError> ErrorOf(const json::object& root) {
  const json::object* e = nullptr;
  if (const json::value* error = root.if_contains("error"); error != nullptr) {
    e = error->if_object();
  } else if (const json::value* object = root.if_contains("object");
             object != nullptr && object->is_string() && object->get_string() == "error") {
    e = &root;
  }
  if (e == nullptr) {
    return std::nullopt;
  }
  StreamError out;
  out.code = CodeText(e->if_contains("code"));
  if (out.code.empty()) {
    out.code = CodeText(e->if_contains("type"));
  }
  if (const json::value* m = e->if_contains("message"); m != nullptr && m->is_string()) {
    out.message = std::string(m->get_string());
  }
  return out;
}

bool NonEmptyString(const json::value* v) {
  return v != nullptr && v->is_string() && !v->get_string().empty();
}

bool HasContent(const json::object& root) {
  const json::value* choices = root.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    return false;
  }
  const json::object* choice = choices->get_array().front().if_object();
  if (choice == nullptr) {
    return false;
  }
  if (NonEmptyString(choice->if_contains("text"))) {
    return true;
  }
  const json::value* delta = choice->if_contains("delta");
  return delta != nullptr && delta->is_object() &&
         NonEmptyString(delta->get_object().if_contains("content"));
}

std::optional<json::object> ParseObject(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    return std::nullopt;
  }
  return std::move(v.get_object());
}

}  // namespace

StreamChunk ReadStreamChunk(std::string_view data) {
  StreamChunk out;
  if (data == "[DONE]") {
    out.done = true;
    return out;
  }
  const std::optional<json::object> root = ParseObject(data);
  if (!root.has_value()) {
    out.malformed = true;
    return out;
  }
  out.error = ErrorOf(*root);
  out.has_content = HasContent(*root);
  if (const json::value* usage = root->if_contains("usage");
      usage != nullptr && usage->is_object()) {
    const json::value* n = usage->get_object().if_contains("completion_tokens");
    if (n != nullptr && (n->is_int64() || n->is_uint64())) {
      out.completion_tokens = n->to_number<std::int64_t>();
    }
  }
  return out;
}

std::optional<StreamError> ReadErrorBody(std::string_view body) {
  const std::optional<json::object> root = ParseObject(body);
  return root.has_value() ? ErrorOf(*root) : std::nullopt;
}

}  // namespace spillway::loadgen
