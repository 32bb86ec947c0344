#include "kv/block_manager.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "core/types.h"

namespace spillway {
namespace {

using Table = std::vector<std::int32_t>;

TEST(BlockManagerTest, NewPoolIsAllFree) {
  BlockManager bm(8, 16);
  EXPECT_EQ(bm.block_size(), 16);
  EXPECT_EQ(bm.num_total(), 8);
  EXPECT_EQ(bm.num_free(), 8);
  EXPECT_EQ(bm.num_allocated(), 0);
  EXPECT_DOUBLE_EQ(bm.usage(), 0.0);
  std::string err;
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
}

TEST(BlockManagerTest, BlocksForRoundsUpToWholeBlocks) {
  BlockManager bm(4, 16);
  EXPECT_EQ(bm.BlocksFor(0), 0);
  EXPECT_EQ(bm.BlocksFor(1), 1);
  EXPECT_EQ(bm.BlocksFor(15), 1);
  EXPECT_EQ(bm.BlocksFor(16), 1);
  EXPECT_EQ(bm.BlocksFor(17), 2);
  EXPECT_EQ(bm.BlocksFor(32), 2);
  EXPECT_EQ(bm.BlocksFor(33), 3);
  EXPECT_EQ(bm.BlocksFor(16 * 1000 + 1), 1001);
}

TEST(BlockManagerTest, BlocksForWithBlockSizeOneIsTheTokenCount) {
  BlockManager bm(4, 1);
  for (std::int64_t t = 0; t < 50; ++t) {
    EXPECT_EQ(bm.BlocksFor(t), t);
  }
}

TEST(BlockManagerTest, BlocksForMatchesCeilingDivisionForManySizes) {
  for (std::int32_t bs : {1, 2, 3, 7, 16, 32, 128}) {
    BlockManager bm(1, bs);
    for (std::int64_t t = 0; t <= 300; ++t) {
      const std::int64_t expected = t / bs + (t % bs != 0 ? 1 : 0);
      EXPECT_EQ(bm.BlocksFor(t), expected) << "block_size " << bs << " tokens " << t;
    }
  }
}

TEST(BlockManagerTest, GrowthNeededCountsOnlyMissingBlocks) {
  BlockManager bm(8, 4);
  Table table;
  EXPECT_EQ(bm.GrowthNeeded(table, 0), 0);
  EXPECT_EQ(bm.GrowthNeeded(table, 1), 1);
  EXPECT_EQ(bm.GrowthNeeded(table, 9), 3);
  ASSERT_TRUE(bm.Grow(table, 5));  // 2 blocks
  EXPECT_EQ(bm.GrowthNeeded(table, 5), 0);
  EXPECT_EQ(bm.GrowthNeeded(table, 8), 0);
  EXPECT_EQ(bm.GrowthNeeded(table, 9), 1);
  // Fewer tokens than the table covers never yields a negative count.
  EXPECT_EQ(bm.GrowthNeeded(table, 1), 0);
  EXPECT_EQ(bm.GrowthNeeded(table, 0), 0);
}

TEST(BlockManagerTest, GrowAllocatesCeilTokensOverBlockSize) {
  BlockManager bm(10, 16);
  Table table;
  ASSERT_TRUE(bm.Grow(table, 33));
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(bm.num_free(), 7);
  EXPECT_EQ(bm.num_allocated(), 3);
  for (const std::int32_t block : table) {
    EXPECT_EQ(bm.ref_count(block), 1);
  }
  std::set<std::int32_t> distinct(table.begin(), table.end());
  EXPECT_EQ(distinct.size(), table.size());
  for (std::int32_t b : table) {
    EXPECT_GE(b, 0);
    EXPECT_LT(b, 10);
  }
}

TEST(BlockManagerTest, GrowHandsOutLowestIdsFirst) {
  BlockManager bm(4, 2);
  Table table;
  ASSERT_TRUE(bm.Grow(table, 6));
  EXPECT_EQ(table, (Table{0, 1, 2}));
}

TEST(BlockManagerTest, GrowIsIncrementalAndKeepsExistingBlocks) {
  BlockManager bm(10, 4);
  Table table;
  ASSERT_TRUE(bm.Grow(table, 4));
  const Table before = table;
  ASSERT_TRUE(bm.Grow(table, 4));  // already covered: nothing changes
  EXPECT_EQ(table, before);
  ASSERT_TRUE(bm.Grow(table, 5));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0], before[0]);
  ASSERT_TRUE(bm.Grow(table, 12));
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(bm.num_allocated(), 3);
}

TEST(BlockManagerTest, GrowToFewerTokensIsANoOp) {
  BlockManager bm(10, 4);
  Table table;
  ASSERT_TRUE(bm.Grow(table, 12));
  const Table before = table;
  EXPECT_TRUE(bm.Grow(table, 3));
  EXPECT_EQ(table, before);
  EXPECT_EQ(bm.num_allocated(), 3);
}

TEST(BlockManagerTest, GrowIsAllOrNothingWhenShortOfBlocks) {
  BlockManager bm(5, 4);
  Table a;
  ASSERT_TRUE(bm.Grow(a, 12));  // 3 blocks, 2 left
  Table b;
  ASSERT_TRUE(bm.Grow(b, 4));  // 1 block, 1 left
  const Table b_before = b;
  // b needs 3 more blocks to cover 16 tokens but only 1 is free: nothing changes.
  EXPECT_FALSE(bm.Grow(b, 16));
  EXPECT_EQ(b, b_before);
  EXPECT_EQ(bm.num_free(), 1);
  EXPECT_EQ(bm.num_allocated(), 4);
  std::string err;
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
  // A fresh table that needs more than the pool has also gets nothing.
  Table c;
  EXPECT_FALSE(bm.Grow(c, 9));
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(bm.num_free(), 1);
  // Exactly the remaining block still fits.
  EXPECT_TRUE(bm.Grow(c, 4));
  EXPECT_EQ(bm.num_free(), 0);
  EXPECT_DOUBLE_EQ(bm.usage(), 1.0);
  // A full pool refuses any growth but accepts growth that needs no block.
  EXPECT_FALSE(bm.Grow(a, 13));
  EXPECT_EQ(a.size(), 3u);
  EXPECT_TRUE(bm.Grow(a, 12));
}

TEST(BlockManagerTest, GrowLargerThanWholePoolFailsWithoutSideEffects) {
  BlockManager bm(4, 16);
  Table table;
  EXPECT_FALSE(bm.Grow(table, 16 * 4 + 1));
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(bm.num_free(), 4);
  EXPECT_TRUE(bm.Grow(table, 16 * 4));
  EXPECT_EQ(bm.num_free(), 0);
}

TEST(BlockManagerTest, ReleaseReturnsEveryBlockAndClearsTheTable) {
  BlockManager bm(6, 8);
  Table a;
  Table b;
  ASSERT_TRUE(bm.Grow(a, 20));  // 3
  ASSERT_TRUE(bm.Grow(b, 9));   // 2
  EXPECT_EQ(bm.num_free(), 1);
  bm.Release(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(bm.num_free(), 4);
  EXPECT_EQ(bm.num_allocated(), 2);
  EXPECT_EQ(bm.ref_count(b[0]), 1);
  std::string err;
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
  bm.Release(b);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(bm.num_free(), bm.num_total());
  EXPECT_DOUBLE_EQ(bm.usage(), 0.0);
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
}

TEST(BlockManagerTest, ReleasedBlocksCanBeReallocatedToAnotherOwner) {
  BlockManager bm(3, 4);
  Table a;
  ASSERT_TRUE(bm.Grow(a, 12));
  Table b;
  EXPECT_FALSE(bm.Grow(b, 1));
  const std::set<std::int32_t> a_blocks(a.begin(), a.end());
  bm.Release(a);
  ASSERT_TRUE(bm.Grow(b, 12));
  EXPECT_EQ(std::set<std::int32_t>(b.begin(), b.end()), a_blocks);
  EXPECT_EQ(bm.ref_count(b[0]), 1);
}

TEST(BlockManagerTest, ReleaseOfEmptyTableIsHarmless) {
  BlockManager bm(2, 4);
  Table empty;
  bm.Release(empty);
  EXPECT_EQ(bm.num_free(), 2);
  std::string err;
  EXPECT_TRUE(bm.CheckInvariants(&err)) << err;
}

TEST(BlockManagerTest, UsageIsAllocatedFraction) {
  BlockManager bm(4, 1);
  Table t;
  EXPECT_DOUBLE_EQ(bm.usage(), 0.0);
  ASSERT_TRUE(bm.Grow(t, 1));
  EXPECT_DOUBLE_EQ(bm.usage(), 0.25);
  ASSERT_TRUE(bm.Grow(t, 3));
  EXPECT_DOUBLE_EQ(bm.usage(), 0.75);
  ASSERT_TRUE(bm.Grow(t, 4));
  EXPECT_DOUBLE_EQ(bm.usage(), 1.0);
  bm.Release(t);
  EXPECT_DOUBLE_EQ(bm.usage(), 0.0);
}

TEST(BlockManagerDeathTest, ConstructorRejectsEmptyPoolOrZeroBlockSize) {
  EXPECT_DEATH(BlockManager(0, 16), "check failed");
  EXPECT_DEATH(BlockManager(4, 0), "check failed");
}

// Property: random grow/release sequences keep the pool consistent and agree with a model of
// which owner holds how many blocks.
TEST(BlockManagerPropertyTest, RandomGrowReleaseKeepsInvariants) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    const auto num_blocks = static_cast<std::int32_t>(rng.UniformInt(1, 64));
    const auto block_size = static_cast<std::int32_t>(rng.UniformInt(1, 32));
    BlockManager bm(num_blocks, block_size);
    std::map<RequestId, Table> tables;
    std::map<RequestId, std::int64_t> tokens;  // tokens each table has been grown to cover
    std::string err;
    for (int op = 0; op < 400; ++op) {
      const auto owner = static_cast<RequestId>(rng.UniformInt(0, 9));
      Table& table = tables[owner];
      if (rng.Uniform() < 0.7) {
        const std::int64_t want = tokens[owner] + rng.UniformInt(0, 3 * block_size);
        const std::int32_t need = bm.GrowthNeeded(table, want);
        const std::int32_t free_before = bm.num_free();
        const Table before = table;
        const bool ok = bm.Grow(table, want);
        ASSERT_EQ(ok, need <= free_before) << "seed " << seed;
        if (ok) {
          tokens[owner] = std::max(tokens[owner], want);
          ASSERT_EQ(static_cast<std::int64_t>(table.size()),
                    std::max<std::int64_t>(before.size(), bm.BlocksFor(want)))
              << "seed " << seed;
          ASSERT_TRUE(std::equal(before.begin(), before.end(), table.begin())) << "seed " << seed;
          ASSERT_EQ(bm.num_free(), free_before - need) << "seed " << seed;
        } else {
          ASSERT_EQ(table, before) << "seed " << seed;
          ASSERT_EQ(bm.num_free(), free_before) << "seed " << seed;
        }
      } else {
        const auto held = static_cast<std::int32_t>(table.size());
        const std::int32_t free_before = bm.num_free();
        bm.Release(table);
        tokens[owner] = 0;
        ASSERT_TRUE(table.empty()) << "seed " << seed;
        ASSERT_EQ(bm.num_free(), free_before + held) << "seed " << seed;
      }
      ASSERT_TRUE(bm.CheckInvariants(&err)) << "seed " << seed << ": " << err;
      ASSERT_GE(bm.usage(), 0.0) << "seed " << seed;
      ASSERT_LE(bm.usage(), 1.0) << "seed " << seed;
      std::int64_t held_total = 0;
      std::set<std::int32_t> all;
      for (const auto& [id, t] : tables) {
        for (const std::int32_t block : t) {
          ASSERT_EQ(bm.ref_count(block), 1) << "seed " << seed << " owner " << id;
        }
        held_total += static_cast<std::int64_t>(t.size());
        all.insert(t.begin(), t.end());
      }
      ASSERT_EQ(held_total, bm.num_allocated()) << "seed " << seed;
      ASSERT_EQ(static_cast<std::int64_t>(all.size()), held_total)
          << "seed " << seed << ": a block is in two tables";
      ASSERT_EQ(bm.num_free() + bm.num_allocated(), bm.num_total());
    }
    for (auto& [id, t] : tables) {
      bm.Release(t);
    }
    ASSERT_EQ(bm.num_free(), num_blocks) << "seed " << seed;
    ASSERT_TRUE(bm.CheckInvariants(&err)) << "seed " << seed << ": " << err;
  }
}

}  // namespace
}  // namespace spillway
