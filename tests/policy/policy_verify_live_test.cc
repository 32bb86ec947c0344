// `spillway policy verify` against a live `spillway serve` (emulated engine) configured from the
// reference policy: every checklist item ticked and written into the verified copy; and an
// engine that lets abandoned streams run on failing the disconnect items, the rest kept.
// Short runs (3 s baseline and burst, a 5 s replay).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/run_command.h"
#include "common/server_process.h"
#include "common/temp_dir.h"
#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

using testing_util::CommandResult;
using testing_util::RunCommand;

const std::string kVerifySource = SPILLWAY_SOURCE_DIR;

// Renders the reference policy into `dir` and starts serve on its config (plus `extra`).
std::unique_ptr<server_test::ServerProcess> ServeReference(const std::string& dir,
                                                           std::vector<std::string> extra) {
  const CommandResult render =
      RunCommand({SPILLWAY_BINARY, "policy", "render", kVerifySource + "/policies/reference.yaml",
                  "--out", dir},
                 60);
  EXPECT_EQ(render.exit_code, 0) << render.output;
  std::vector<std::string> args = {"--config", dir + "/serve.yaml"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto server = std::make_unique<server_test::ServerProcess>(args);
  EXPECT_TRUE(server->WaitUntilListening(15)) << server->error();
  return server;
}

std::vector<std::string> Verify(const std::string& policy, std::uint16_t port,
                                const std::string& out) {
  return {SPILLWAY_BINARY, "policy",
          "verify",        policy,
          "--target",      "http://127.0.0.1:" + std::to_string(port),
          "--out",         out,
          "--scenario",    kVerifySource + "/scenarios/seed-burst.yaml",
          "--baseline-s",  "5",
          "--burst-s",     "5",
          "--replay-s",    "10",
          "--no-progress"};
}

TEST(LivePolicyVerifyTest, TheReferenceEngineTicksEveryItemAndTheVerdictsAreWrittenIntoTheFile) {
  const testing_util::TempDir tmp;
  const auto server = ServeReference(tmp.path().string(), {});
  const std::string out = (tmp.path() / "verified").string();
  const CommandResult r =
      RunCommand(Verify(kVerifySource + "/policies/reference.yaml", server->port(), out), 240);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(11 pass, 0 fail, 0 unchecked)"), std::string::npos) << r.output;
  const Policy verified = ReadPolicyFile(out + "/policy.yaml");
  for (const auto* list : {&verified.cancellation, &verified.validation}) {
    for (const ChecklistItem& item : *list) {
      EXPECT_EQ(item.verdict, Verdict::kPass) << item.id << ": " << item.evidence;
      EXPECT_NE(item.evidence.find(out + "/verify/"), std::string::npos) << item.evidence;
      EXPECT_FALSE(item.checked_at.empty());
    }
  }
  for (const char* file :
       {"policy.md", "policy.html", "serve.yaml", "verify/baseline.json", "verify/burst.json",
        "verify/retry-storm.jsonl", "verify/disconnect.json", "verify/replay-live.json",
        "verify/replay-sim.json"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + file)) << file;
  }
}

TEST(LivePolicyVerifyTest, AnEngineThatLetsAbandonedStreamsRunFailsTheDisconnectItemsOnly) {
  const testing_util::TempDir tmp;
  const auto server = ServeReference(tmp.path().string(), {"--no-cancel-propagation"});
  const std::string out = (tmp.path() / "verified").string();
  std::vector<std::string> args =
      Verify(kVerifySource + "/policies/reference.yaml", server->port(), out);
  args.insert(args.end(), {"--only", "disconnect"});
  const CommandResult r = RunCommand(args, 120);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const Policy verified = ReadPolicyFile(out + "/policy.yaml");
  for (const ChecklistItem& item : verified.cancellation) {
    EXPECT_EQ(item.verdict, Verdict::kFail) << item.id << ": " << item.evidence;
  }
  for (const ChecklistItem& item : verified.validation) {
    // The one disconnect item fails; the others were not run and keep the file's verdicts.
    EXPECT_EQ(item.verdict, item.id == "disconnect_frees_kv" ? Verdict::kFail : Verdict::kUnchecked)
        << item.id;
  }
}

}  // namespace
}  // namespace spillway::policy
