#pragma once
// The `messages` of a /v1/chat/completions request (OpenAI API reference, "Create chat
// completion", request body "messages"). Internal to src/api.

#include <boost/json/fwd.hpp>

#include "api/json_fields.h"
#include "api/openai_types.h"
#include "api/request_parser.h"

namespace spillway::api {

/// Reads body["messages"] into out->messages: a non-empty array (at most
/// limits.max_messages) of {"role", "content"} objects. role is one of system, user,
/// assistant, tool, developer; content is a string or a non-empty array of
/// {"type": "text", "text": ...} parts, concatenated without a separator. An assistant message
/// may omit content or set it to null (OpenAI allows this when it carries tool_calls); it
/// reads as "". Other fields of a message (name, tool_calls, ...) are ignored. Errors are 400
/// with param "messages" or a path such as "messages[2].content[0].type"; other part types
/// (image_url, input_audio, file, ...) get code "unsupported_content_part".
json_fields::Status ParseChatMessages(const boost::json::object& body, const RequestLimits& limits,
                                      CompletionRequest* out);

}  // namespace spillway::api
