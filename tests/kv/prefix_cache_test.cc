// Automatic prefix caching in the block manager: registered blocks are reused, released ones
// stay cached until evicted (least recently released first), and the counting view the
// forecasts use answers from the real pool without copying it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "kv/block_manager.h"

namespace spillway {
namespace {

using Table = std::vector<std::int32_t>;
using Hashes = std::vector<std::uint64_t>;

void ExpectConsistent(const BlockManager& bm) {
  std::string err;
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
}

// Grows an empty table to `hashes.size()` full blocks and registers them.
Table Filled(BlockManager& bm, const Hashes& hashes) {
  Table t;
  EXPECT_TRUE(bm.Grow(t, static_cast<std::int64_t>(hashes.size()) * bm.block_size()));
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    bm.Register(t[i], hashes[i]);
  }
  return t;
}

TEST(PrefixCacheTest, ALaterPromptTakesTheRegisteredBlocksOfItsPrefix) {
  BlockManager bm(8, 4, /*prefix_caching=*/true);
  Table a = Filled(bm, {11, 12, 13});
  EXPECT_EQ(bm.num_cached(), 3);
  EXPECT_EQ(bm.MatchPrefix(Hashes{11, 12, 13, 14}), 3);
  EXPECT_EQ(bm.MatchPrefix(Hashes{11, 99, 13}), 1);  // a prefix: stops at the first miss
  EXPECT_EQ(bm.MatchPrefix(Hashes{99, 12}), 0);
  Table b;
  ASSERT_TRUE(bm.AcquireAndGrow(b, Hashes{11, 12}, 2, 4 * 4));  // 2 shared + 2 new
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  EXPECT_EQ(bm.ref_count(a[0]), 2);
  EXPECT_EQ(bm.ref_count(a[2]), 1);
  EXPECT_EQ(bm.num_allocated(), 5);  // 3 + 2 new: shared blocks count once
  ExpectConsistent(bm);
  bm.Release(a);
  EXPECT_EQ(bm.ref_count(b[0]), 1);
  EXPECT_EQ(bm.num_allocated(), 4);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, ReleasedBlocksStayCachedAndCountAsFree) {
  BlockManager bm(4, 4, true);
  Table a = Filled(bm, {1, 2});
  bm.Release(a);
  EXPECT_EQ(bm.num_free(), 4);
  EXPECT_EQ(bm.num_allocated(), 0);
  EXPECT_EQ(bm.num_cached(), 2);
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2}), 2);
  Table b;
  ASSERT_TRUE(bm.AcquireAndGrow(b, Hashes{1, 2}, 2, 8));
  EXPECT_EQ(bm.num_free(), 2);  // revived from the evictable list
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, NeverCachedBlocksAreTakenBeforeEvicting) {
  BlockManager bm(4, 4, true);
  Table a = Filled(bm, {1, 2});
  bm.Release(a);
  Table b;
  ASSERT_TRUE(bm.Grow(b, 8));
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2}), 2);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, EvictionTakesTheLeastRecentlyReleasedAndATablesLastBlockFirst) {
  BlockManager bm(4, 4, true);
  Table a = Filled(bm, {1, 2});
  Table b = Filled(bm, {5, 6});
  bm.Release(a);  // evictable: a[1], a[0]
  bm.Release(b);  // then b[1], b[0]
  Table c;
  ASSERT_TRUE(bm.Grow(c, 4));  // evicts a[1]
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2}), 1);
  EXPECT_EQ(bm.MatchPrefix(Hashes{5, 6}), 2);
  ASSERT_TRUE(bm.Grow(c, 8));  // evicts a[0]
  EXPECT_EQ(bm.MatchPrefix(Hashes{1}), 0);
  EXPECT_EQ(bm.MatchPrefix(Hashes{5, 6}), 2);
  EXPECT_EQ(bm.num_cached(), 2);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, TheFirstBlockToHoldTokensKeepsTheirHash) {
  BlockManager bm(4, 4, true);
  Table a = Filled(bm, {7});
  Table b = Filled(bm, {7});  // computed twice at once: only the first is indexed
  EXPECT_EQ(bm.num_cached(), 1);
  bm.Release(b);
  EXPECT_EQ(bm.num_cached(), 1);
  Table c;
  ASSERT_TRUE(bm.AcquireAndGrow(c, Hashes{7}, 1, 4));
  EXPECT_EQ(c[0], a[0]);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, AcquireAndGrowIsAllOrNothing) {
  BlockManager bm(3, 4, true);
  Table a = Filled(bm, {1});
  bm.Release(a);
  Table hold;
  ASSERT_TRUE(bm.Grow(hold, 4));  // the never-cached blocks go first: 1 free + 1 evictable left
  Table b;
  EXPECT_FALSE(bm.AcquireAndGrow(b, Hashes{1}, 1, 4 * 3));  // needs the cached one + 2 new
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(bm.num_free(), 2);
  EXPECT_EQ(bm.MatchPrefix(Hashes{1}), 1);
  ASSERT_TRUE(bm.AcquireAndGrow(b, Hashes{1}, 1, 4 * 2));
  EXPECT_EQ(bm.num_free(), 0);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, WithoutPrefixCachingNothingIsCachedOrFound) {
  BlockManager bm(4, 4);
  Table a = Filled(bm, {1, 2});
  EXPECT_EQ(bm.num_cached(), 0);
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2}), 0);
  bm.Release(a);
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2}), 0);
  ExpectConsistent(bm);
}

TEST(PrefixCacheTest, TheCountingViewAnswersFromTheRealPoolAndLeavesItAlone) {
  BlockManager bm(10, 4, true);
  Table a = Filled(bm, {1, 2, 3});
  Table shared;
  ASSERT_TRUE(bm.AcquireAndGrow(shared, Hashes{1, 2}, 2, 8));
  ASSERT_EQ(bm.num_free(), 7);  // 3 blocks held, two of them by both tables
  BlockManager view(bm, BlockManager::Counting{});
  EXPECT_TRUE(view.counting());
  EXPECT_EQ(view.num_free(), 7);
  EXPECT_EQ(view.MatchPrefix(Hashes{1, 2, 3, 4}), 3);
  Table t;
  ASSERT_TRUE(view.AcquireAndGrow(t, Hashes{1, 2, 3}, 3, 4 * 4));  // 3 held + 1 new
  EXPECT_EQ(view.num_free(), 6);
  EXPECT_EQ(view.ref_count(a[0]), 3);
  view.Register(t[3], 4);  // not kept: the view answers from the real pool only
  EXPECT_EQ(view.MatchPrefix(Hashes{1, 2, 3, 4}), 3);
  view.Release(t);
  EXPECT_EQ(view.num_free(), 7);
  Table a_copy = a;
  view.Release(a_copy);  // a[2] is now evictable in the view, a[0] and a[1] still shared
  EXPECT_EQ(view.num_free(), 8);
  EXPECT_EQ(view.MatchPrefix(Hashes{1, 2, 3}), 3);
  // Past the never-cached free blocks the view would evict: only held blocks are found.
  Table big;
  ASSERT_TRUE(view.Grow(big, 4 * 8));
  EXPECT_EQ(view.MatchPrefix(Hashes{1, 2, 3}), 2);
  // A view of the view goes on from there.
  BlockManager again(view, BlockManager::Counting{});
  EXPECT_EQ(again.num_free(), 0);
  EXPECT_EQ(again.MatchPrefix(Hashes{1, 2, 3}), 2);
  // The real pool did not change.
  EXPECT_EQ(bm.num_free(), 7);
  EXPECT_EQ(bm.MatchPrefix(Hashes{1, 2, 3, 4}), 3);
  ExpectConsistent(bm);
}

// Two tables sharing most of a small pool: the view's free count is the real one (it was the
// pool less every reference, negative here, and every Grow in the forecast failed).
TEST(PrefixCacheTest, TheCountingViewCountsASharedBlockOnce) {
  BlockManager bm(10, 4, true);
  const Hashes chain = {1, 2, 3, 4, 5, 6, 7, 8};
  Table x = Filled(bm, chain);
  Table y;
  ASSERT_TRUE(bm.AcquireAndGrow(y, chain, 8, 4 * 9));
  ASSERT_EQ(bm.num_free(), 1);
  BlockManager view(bm, BlockManager::Counting{});
  EXPECT_EQ(view.num_free(), 1);
  Table y_copy = y;
  EXPECT_TRUE(view.Grow(y_copy, 4 * 9));  // nothing new needed
  EXPECT_TRUE(view.Grow(y_copy, 4 * 10));
  EXPECT_FALSE(view.Grow(y_copy, 4 * 11));
  Table x_copy = x;
  view.Release(x_copy);  // every block of x is still in y
  EXPECT_EQ(view.num_free(), 0);
  view.Release(y_copy);
  EXPECT_EQ(view.num_free(), 10);
}

// Property: random acquire/grow/register/release sequences over a few shared chains keep the
// pool consistent; each block's references are the tables holding it.
TEST(PrefixCachePropertyTest, RandomSharingKeepsInvariantsAndReferenceCounts) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    const auto num_blocks = static_cast<std::int32_t>(rng.UniformInt(2, 48));
    const auto block_size = static_cast<std::int32_t>(rng.UniformInt(1, 16));
    BlockManager bm(num_blocks, block_size, true);
    std::map<int, Table> tables;
    std::map<int, Hashes> chains;  // the hashes each table's blocks were given
    std::string err;
    for (int op = 0; op < 400; ++op) {
      const int owner = static_cast<int>(rng.UniformInt(0, 7));
      Table& table = tables[owner];
      Hashes& chain = chains[owner];
      const double u = rng.Uniform();
      if (table.empty() && u < 0.6) {
        // A new prompt over one of three chains: 1000*k + i names block i of chain k.
        const auto k = static_cast<std::uint64_t>(rng.UniformInt(0, 2));
        const auto n = rng.UniformInt(1, 8);
        chain.clear();
        for (std::int64_t i = 0; i < n; ++i) {
          chain.push_back(1000 * k + static_cast<std::uint64_t>(i) + 1);
        }
        const std::int32_t hits = bm.MatchPrefix(chain);
        const auto take = static_cast<std::int32_t>(rng.UniformInt(0, hits));
        const std::int32_t free_before = bm.num_free();
        if (bm.AcquireAndGrow(table, Hashes(chain.begin(), chain.begin() + take), take,
                              n * block_size)) {
          ASSERT_EQ(static_cast<std::int64_t>(table.size()), n) << "seed " << seed;
          ASSERT_LE(bm.num_free(), free_before) << "seed " << seed;
          for (std::int64_t i = take; i < n; ++i) {
            if (rng.Uniform() < 0.8) {
              bm.Register(table[static_cast<std::size_t>(i)], chain[static_cast<std::size_t>(i)]);
            }
          }
        } else {
          ASSERT_TRUE(table.empty()) << "seed " << seed;
          ASSERT_EQ(bm.num_free(), free_before) << "seed " << seed;
        }
      } else if (!table.empty() && u < 0.8) {
        const std::int32_t free_before = bm.num_free();
        const bool ok = bm.Grow(table, (static_cast<std::int64_t>(table.size()) + 1) * block_size);
        ASSERT_EQ(bm.num_free(), free_before - (ok ? 1 : 0)) << "seed " << seed;
      } else {
        bm.Release(table);
        ASSERT_TRUE(table.empty()) << "seed " << seed;
      }
      ASSERT_TRUE(bm.CheckInvariants(&err)) << "seed " << seed << ": " << err;
      std::map<std::int32_t, std::int32_t> refs;  // blocks held by some table
      for (const auto& [id, t] : tables) {
        for (const std::int32_t block : t) {
          ++refs[block];
        }
      }
      for (std::int32_t block = 0; block < num_blocks; ++block) {
        const auto it = refs.find(block);
        ASSERT_EQ(bm.ref_count(block), it == refs.end() ? 0 : it->second)
            << "seed " << seed << " block " << block;
      }
      ASSERT_EQ(static_cast<std::int32_t>(refs.size()), bm.num_allocated()) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace spillway
