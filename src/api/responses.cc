#include "api/responses.h"

#include <boost/json.hpp>

namespace spillway::api {
namespace {

namespace json = boost::json;

json::string_view View(std::string_view s) { return json::string_view(s.data(), s.size()); }

/// A string, or null when empty (ApiError's param and code).
json::value StringOrNull(std::string_view s) {
  return s.empty() ? json::value(nullptr) : json::value(View(s));
}

json::array OneElement(json::object element) {
  json::array array;
  array.emplace_back(std::move(element));
  return array;
}

bool IsChat(const ResponseMeta& meta) { return meta.endpoint == Endpoint::kChatCompletions; }

/// {"id", "object", "created", "model"}: the fields every response body starts with.
json::object Envelope(const ResponseMeta& meta, std::string_view object) {
  json::object body;
  body["id"] = View(meta.id);
  body["object"] = View(object);
  body["created"] = meta.created_s;
  body["model"] = View(meta.model);
  return body;
}

/// {prompt_tokens, completion_tokens, total_tokens}; the total is computed in 64 bits.
json::object UsageObject(const Usage& usage) {
  json::object object;
  object["prompt_tokens"] = usage.prompt_tokens;
  object["completion_tokens"] = usage.completion_tokens;
  object["total_tokens"] = static_cast<std::int64_t>(usage.prompt_tokens) + usage.completion_tokens;
  return object;
}

/// The streamed choice's delta (OpenAI chat streaming): role on the first chunk, content when
/// there is new text or on the first chunk, {} otherwise (the finishing chunk).
json::object ChatDelta(std::string_view text, bool first) {
  json::object delta;
  if (first) {
    delta["role"] = "assistant";
  }
  if (first || !text.empty()) {
    delta["content"] = View(text);
  }
  return delta;
}

}  // namespace

std::string CompletionJson(const ResponseMeta& meta, std::string_view text,
                           std::string_view finish_reason, const Usage& usage) {
  json::object body = Envelope(meta, IsChat(meta) ? "chat.completion" : "text_completion");
  json::object choice;
  choice["index"] = 0;
  if (IsChat(meta)) {
    choice["message"] = {{"role", "assistant"}, {"content", View(text)}};
  } else {
    choice["text"] = View(text);
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = View(finish_reason);
  body["choices"] = OneElement(std::move(choice));
  body["usage"] = UsageObject(usage);
  return json::serialize(body);
}

std::string StreamChunkJson(const ResponseMeta& meta, std::string_view text, bool first,
                            std::optional<std::string_view> finish_reason) {
  json::object body = Envelope(meta, IsChat(meta) ? "chat.completion.chunk" : "text_completion");
  json::object choice;
  choice["index"] = 0;
  if (IsChat(meta)) {
    choice["delta"] = ChatDelta(text, first);
  } else {
    choice["text"] = View(text);
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] =
      finish_reason.has_value() ? json::value(View(*finish_reason)) : json::value(nullptr);
  body["choices"] = OneElement(std::move(choice));
  body["usage"] = nullptr;
  return json::serialize(body);
}

std::string UsageChunkJson(const ResponseMeta& meta, const Usage& usage) {
  json::object body = Envelope(meta, IsChat(meta) ? "chat.completion.chunk" : "text_completion");
  body["choices"] = json::array();
  body["usage"] = UsageObject(usage);
  return json::serialize(body);
}

std::string ErrorJson(const ApiError& error) {
  json::object inner;
  inner["message"] = View(error.message);
  inner["type"] = View(error.type);
  inner["param"] = StringOrNull(error.param);
  inner["code"] = StringOrNull(error.code);
  json::object body;
  body["error"] = std::move(inner);
  return json::serialize(body);
}

namespace {

json::object ModelObject(std::string_view model, std::int64_t created_s, std::string_view executor,
                         bool emulated, std::int32_t max_model_len) {
  json::object spillway;
  spillway["executor"] = View(executor);
  spillway["emulated"] = emulated;
  spillway["note"] = emulated ? "Emulated executor: latencies come from a cost model and the "
                                "text is placeholder tokens, not model output."
                              : "Text and latencies come from the model executor.";
  json::object entry;
  entry["id"] = View(model);
  entry["object"] = "model";
  entry["created"] = created_s;
  entry["owned_by"] = "spillway";
  entry["max_model_len"] = max_model_len;
  entry["spillway"] = std::move(spillway);
  return entry;
}

}  // namespace

std::string ModelJson(std::string_view model, std::int64_t created_s, std::string_view executor,
                      bool emulated, std::int32_t max_model_len) {
  return json::serialize(ModelObject(model, created_s, executor, emulated, max_model_len));
}

std::string ModelsJson(std::string_view model, std::int64_t created_s, std::string_view executor,
                       bool emulated, std::int32_t max_model_len) {
  json::object body;
  body["object"] = "list";
  body["data"] = OneElement(ModelObject(model, created_s, executor, emulated, max_model_len));
  return json::serialize(body);
}

std::string SseData(std::string_view json) {
  std::string frame;
  frame.reserve(json.size() + 8);
  frame.append("data: ").append(json).append("\n\n");
  return frame;
}

std::vector<std::string> ModelIds(std::string_view models_json) {
  std::vector<std::string> ids;
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(models_json, ec);
  const boost::json::value* data = ec ? nullptr : v.find_pointer("/data", ec);
  if (ec || data == nullptr || !data->is_array()) {
    return ids;
  }
  for (const boost::json::value& m : data->get_array()) {
    const boost::json::value* id = m.is_object() ? m.get_object().if_contains("id") : nullptr;
    if (id != nullptr && id->is_string()) {
      ids.emplace_back(id->get_string());
    }
  }
  return ids;
}

std::optional<std::string> FirstModelId(std::string_view models_json) {
  std::vector<std::string> ids = ModelIds(models_json);
  if (ids.empty()) {
    return std::nullopt;
  }
  return std::move(ids.front());
}

}  // namespace spillway::api
