/*
 * dispatch_control.c - the dispatch control message codec
 * (docs/protocol.md, "Dispatch control messages").
 */
#include "dispatch_control.h"

#include <string.h>

static const char *const error_names[DISPATCH_CONTROL_ERROR_COUNT_] = {
    "ok", "size", "bad_magic", "bad_version", "bad_type", "bad_field"};

static const char *const type_names[] = {"unknown", "ready", "credit", "heartbeat", "goodbye"};

const char *dispatch_control_strerror(dispatch_control_error e)
{
    if ((int)e < 0 || e >= DISPATCH_CONTROL_ERROR_COUNT_)
        return "unknown";
    return error_names[e];
}

const char *dispatch_control_type_name(uint8_t type)
{
    if (type < DISPATCH_CONTROL_READY || type > DISPATCH_CONTROL_GOODBYE)
        return type_names[0];
    return type_names[type];
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void dispatch_control_encode(const dispatch_control *c, uint8_t out[DISPATCH_CONTROL_BYTES])
{
    memset(out, 0, DISPATCH_CONTROL_BYTES);
    memcpy(out, DISPATCH_CONTROL_MAGIC, 4);
    out[4] = DISPATCH_CONTROL_VERSION;
    out[5] = c->type;
    put_u32(out + 8, c->credit);
    put_u32(out + 12, c->heartbeat_ms);
}

int dispatch_control_is_control(const uint8_t *part, size_t part_bytes)
{
    return part_bytes >= 4 && memcmp(part, DISPATCH_CONTROL_MAGIC, 4) == 0;
}

/* The fields each type allows: READY needs a heartbeat interval (its credit
 * may be 0: a full daemon still announces itself), CREDIT a credit of at
 * least 1 (a zero grant says nothing), the others neither. */
static dispatch_control_error check_fields(const dispatch_control *c)
{
    switch ((dispatch_control_type)c->type) {
    case DISPATCH_CONTROL_READY:
        return c->heartbeat_ms >= 1 ? DISPATCH_CONTROL_OK : DISPATCH_CONTROL_EFIELD;
    case DISPATCH_CONTROL_CREDIT:
        return c->credit >= 1 && c->heartbeat_ms == 0 ? DISPATCH_CONTROL_OK : DISPATCH_CONTROL_EFIELD;
    case DISPATCH_CONTROL_HEARTBEAT:
    case DISPATCH_CONTROL_GOODBYE:
        return c->credit == 0 && c->heartbeat_ms == 0 ? DISPATCH_CONTROL_OK : DISPATCH_CONTROL_EFIELD;
    }
    return DISPATCH_CONTROL_ETYPE;
}

dispatch_control_error dispatch_control_decode(const uint8_t *part, size_t part_bytes, dispatch_control *c)
{
    if (part_bytes != DISPATCH_CONTROL_BYTES)
        return DISPATCH_CONTROL_ESIZE;
    if (memcmp(part, DISPATCH_CONTROL_MAGIC, 4) != 0)
        return DISPATCH_CONTROL_EMAGIC;
    if (part[4] != DISPATCH_CONTROL_VERSION)
        return DISPATCH_CONTROL_EVERSION;
    dispatch_control d = {.type = part[5], .credit = get_u32(part + 8), .heartbeat_ms = get_u32(part + 12)};
    if (d.type < DISPATCH_CONTROL_READY || d.type > DISPATCH_CONTROL_GOODBYE)
        return DISPATCH_CONTROL_ETYPE;
    if (part[6] != 0 || part[7] != 0)
        return DISPATCH_CONTROL_EFIELD;
    dispatch_control_error e = check_fields(&d);
    if (e == DISPATCH_CONTROL_OK)
        *c = d;
    return e;
}
