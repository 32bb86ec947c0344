#include "api/chat_messages.h"

#include <array>
#include <string>

#include <boost/json.hpp>

namespace spillway::api {
namespace {

namespace json = boost::json;
using json_fields::Invalid;
using json_fields::kInvalidType;
using json_fields::kInvalidValue;
using json_fields::Status;

constexpr std::string_view kMessagesParam = "messages";
constexpr std::array<std::string_view, 5> kRoles = {"system", "user", "assistant", "tool",
                                                    "developer"};
constexpr std::string_view kRoleRule =
    "one of \"system\", \"user\", \"assistant\", \"tool\", \"developer\"";

std::string Indexed(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Status ReadRole(const json::object& message, const std::string& path, ChatMessage* out) {
  const std::string param = path + ".role";
  const json::value* role = json_fields::Find(message, "role");
  if (role == nullptr) {
    return json_fields::Missing(param);
  }
  const json::string* text = role->if_string();
  if (text == nullptr) {
    return Invalid(param, kRoleRule, *role, kInvalidType);
  }
  for (const std::string_view known : kRoles) {
    if (std::string_view(text->data(), text->size()) == known) {
      out->role = std::string(known);
      return {};
    }
  }
  return Invalid(param, kRoleRule, *role, kInvalidValue);
}

/// One content part; only {"type": "text", "text": <string>} is accepted.
Status AppendTextPart(const json::value& part, const std::string& path, std::string* content) {
  const json::object* object = part.if_object();
  if (object == nullptr) {
    return Invalid(path, "a content part object", part, kInvalidType);
  }
  const json::value* type = json_fields::Find(*object, "type");
  if (type == nullptr) {
    return json_fields::Missing(path + ".type");
  }
  if (!type->is_string() || type->get_string() != "text") {
    return Invalid(path + ".type", "\"text\" (only text content parts are supported)", *type,
                   "unsupported_content_part");
  }
  const json::value* text = json_fields::Find(*object, "text");
  if (text == nullptr) {
    return json_fields::Missing(path + ".text");
  }
  if (!text->is_string()) {
    return Invalid(path + ".text", "a string", *text, kInvalidType);
  }
  content->append(text->get_string().data(), text->get_string().size());
  return {};
}

Status ReadContent(const json::object& message, const std::string& path, ChatMessage* out) {
  const std::string param = path + ".content";
  const json::value* content = json_fields::Find(message, "content");
  if (content == nullptr) {
    if (out->role == "assistant") {
      return {};  // an assistant message may carry tool calls instead
    }
    return json_fields::Missing(param);
  }
  if (const json::string* text = content->if_string()) {
    out->content.assign(text->data(), text->size());
    return {};
  }
  const json::array* parts = content->if_array();
  if (parts == nullptr) {
    return Invalid(param, "a string or an array of text parts", *content, kInvalidType);
  }
  if (parts->empty()) {
    return Invalid(param, "a non-empty array of text parts", *content, kInvalidValue);
  }
  for (std::size_t i = 0; i < parts->size(); ++i) {
    if (Status status = AppendTextPart((*parts)[i], Indexed(param, i), &out->content); !status) {
      return status;
    }
  }
  return {};
}

Status ReadMessage(const json::value& value, const std::string& path, ChatMessage* out) {
  const json::object* message = value.if_object();
  if (message == nullptr) {
    return Invalid(path, "a message object with \"role\" and \"content\"", value, kInvalidType);
  }
  if (Status status = ReadRole(*message, path, out); !status) {
    return status;
  }
  return ReadContent(*message, path, out);
}

}  // namespace

Status ParseChatMessages(const json::object& body, const RequestLimits& limits,
                         CompletionRequest* out) {
  const json::value* value = json_fields::Find(body, kMessagesParam);
  if (value == nullptr) {
    return json_fields::Missing(kMessagesParam);
  }
  const json::array* messages = value->if_array();
  if (messages == nullptr) {
    return Invalid(kMessagesParam, "a non-empty array of message objects", *value, kInvalidType);
  }
  if (messages->empty() || messages->size() > limits.max_messages) {
    const std::string rule =
        "an array of 1 to " + std::to_string(limits.max_messages) + " message objects";
    ApiError error = Invalid(kMessagesParam, rule, *value, kInvalidValue);
    error.message += " (" + std::to_string(messages->size()) + " messages)";
    return error;
  }
  out->messages.resize(messages->size());
  for (std::size_t i = 0; i < messages->size(); ++i) {
    if (Status status = ReadMessage((*messages)[i], Indexed(kMessagesParam, i), &out->messages[i]);
        !status) {
      out->messages.clear();
      return status;
    }
  }
  return {};
}

}  // namespace spillway::api
