/*
 * dispatch_control.h - the control messages between eigstream-dispatch and
 * the daemons behind it (docs/protocol.md, "Dispatch control messages", is
 * the byte-exact specification; this header and that section must agree).
 *
 * A daemon's DEALER talks to the dispatcher's ROUTER. Besides covariance
 * frames (which start with "EIGS"), they exchange one-part, 16-byte control
 * messages that start with "EIGD":
 *
 *   daemon -> dispatcher   READY (credit = free slots, heartbeat_ms = its interval),
 *                          CREDIT (more free slots), HEARTBEAT, GOODBYE (stopping)
 *   dispatcher -> daemon   HEARTBEAT, GOODBYE (the dispatcher is stopping)
 *
 *     uint8_t wire[DISPATCH_CONTROL_BYTES];
 *     dispatch_control c = {.type = DISPATCH_CONTROL_CREDIT, .credit = 2};
 *     dispatch_control_encode(&c, wire);
 *     dispatch_control back;
 *     dispatch_control_error e = dispatch_control_decode(wire, sizeof wire, &back);  // DISPATCH_CONTROL_OK
 *
 * Library eigstream_protocol. Never prints, aborts or exits.
 */
#ifndef EIGSTREAM_DISPATCH_CONTROL_H
#define EIGSTREAM_DISPATCH_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DISPATCH_CONTROL_MAGIC "EIGD"
#define DISPATCH_CONTROL_VERSION 1
#define DISPATCH_CONTROL_BYTES 16

typedef enum dispatch_control_type {
    DISPATCH_CONTROL_READY = 1,     /* daemon: here I am; credit replaces any earlier credit */
    DISPATCH_CONTROL_CREDIT = 2,    /* daemon: credit more frames (adds to the credit) */
    DISPATCH_CONTROL_HEARTBEAT = 3, /* either side: still alive */
    DISPATCH_CONTROL_GOODBYE = 4    /* either side: stopping, send me nothing more */
} dispatch_control_type;

/* A decoded control message. */
typedef struct dispatch_control {
    uint8_t type;          /* @5  dispatch_control_type */
    uint32_t credit;       /* @8  READY: free slots (may be 0); CREDIT: >= 1; else 0 */
    uint32_t heartbeat_ms; /* @12 READY: the daemon's heartbeat interval, >= 1; else 0 */
} dispatch_control;

typedef enum dispatch_control_error {
    DISPATCH_CONTROL_OK = 0,
    DISPATCH_CONTROL_ESIZE,    /* not 16 bytes */
    DISPATCH_CONTROL_EMAGIC,   /* bytes 0..3 are not "EIGD" */
    DISPATCH_CONTROL_EVERSION, /* version is not 1 */
    DISPATCH_CONTROL_ETYPE,    /* unknown type */
    DISPATCH_CONTROL_EFIELD,   /* a field the type forbids, a missing one, or non-zero reserved bytes */
    DISPATCH_CONTROL_ERROR_COUNT_
} dispatch_control_error;

/* Short stable name of an error ("bad_magic", ...), for logs and metric
 * keys; never NULL. */
const char *dispatch_control_strerror(dispatch_control_error e);

/* "ready", "credit", "heartbeat", "goodbye"; "unknown" otherwise. Never NULL. */
const char *dispatch_control_type_name(uint8_t type);

/* Encodes c into out[16] (magic, version and zero reserved bytes written
 * here). Encodes c's fields as they are: check them with the decoder. */
void dispatch_control_encode(const dispatch_control *c, uint8_t out[DISPATCH_CONTROL_BYTES]);

/* Decodes and checks one message part: size, magic, version, type, then the
 * type's fields and the reserved bytes (docs/protocol.md). Returns
 * DISPATCH_CONTROL_OK and fills *c, or the first failing check. */
dispatch_control_error dispatch_control_decode(const uint8_t *part, size_t part_bytes, dispatch_control *c);

/* 1 when a message part starts with the control magic "EIGD" (a covariance
 * frame starts with "EIGS"), else 0: how a receiver tells the two apart
 * before decoding either. */
int dispatch_control_is_control(const uint8_t *part, size_t part_bytes);

#ifdef __cplusplus
}
#endif

#endif
