/*
 * test_reorder.c - the reorder window (pipeline/reorder.h) against its
 * contract: in order, buffered out-of-order arrivals, gaps released at the
 * head's deadline, late and duplicate arrivals, a full window, the first
 * seq, draining at shutdown, and a seeded random stream checked against the
 * contract's invariants (every seq leaves exactly once, as an item or in a
 * gap, in increasing order; an item is never skipped before its deadline
 * unless the window was full). Time is a plain counter: no clock.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "test_check.h"

#define ITEM(seq) ((void *)(uintptr_t)(0x1000 + (seq)))
#define FAR UINT64_MAX /* a deadline never reached before the drain */

/* Expects the next release to be the item of seq. */
static void expect_item(reorder *w, uint64_t now, uint64_t seq, const char *what)
{
    reorder_release r;
    int got = reorder_pop_ready(w, now, &r);
    CHECK(got == 1 && r.kind == REORDER_ITEM && r.seq == seq && r.item == ITEM(seq),
          "%s: want item %llu, got %d kind %d seq %llu", what, (unsigned long long)seq, got, got ? (int)r.kind : -1,
          got ? (unsigned long long)r.seq : 0ull);
}

static void expect_gap(reorder *w, uint64_t now, uint64_t first, uint64_t last, const char *what)
{
    reorder_release r;
    int got = reorder_pop_ready(w, now, &r);
    CHECK(got == 1 && r.kind == REORDER_GAP && r.seq == first && r.last == last && r.item == NULL,
          "%s: want gap %llu..%llu, got %d kind %d %llu..%llu", what, (unsigned long long)first,
          (unsigned long long)last, got, got ? (int)r.kind : -1, got ? (unsigned long long)r.seq : 0ull,
          got ? (unsigned long long)r.last : 0ull);
}

static void expect_nothing(reorder *w, uint64_t now, const char *what)
{
    reorder_release r;
    int got = reorder_pop_ready(w, now, &r);
    CHECK(got == 0, "%s: want nothing ready, got kind %d seq %llu", what, (int)r.kind, (unsigned long long)r.seq);
}

static void test_create(void)
{
    reorder *w = (reorder *)1;
    CHECK(reorder_create(&w, 0) == REORDER_EINVAL && w == NULL, "capacity 0 is refused");
    CHECK(reorder_create(&w, 8) == REORDER_OK && w != NULL, "create");
    expect_nothing(w, FAR, "empty window");
    CHECK(reorder_next_deadline(w, &(uint64_t){0}) == 0, "no deadline in an empty window");
    reorder_destroy(&w);
    CHECK(w == NULL, "destroy clears the pointer");
    reorder_destroy(&w); /* NULL: nothing */
}

static void test_in_order(void)
{
    reorder *w;
    reorder_create(&w, 4);
    for (uint64_t seq = 10; seq < 30; seq++) {
        reorder_insert_result r = reorder_insert(w, seq, ITEM(seq), seq + 100);
        CHECK(r == REORDER_IN_ORDER, "seq %llu in order, got %s", (unsigned long long)seq,
              reorder_insert_result_name(r));
        expect_item(w, seq, seq, "in order");
        expect_nothing(w, seq, "in order, after the item");
    }
    CHECK(reorder_held(w) == 0 && reorder_next(w) == 30, "held %zu next %llu", reorder_held(w),
          (unsigned long long)reorder_next(w));
    reorder_destroy(&w);
}

/* A fixed permutation of 0..99 (seeded LCG, Fisher-Yates) inside a window
 * of 100: nothing is late, everything leaves sorted, no gap. */
static void test_permutation(void)
{
    uint64_t order[100];
    uint64_t state = 12345;
    for (int i = 0; i < 100; i++)
        order[i] = (uint64_t)i;
    for (int i = 99; i > 0; i--) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((state >> 33) % (uint64_t)(i + 1));
        uint64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    reorder *w;
    reorder_create(&w, 100);
    reorder_start(w, 0);
    uint64_t expect = 0;
    reorder_release r;
    for (int i = 0; i < 100; i++) {
        reorder_insert_result res = reorder_insert(w, order[i], ITEM(order[i]), FAR);
        CHECK(res == (order[i] == expect ? REORDER_IN_ORDER : REORDER_BUFFERED), "seq %llu: %s",
              (unsigned long long)order[i], reorder_insert_result_name(res));
        while (reorder_pop_ready(w, 0, &r)) {
            CHECK(r.kind == REORDER_ITEM && r.seq == expect && r.item == ITEM(expect), "release %llu, want %llu",
                  (unsigned long long)r.seq, (unsigned long long)expect);
            expect = r.seq + 1;
        }
    }
    CHECK(expect == 100 && reorder_held(w) == 0, "all 100 released in order (next %llu)",
          (unsigned long long)expect);
    reorder_destroy(&w);
}

/* 0 missing: 1 and 2 wait until 1's deadline, then 0 is a gap; 0 arriving
 * afterwards is late, 1 again a duplicate. */
static void test_gap_deadline(void)
{
    reorder *w;
    uint64_t deadline = 0;
    reorder_create(&w, 8);
    reorder_start(w, 0);
    CHECK(reorder_insert(w, 2, ITEM(2), 60) == REORDER_BUFFERED, "2 buffered");
    CHECK(reorder_insert(w, 1, ITEM(1), 50) == REORDER_BUFFERED, "1 buffered");
    expect_nothing(w, 10, "before the head's deadline");
    CHECK(reorder_next_deadline(w, &deadline) == 1 && deadline == 50, "head deadline %llu, want 50",
          (unsigned long long)deadline);
    expect_nothing(w, 49, "one before the head's deadline");
    expect_gap(w, 50, 0, 0, "at the head's deadline");
    expect_item(w, 50, 1, "after the gap");
    expect_item(w, 50, 2, "after the gap");
    expect_nothing(w, 50, "drained");
    CHECK(reorder_next_deadline(w, &deadline) == 0, "nothing to wait for");
    CHECK(reorder_insert(w, 0, ITEM(0), 70) == REORDER_LATE, "0 after its gap is late");
    CHECK(reorder_insert(w, 1, ITEM(1), 70) == REORDER_DUPLICATE, "1 after its release is a duplicate");
    /* A gap of several seqs, reported as one range. */
    CHECK(reorder_insert(w, 7, ITEM(7), 90) == REORDER_BUFFERED, "7 buffered");
    expect_nothing(w, 89, "3..6 missing, before 7's deadline");
    expect_gap(w, 90, 3, 6, "3..6 at 7's deadline");
    expect_item(w, 90, 7, "7");
    reorder_destroy(&w);
}

static void test_duplicates(void)
{
    reorder *w;
    reorder_create(&w, 8);
    CHECK(reorder_insert(w, 5, ITEM(5), FAR) == REORDER_IN_ORDER, "5 first");
    CHECK(reorder_insert(w, 7, ITEM(7), FAR) == REORDER_BUFFERED, "7 buffered");
    CHECK(reorder_insert(w, 7, ITEM(70), FAR) == REORDER_DUPLICATE, "7 again while held");
    CHECK(reorder_insert(w, 5, ITEM(50), FAR) == REORDER_DUPLICATE, "5 again while held");
    expect_item(w, 0, 5, "5 (the first copy)");
    CHECK(reorder_insert(w, 5, ITEM(5), FAR) == REORDER_DUPLICATE, "5 after its release");
    CHECK(reorder_insert(w, 6, ITEM(6), FAR) == REORDER_IN_ORDER, "6 closes the gap");
    expect_item(w, 0, 6, "6");
    expect_item(w, 0, 7, "7 (the first copy)");
    CHECK(reorder_held(w) == 0, "nothing held, %zu", reorder_held(w));
    reorder_destroy(&w);
}

/* A NULL item holds its seq like any other (a finished seq with nothing to
 * publish). */
static void test_null_item(void)
{
    reorder *w;
    reorder_release r;
    reorder_create(&w, 4);
    reorder_start(w, 0);
    CHECK(reorder_insert(w, 1, ITEM(1), FAR) == REORDER_BUFFERED, "1 buffered");
    CHECK(reorder_insert(w, 0, NULL, FAR) == REORDER_IN_ORDER, "0 as NULL");
    CHECK(reorder_pop_ready(w, 0, &r) == 1 && r.kind == REORDER_ITEM && r.seq == 0 && r.item == NULL,
          "0 released as a NULL item");
    expect_item(w, 0, 1, "1 after the NULL item");
    reorder_destroy(&w);
}

/* Capacity 4: seq next + 4 does not fit; pop_ready releases past the gap
 * before the head without waiting for its deadline, then the insert fits. */
static void test_full(void)
{
    reorder *w;
    reorder_create(&w, 4);
    reorder_start(w, 0);
    for (uint64_t seq = 1; seq <= 3; seq++)
        CHECK(reorder_insert(w, seq, ITEM(seq), FAR) == REORDER_BUFFERED, "%llu buffered", (unsigned long long)seq);
    CHECK(reorder_insert(w, 4, ITEM(4), FAR) == REORDER_FULL, "4 does not fit next 0 + capacity 4");
    CHECK(reorder_held(w) == 3, "the full insert held nothing");
    expect_gap(w, 0, 0, 0, "full: past the gap before the deadline");
    expect_item(w, 0, 1, "1");
    CHECK(reorder_insert(w, 4, ITEM(4), FAR) == REORDER_BUFFERED, "4 fits after one release");
    expect_item(w, 0, 2, "2");
    expect_item(w, 0, 3, "3");
    expect_item(w, 0, 4, "4");
    expect_nothing(w, 0, "drained");
    /* Nothing held, a seq far ahead: one gap so that it is the window's last. */
    CHECK(reorder_insert(w, 100, ITEM(100), 500) == REORDER_FULL, "100 far ahead of next 5");
    expect_gap(w, 0, 5, 96, "jump: 5..96");
    expect_nothing(w, 0, "the jump releases no more than needed");
    CHECK(reorder_insert(w, 100, ITEM(100), 500) == REORDER_BUFFERED, "100 fits (97..100)");
    expect_nothing(w, 499, "97..99 missing before 100's deadline");
    expect_gap(w, 500, 97, 99, "97..99 at 100's deadline");
    expect_item(w, 500, 100, "100");
    /* Two refused seqs: the window makes room for the larger. */
    CHECK(reorder_insert(w, 110, ITEM(110), FAR) == REORDER_FULL, "110 full");
    CHECK(reorder_insert(w, 108, ITEM(108), FAR) == REORDER_FULL, "108 full");
    expect_gap(w, 0, 101, 106, "room for 110: 101..106");
    CHECK(reorder_insert(w, 108, ITEM(108), FAR) == REORDER_BUFFERED, "108 fits");
    CHECK(reorder_insert(w, 110, ITEM(110), FAR) == REORDER_BUFFERED, "110 fits");
    reorder_destroy(&w);
}

/* Without reorder_start the first insert is the release point; with it a
 * missing first seq is a gap like any other. Seqs near 2^64 do not wrap. */
static void test_first_seq(void)
{
    reorder *w;
    reorder_create(&w, 4);
    CHECK(reorder_next(w) == 0, "next 0 before anything");
    CHECK(reorder_insert(w, 7, ITEM(7), FAR) == REORDER_IN_ORDER, "first insert is in order");
    CHECK(reorder_start(w, 3) == REORDER_EINVAL, "start after an insert is refused");
    CHECK(reorder_insert(w, 6, ITEM(6), FAR) == REORDER_LATE, "below the first seq is late");
    expect_item(w, 0, 7, "7");
    reorder_destroy(&w);

    reorder_create(&w, 4);
    CHECK(reorder_start(w, 5) == REORDER_OK, "start 5");
    CHECK(reorder_insert(w, 4, ITEM(4), FAR) == REORDER_LATE, "4 below start 5");
    CHECK(reorder_insert(w, 6, ITEM(6), 20) == REORDER_BUFFERED, "6 waits for 5");
    expect_nothing(w, 19, "5 missing");
    expect_gap(w, 20, 5, 5, "5 missing at 6's deadline");
    expect_item(w, 20, 6, "6");
    reorder_destroy(&w);

    reorder_create(&w, 4);
    reorder_start(w, 0);
    CHECK(reorder_insert(w, UINT64_MAX, ITEM(1), FAR) == REORDER_FULL, "2^64-1 from next 0 does not wrap");
    expect_gap(w, 0, 0, UINT64_MAX - 4, "jump to the top");
    CHECK(reorder_insert(w, UINT64_MAX - 3, ITEM(2), FAR) == REORDER_IN_ORDER, "2^64-4 in order");
    reorder_destroy(&w);
}

/* now = UINT64_MAX releases everything held, gaps included. */
static void test_drain(void)
{
    reorder *w;
    reorder_create(&w, 16);
    reorder_start(w, 0);
    uint64_t seqs[] = {2, 3, 7, 9};
    for (size_t i = 0; i < 4; i++)
        reorder_insert(w, seqs[i], ITEM(seqs[i]), FAR - 1);
    expect_gap(w, FAR, 0, 1, "drain");
    expect_item(w, FAR, 2, "drain");
    expect_item(w, FAR, 3, "drain");
    expect_gap(w, FAR, 4, 6, "drain");
    expect_item(w, FAR, 7, "drain");
    expect_gap(w, FAR, 8, 8, "drain");
    expect_item(w, FAR, 9, "drain");
    expect_nothing(w, FAR, "drained");
    reorder_destroy(&w);
}

/* A seeded stream: seqs 0..N-1, each lost with probability 1/10, delayed by
 * up to 12 positions, with a deadline 10 positions after it was sent, through a
 * window of 16. Checked against the contract: every seq leaves exactly once
 * (an item, a gap, or refused as late/full-and-retried), releases increase,
 * and a gap before a held item is only released at or after that item's
 * deadline unless a FULL insert forced it. */
static void test_random_stream(void)
{
    enum { N = 5000, CAP = 16, DELAY = 12, TTL = 10 };
    static uint64_t arrival[N], send_order[N];
    static int fate[N]; /* 0 unseen, 1 released item, 2 gap, 3 late */
    uint64_t state = 42;
    int n_sent = 0;
    for (int seq = 0; seq < N; seq++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if ((state >> 40) % 10 == 0 && seq != N - 1) /* the last one arrives: no trailing loss */
            continue;
        arrival[n_sent] = (uint64_t)seq * 4 + (state >> 20) % (DELAY * 4);
        send_order[n_sent++] = (uint64_t)seq;
    }
    /* Arrival order: by arrival time (insertion sort; nearly sorted). */
    for (int i = 1; i < n_sent; i++)
        for (int j = i; j > 0 && arrival[j] < arrival[j - 1]; j--) {
            uint64_t t = arrival[j], s = send_order[j];
            arrival[j] = arrival[j - 1], send_order[j] = send_order[j - 1];
            arrival[j - 1] = t, send_order[j - 1] = s;
        }
    reorder *w;
    reorder_create(&w, CAP);
    reorder_start(w, 0);
    uint64_t last_released = 0;
    int any_released = 0;
    reorder_release r;
    for (int i = 0; i <= n_sent; i++) {
        uint64_t now = i < n_sent ? arrival[i] : UINT64_MAX;
        if (i < n_sent) {
            uint64_t seq = send_order[i];
            reorder_insert_result res = reorder_insert(w, seq, ITEM(seq), seq * 4 + TTL * 4);
            if (res == REORDER_FULL) {
                /* Releases forced by the full window: no deadline applies. */
                while (reorder_pop_ready(w, now, &r)) {
                    if (r.kind == REORDER_GAP)
                        for (uint64_t s = r.seq; s <= r.last; s++)
                            fate[s] = fate[s] ? -1 : 2;
                    else
                        fate[r.seq] = fate[r.seq] ? -1 : 1;
                    CHECK(!any_released || r.seq > last_released, "releases increase");
                    last_released = r.last, any_released = 1;
                }
                res = reorder_insert(w, seq, ITEM(seq), seq * 4 + TTL * 4);
            }
            if (res == REORDER_LATE)
                fate[seq] = fate[seq] == 2 ? 3 : -1;
            CHECK(res != REORDER_FULL && res != REORDER_DUPLICATE, "seq %llu: %s after making room",
                  (unsigned long long)seq, reorder_insert_result_name(res));
        }
        while (reorder_pop_ready(w, now, &r)) {
            CHECK(!any_released || r.seq > last_released, "releases increase (%llu after %llu)",
                  (unsigned long long)r.seq, (unsigned long long)last_released);
            if (r.kind == REORDER_GAP) {
                /* The item after the gap is held: its deadline has passed. */
                CHECK(now >= (r.last + 1) * 4 + TTL * 4, "gap %llu..%llu at %llu before its deadline",
                      (unsigned long long)r.seq, (unsigned long long)r.last, (unsigned long long)now);
                for (uint64_t s = r.seq; s <= r.last && s < N; s++)
                    fate[s] = fate[s] ? -1 : 2;
            } else {
                CHECK(r.item == ITEM(r.seq), "item of %llu", (unsigned long long)r.seq);
                fate[r.seq] = fate[r.seq] ? -1 : 1;
            }
            last_released = r.last, any_released = 1;
        }
    }
    int sent = n_sent, items = 0, gaps = 0, late = 0, bad = 0;
    for (int s = 0; s < N; s++) {
        items += fate[s] == 1;
        gaps += fate[s] == 2;
        late += fate[s] == 3;
        bad += fate[s] == -1 || fate[s] == 0;
    }
    CHECK(bad == 0, "%d seqs released twice or never", bad);
    CHECK(items + late == sent, "items %d + late %d == sent %d", items, late, sent);
    CHECK(gaps == N - sent, "every lost seq is in a gap: %d gaps, %d lost", gaps, N - sent);
    CHECK(late > 0 && items > 0, "the stream exercises late arrivals (%d) and items (%d)", late, items);
    CHECK(reorder_held(w) == 0, "drained");
    reorder_destroy(&w);
}

int main(void)
{
    test_create();
    test_in_order();
    test_permutation();
    test_gap_deadline();
    test_duplicates();
    test_null_item();
    test_full();
    test_first_seq();
    test_drain();
    test_random_stream();
    return test_check_report("test_reorder");
}
