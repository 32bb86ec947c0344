// The exact-result cache's store (routing/result_cache.h): LRU by entries and bytes, the TTL.

#include "routing/result_cache.h"

#include <gtest/gtest.h>

namespace spillway::routing {
namespace {

CachedAnswer Answer(std::string body) { return {"application/json", std::move(body), false}; }

ResultCacheConfig Config(std::int64_t entries, std::int64_t bytes = 1 << 20) {
  ResultCacheConfig c;
  c.max_entries = entries;
  c.max_bytes = bytes;
  c.ttl_s = 10;
  return c;
}

TEST(ResultCacheTest, AStoredAnswerIsFoundUntilItsTtl) {
  ResultCache cache(Config(10));
  EXPECT_FALSE(cache.Find("k", 0).has_value());
  EXPECT_EQ(cache.Store("k", Answer("body"), 0), 0);
  ASSERT_TRUE(cache.Find("k", 9.9).has_value());
  EXPECT_EQ(cache.Find("k", 9.9)->body, "body");
  EXPECT_FALSE(cache.Find("k", 10).has_value()) << "ttl 10 s";
  EXPECT_EQ(cache.stats().entries, 0) << "an expired entry is dropped when found";
  EXPECT_EQ(cache.stats().bytes, 0);
}

TEST(ResultCacheTest, TheLeastRecentlyUsedLeaveFirstByEntriesAndByBytes) {
  ResultCache cache(Config(2));
  cache.Store("a", Answer("1"), 0);
  cache.Store("b", Answer("2"), 0);
  ASSERT_TRUE(cache.Find("a", 1).has_value());  // b is now the least recently used
  EXPECT_EQ(cache.Store("c", Answer("3"), 1), 1);
  EXPECT_FALSE(cache.Find("b", 1).has_value());
  EXPECT_TRUE(cache.Find("a", 1).has_value());
  EXPECT_TRUE(cache.Find("c", 1).has_value());

  // Bytes: key + body + content type (16 bytes of "application/json").
  ResultCache small(Config(100, 2 * (1 + 4 + 16)));
  small.Store("a", Answer("xxxx"), 0);
  small.Store("b", Answer("yyyy"), 0);
  EXPECT_EQ(small.stats().bytes, 42);
  EXPECT_EQ(small.Store("c", Answer("zzzz"), 0), 1);
  EXPECT_FALSE(small.Find("a", 0).has_value());
  EXPECT_EQ(small.stats().entries, 2);
  EXPECT_EQ(small.Store("d", Answer(std::string(100, 'x')), 0), -1) << "larger than the cache";
  EXPECT_EQ(small.stats().entries, 2) << "nothing evicted for an answer that cannot fit";
}

TEST(ResultCacheTest, AStoreReplacesTheEntryAndTooLargeAnswersAreNotStored) {
  ResultCacheConfig c = Config(10);
  c.max_entry_bytes = 64;
  ResultCache cache(c);
  cache.Store("k", Answer("old"), 0);
  cache.Store("k", Answer("new"), 1);
  EXPECT_EQ(cache.Find("k", 1)->body, "new");
  EXPECT_EQ(cache.stats().entries, 1);
  EXPECT_EQ(cache.Store("big", Answer(std::string(64, 'x')), 1), -1);
  EXPECT_FALSE(cache.Find("big", 1).has_value());
  ResultCache off(ResultCacheConfig{});
  EXPECT_EQ(off.Store("k", Answer("x"), 0), -1) << "max_entries 0: no cache";
}

}  // namespace
}  // namespace spillway::routing
