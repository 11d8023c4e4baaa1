/*
 * auth_peers.c - refused peers and their retries (auth_peers.h).
 */
#include "auth_peers.h"

uint64_t auth_peer_id(uint64_t h, const void *bytes, size_t n)
{
    const uint8_t *b = bytes;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The slot of id, else a free one or the stalest one past the window; -1 when
 * every slot holds an identity refused within the window. */
static long peers_slot(const auth_peers *t, uint64_t id, uint64_t now_ns, int *found)
{
    long stalest = -1;
    *found = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (t->id[i] == id) {
            *found = 1;
            return (long)i;
        }
        if (now_ns - t->last_ns[i] >= AUTH_PEERS_RETRY_NS && (stalest < 0 || t->last_ns[i] < t->last_ns[stalest]))
            stalest = (long)i;
    }
    if (t->count < AUTH_PEERS_MAX)
        return (long)t->count;
    return stalest;
}

int auth_peers_refused(auth_peers *t, uint64_t id, uint64_t now_ns)
{
    int found;
    long i = peers_slot(t, id, now_ns, &found);
    if (i < 0)
        return 0;
    int retry = found && now_ns - t->last_ns[i] < AUTH_PEERS_RETRY_NS;
    if (!found && (size_t)i == t->count)
        t->count++;
    t->id[i] = id;
    t->last_ns[i] = now_ns;
    return retry;
}
