/*
 * fuzz_message_budget.c - fuzzes the receive loop's bound on one multipart
 * message (protocol_message_budget, protocol.h; pipeline/stage_receive.c
 * holds a message's parts only while the budget says so).
 *
 * Contract: the input is a little-endian u64 limit followed by one u64 per
 * payload part, its length (no bytes needed: the loop only counts them); a
 * short tail is ignored. The parts go through protocol_message_budget_take
 * as stage_receive.c feeds them, holding a part while take says 1 and
 * releasing everything held when it says 0.
 *
 * Invariants: the bytes held never exceed the limit; take says 0 from the
 * first part whose running sum (exact, in 128 bits) passes the limit and
 * for every later part, 1 before it; oversized is set exactly then; the
 * part count is exact; seen equals the sum, or UINT64_MAX once the sum no
 * longer fits.
 */
#include <string.h>

#include "fuzz_support.h"
#include "protocol.h"

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t limit = read_u64(data);
    protocol_message_budget b;
    protocol_message_budget_begin(&b, limit);
    unsigned __int128 sum = 0, held = 0;
    uint64_t parts = 0;
    int passed = 0;
    for (size_t at = 8; at + 8 <= size; at += 8) {
        uint64_t bytes = read_u64(data + at);
        sum += bytes;
        parts++;
        passed = passed || sum > limit;
        int keep = protocol_message_budget_take(&b, bytes);
        FUZZ_REQUIRE(keep == !passed, "take does not say whether the running sum passed the limit");
        FUZZ_REQUIRE(b.oversized == passed, "oversized is not set exactly when the sum passed the limit");
        held = keep ? held + bytes : 0;
        FUZZ_REQUIRE(held <= limit, "the parts held exceed the limit");
        FUZZ_REQUIRE(b.parts == parts, "the part count is wrong");
        FUZZ_REQUIRE(sum > UINT64_MAX ? b.seen == UINT64_MAX : b.seen == (uint64_t)sum,
                     "seen is neither the sum nor saturated");
    }
    return 0;
}
