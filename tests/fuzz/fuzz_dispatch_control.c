/*
 * fuzz_dispatch_control.c - fuzzes what the daemon's dispatch client and
 * eigstream-dispatch do with a message part from the other side of the
 * ROUTER/DEALER connection (docs/protocol.md, "Dispatch control messages").
 *
 * Contract: the whole input is one message part; it goes through
 * dispatch_control_is_control, then dispatch_control_decode.
 *
 * Invariants: is_control says yes exactly when the part starts with "EIGD";
 * every result has a name; an accepted message has a known type, re-encodes
 * to the same 16 bytes, and carries only the fields its type allows (READY:
 * heartbeat_ms >= 1; CREDIT: credit >= 1; HEARTBEAT, GOODBYE: none); a part
 * that is not 16 bytes is never accepted.
 */
#include <string.h>

#include "dispatch_control.h"
#include "fuzz_support.h"

/* The fields an accepted message may carry, per type. */
static void require_fields(const dispatch_control *c)
{
    switch (c->type) {
    case DISPATCH_CONTROL_READY:
        FUZZ_REQUIRE(c->heartbeat_ms >= 1, "an accepted READY without a heartbeat interval");
        return;
    case DISPATCH_CONTROL_CREDIT:
        FUZZ_REQUIRE(c->credit >= 1 && c->heartbeat_ms == 0, "an accepted CREDIT with bad fields");
        return;
    case DISPATCH_CONTROL_HEARTBEAT:
    case DISPATCH_CONTROL_GOODBYE:
        FUZZ_REQUIRE(c->credit == 0 && c->heartbeat_ms == 0, "an accepted HEARTBEAT/GOODBYE with fields");
        return;
    default:
        FUZZ_REQUIRE(0, "an accepted message of an unknown type");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int magic = size >= 4 && memcmp(data, "EIGD", 4) == 0;
    FUZZ_REQUIRE(dispatch_control_is_control(data, size) == magic, "is_control disagrees with the magic");
    dispatch_control c;
    memset(&c, 0, sizeof c);
    dispatch_control_error e = dispatch_control_decode(data, size, &c);
    FUZZ_REQUIRE(dispatch_control_strerror(e) != NULL, "an error without a name");
    if (e != DISPATCH_CONTROL_OK)
        return 0;
    FUZZ_REQUIRE(size == DISPATCH_CONTROL_BYTES, "a part that is not 16 bytes was accepted");
    FUZZ_REQUIRE(magic, "a part without the magic was accepted");
    require_fields(&c);
    uint8_t again[DISPATCH_CONTROL_BYTES];
    dispatch_control_encode(&c, again);
    FUZZ_REQUIRE(memcmp(again, data, DISPATCH_CONTROL_BYTES) == 0, "a decoded message does not re-encode the same");
    return 0;
}
