/*
 * test_dispatch_control.c - the dispatch control messages against
 * docs/protocol.md ("Dispatch control messages"): bytes written out by hand
 * from the spec's table, every rejection in the spec's order; then the
 * daemon's dispatch client over a real inproc ROUTER, with a clock the test
 * drives: READY with the free slots, no credit for frames in flight, CREDIT
 * for slots freed, heartbeats on silence, READY again after the dispatcher's
 * silence or GOODBYE.
 */
#include <stdint.h>
#include <string.h>
#include <zmq.h>

#include "dispatch_client.h"
#include "dispatch_control.h"
#include "test_check.h"

#define MS 1000000ull

/* READY, credit 4, heartbeat 1000 ms, as the spec's table lays it out. */
static const uint8_t ready_bytes[16] = {0x45, 0x49, 0x47, 0x44, 0x01, 0x01, 0x00, 0x00,
                                        0x04, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00};

static void test_encode_matches_spec(void)
{
    uint8_t out[DISPATCH_CONTROL_BYTES];
    dispatch_control c = {.type = DISPATCH_CONTROL_READY, .credit = 4, .heartbeat_ms = 1000};
    dispatch_control_encode(&c, out);
    CHECK(memcmp(out, ready_bytes, sizeof out) == 0, "READY credit 4 heartbeat 1000 differs from the spec's bytes");
    dispatch_control d = {0};
    CHECK(dispatch_control_decode(ready_bytes, sizeof ready_bytes, &d) == DISPATCH_CONTROL_OK, "spec READY rejected");
    CHECK(d.type == DISPATCH_CONTROL_READY && d.credit == 4 && d.heartbeat_ms == 1000, "decoded %u %u %u", d.type,
          d.credit, d.heartbeat_ms);
    /* CREDIT 0x01020304: little-endian at offset 8. */
    c = (dispatch_control){.type = DISPATCH_CONTROL_CREDIT, .credit = 0x01020304u};
    dispatch_control_encode(&c, out);
    static const uint8_t credit_bytes[16] = {'E', 'I', 'G', 'D', 1, 2, 0, 0, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0};
    CHECK(memcmp(out, credit_bytes, sizeof out) == 0, "CREDIT bytes differ from the spec");
}

/* One mutated copy of the spec's READY and the error the spec names for it. */
static void expect(const uint8_t *bytes, size_t size, dispatch_control_error want, const char *what)
{
    dispatch_control d = {.type = 99};
    dispatch_control_error e = dispatch_control_decode(bytes, size, &d);
    CHECK(e == want, "%s: got %s, want %s", what, dispatch_control_strerror(e), dispatch_control_strerror(want));
    if (want != DISPATCH_CONTROL_OK)
        CHECK(d.type == 99, "%s: *c written on error", what);
}

static void test_rejections(void)
{
    uint8_t m[17];
    memcpy(m, ready_bytes, 16);
    m[16] = 0;
    expect(m, 15, DISPATCH_CONTROL_ESIZE, "15 bytes");
    expect(m, 17, DISPATCH_CONTROL_ESIZE, "17 bytes");
    m[3] = 'S';
    expect(m, 16, DISPATCH_CONTROL_EMAGIC, "EIGS magic");
    m[3] = 'D';
    m[4] = 2;
    expect(m, 16, DISPATCH_CONTROL_EVERSION, "version 2");
    m[4] = 1;
    static const uint8_t bad_types[] = {0, 5, 255};
    for (size_t i = 0; i < sizeof bad_types; i++) {
        m[5] = bad_types[i];
        expect(m, 16, DISPATCH_CONTROL_ETYPE, "unknown type");
    }
    m[5] = DISPATCH_CONTROL_READY;
    m[7] = 1;
    expect(m, 16, DISPATCH_CONTROL_EFIELD, "reserved byte 7");
    m[7] = 0;
    m[12] = m[13] = 0;
    expect(m, 16, DISPATCH_CONTROL_EFIELD, "READY heartbeat 0");
    m[5] = DISPATCH_CONTROL_CREDIT;
    expect(m, 16, DISPATCH_CONTROL_OK, "CREDIT 4");
    m[8] = 0;
    expect(m, 16, DISPATCH_CONTROL_EFIELD, "CREDIT 0");
    m[8] = 1;
    m[12] = 1;
    expect(m, 16, DISPATCH_CONTROL_EFIELD, "CREDIT with a heartbeat");
    m[12] = 0;
    m[5] = DISPATCH_CONTROL_HEARTBEAT;
    expect(m, 16, DISPATCH_CONTROL_EFIELD, "HEARTBEAT with credit");
    m[8] = 0;
    expect(m, 16, DISPATCH_CONTROL_OK, "HEARTBEAT");
    m[5] = DISPATCH_CONTROL_GOODBYE;
    expect(m, 16, DISPATCH_CONTROL_OK, "GOODBYE");
    /* READY may carry credit 0: a full daemon still announces itself. */
    m[5] = DISPATCH_CONTROL_READY;
    m[12] = 10;
    expect(m, 16, DISPATCH_CONTROL_OK, "READY credit 0");
}

static void test_tell_apart(void)
{
    static const uint8_t frame[6] = {'E', 'I', 'G', 'S', 1, 1};
    CHECK(dispatch_control_is_control(ready_bytes, 16) == 1, "READY is not control");
    CHECK(dispatch_control_is_control(frame, sizeof frame) == 0, "a covariance header is control");
    CHECK(dispatch_control_is_control(ready_bytes, 3) == 0, "3 bytes are control");
    CHECK(strcmp(dispatch_control_type_name(DISPATCH_CONTROL_GOODBYE), "goodbye") == 0, "type name");
    CHECK(strcmp(dispatch_control_type_name(7), "unknown") == 0, "unknown type name");
    CHECK(strcmp(dispatch_control_strerror(DISPATCH_CONTROL_EFIELD), "bad_field") == 0, "error name");
}

/* The next control message the ROUTER got, or type 0 when none is waiting. */
static dispatch_control router_next(void *router)
{
    uint8_t id[256], body[64];
    dispatch_control c = {0};
    if (zmq_recv(router, id, sizeof id, ZMQ_DONTWAIT) < 0)
        return c;
    int bytes = zmq_recv(router, body, sizeof body, 0);
    CHECK(dispatch_control_decode(body, (size_t)bytes, &c) == DISPATCH_CONTROL_OK, "client sent a bad message");
    return c;
}

/* Waits (bounded by ZeroMQ's inproc delivery, no clock) for one message. */
static dispatch_control router_wait(void *router)
{
    zmq_pollitem_t item = {.socket = router, .events = ZMQ_POLLIN};
    zmq_poll(&item, 1, 5000);
    return router_next(router);
}

static void test_client(void)
{
    void *ctx = zmq_ctx_new(), *router = zmq_socket(ctx, ZMQ_ROUTER), *dealer = zmq_socket(ctx, ZMQ_DEALER);
    CHECK(zmq_bind(router, "inproc://dispatch") == 0 && zmq_connect(dealer, "inproc://dispatch") == 0, "inproc");
    dispatch_client *c = NULL;
    CHECK(dispatch_client_create(NULL, 100, 3, &c) == DISPATCH_CLIENT_EINVAL && c == NULL, "NULL socket accepted");
    CHECK(dispatch_client_create(dealer, 100, 3, &c) == DISPATCH_CLIENT_OK, "create");
    uint64_t t = 1000 * MS;

    dispatch_client_tick(c, 4, t);
    dispatch_control m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_READY && m.credit == 4 && m.heartbeat_ms == 100, "READY %u credit %u hb %u",
          m.type, m.credit, m.heartbeat_ms);
    /* Two frames arrive and sit in the queue: 2 free slots, 2 credits still
     * outstanding, so nothing is owed. */
    static const uint8_t frame[8] = {'E', 'I', 'G', 'S', 1, 1, 0, 0};
    CHECK(dispatch_client_take(c, frame, sizeof frame, 1, t) == 0, "a frame taken as control");
    CHECK(dispatch_client_take(c, frame, sizeof frame, 1, t) == 0, "a frame taken as control");
    dispatch_client_tick(c, 2, t + 1 * MS);
    CHECK(router_next(router).type == 0, "credit or heartbeat sent with nothing owed");
    /* The form stage takes both: the two slots come back as CREDIT 2. */
    dispatch_client_tick(c, 4, t + 2 * MS);
    m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_CREDIT && m.credit == 2, "after two freed slots: type %u credit %u", m.type,
          m.credit);
    /* A slow daemon (queue still full) owes nothing: only heartbeats. */
    dispatch_client_tick(c, 2, t + 50 * MS);
    CHECK(router_next(router).type == 0, "a message before the heartbeat interval");
    dispatch_client_tick(c, 2, t + 102 * MS);
    m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_HEARTBEAT, "no heartbeat after an interval of silence: %u", m.type);
    /* The dispatcher's heartbeat keeps it alive; 3 silent intervals later READY is offered again. */
    static const uint8_t hb[16] = {'E', 'I', 'G', 'D', 1, DISPATCH_CONTROL_HEARTBEAT};
    CHECK(dispatch_client_take(c, hb, sizeof hb, 0, t + 150 * MS) == 1, "a heartbeat taken as a frame");
    dispatch_client_tick(c, 4, t + 460 * MS);
    m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_READY && m.credit == 4, "after 310 ms of silence: type %u credit %u", m.type,
          m.credit);
    /* GOODBYE from the dispatcher: READY on the next tick. */
    static const uint8_t bye[16] = {'E', 'I', 'G', 'D', 1, DISPATCH_CONTROL_GOODBYE};
    CHECK(dispatch_client_take(c, bye, sizeof bye, 0, t + 470 * MS) == 1, "goodbye taken as a frame");
    dispatch_client_tick(c, 3, t + 600 * MS);
    m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_READY && m.credit == 3, "after GOODBYE: type %u credit %u", m.type, m.credit);
    /* A malformed control message is consumed, not taken as a frame. */
    static const uint8_t bad[16] = {'E', 'I', 'G', 'D', 9};
    CHECK(dispatch_client_take(c, bad, sizeof bad, 0, t + 610 * MS) == 1, "bad control taken as a frame");
    CHECK(dispatch_client_drained(c) == 1, "drained before any GOODBYE");
    dispatch_client_goodbye(c);
    m = router_wait(router);
    CHECK(m.type == DISPATCH_CONTROL_GOODBYE, "no GOODBYE at the end: %u", m.type);
    /* Frames sent before the dispatcher read our GOODBYE still count; its
     * answering GOODBYE says the last one is in. */
    CHECK(dispatch_client_drained(c) == 0, "drained before the dispatcher answered");
    CHECK(dispatch_client_take(c, frame, sizeof frame, 1, t + 620 * MS) == 0, "a last frame taken as control");
    CHECK(dispatch_client_take(c, bye, sizeof bye, 0, t + 630 * MS) == 1, "the answer taken as a frame");
    CHECK(dispatch_client_drained(c) == 1, "not drained after the dispatcher's answer");
    CHECK(dispatch_client_drain_ns(c) == 300 * MS, "drain bound %llu ns, want 3 x 100 ms",
          (unsigned long long)dispatch_client_drain_ns(c));
    dispatch_client_destroy(&c);
    CHECK(c == NULL, "destroy did not clear the pointer");
    int zero = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(dealer);
    zmq_close(router);
    zmq_ctx_term(ctx);
}

/* The shares of a daemon's DEALERs: they add up to the free slots for
 * every count and turn, differ by at most one, and a lone free slot goes
 * to each client in turn as frames come in. */
static void test_share(void)
{
    for (int sockets = 1; sockets <= 8; sockets++)
        for (size_t free_slots = 0; free_slots <= 20; free_slots++)
            for (uint64_t turn = 0; turn < 2 * (uint64_t)sockets; turn++) {
                size_t sum = 0, lo = SIZE_MAX, hi = 0;
                for (int k = 0; k < sockets; k++) {
                    size_t s = dispatch_client_share(free_slots, k, sockets, turn);
                    sum += s;
                    lo = s < lo ? s : lo;
                    hi = s > hi ? s : hi;
                }
                CHECK(sum == free_slots && hi - lo <= 1, "%d sockets, %zu free, turn %llu: sum %zu, %zu..%zu",
                      sockets, free_slots, (unsigned long long)turn, sum, lo, hi);
            }
    int got[4] = {0};
    for (uint64_t turn = 100; turn < 104; turn++)
        for (int k = 0; k < 4; k++)
            got[k] += (int)dispatch_client_share(1, k, 4, turn);
    CHECK(got[0] == 1 && got[1] == 1 && got[2] == 1 && got[3] == 1, "one slot over 4 turns: %d %d %d %d", got[0],
          got[1], got[2], got[3]);
    CHECK(dispatch_client_share(5, 4, 4, 0) == 0 && dispatch_client_share(5, 0, 0, 0) == 0,
          "a client outside 0..sockets-1 gets nothing");
}

int main(void)
{
    test_encode_matches_spec();
    test_rejections();
    test_tell_apart();
    test_client();
    test_share();
    return test_check_report("test_dispatch_control");
}
