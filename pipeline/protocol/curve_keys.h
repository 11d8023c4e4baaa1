/*
 * curve_keys.h - ZeroMQ CURVE key files: reading them (the daemon's key
 * pair, the allow-list of client keys, a tool's keys) and writing a new
 * pair (eigstream-keygen).
 *
 * Files (the certificate layout of czmq and pyzmq's zmq.auth, so that their
 * tools read ours and ours read theirs):
 *   NAME.key         public: a `public-key = "Z85"` line; mode 0644
 *   NAME.key_secret  the pair: `public-key = "Z85"` and `secret-key = "Z85"`;
 *                    mode 0600, and a secret file that group or others may
 *                    read or write is refused (CURVE_KEY_EPERM)
 * Z85 keys are 40 characters (32 bytes). Lines starting with '#', blank
 * lines and the section words (metadata, curve) are ignored.
 *
 * An allow-list is either a file (one key per line: a bare Z85 key or a
 * public-key line) or a directory whose *.key files each hold one.
 *
 * Library eigstream_curve (libzmq only). Never prints; err gets one line
 * naming the file (and the line) and what is wrong.
 */
#ifndef EIGSTREAM_CURVE_KEYS_H
#define EIGSTREAM_CURVE_KEYS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CURVE_KEY_BYTES 32
#define CURVE_KEY_Z85_LENGTH 40

typedef enum curve_key_error {
    CURVE_KEY_OK = 0,
    CURVE_KEY_EIO,      /* cannot open, read or write the file */
    CURVE_KEY_EPERM,    /* a secret key file with group or other permissions, an allow-list
                           file or directory that group or others may write */
    CURVE_KEY_EFORMAT,  /* not a key file: a line or a key that does not parse */
    CURVE_KEY_EEXIST,   /* keygen: a file of the pair exists already */
    CURVE_KEY_ENOCURVE, /* this libzmq has no CURVE (zmq_has("curve") is 0) */
    CURVE_KEY_ENOMEM
} curve_key_error;

const char *curve_key_strerror(curve_key_error e);

/* Z85 text, NUL-terminated (what ZMQ_CURVE_*KEY options accept). */
typedef struct curve_key_pair {
    char public_key[CURVE_KEY_Z85_LENGTH + 1];
    char secret_key[CURVE_KEY_Z85_LENGTH + 1]; /* "" when read from a public file */
} curve_key_pair;

/* Reads a key file. need_secret: it must be a NAME.key_secret file (holds a
 * secret key, regular, mode without group/other bits: CURVE_KEY_EPERM
 * names the mode and the fix); else a public key is enough. */
curve_key_error curve_key_file_read(const char *path, int need_secret, curve_key_pair *out, char *err,
                                    size_t err_bytes);

/* Makes a new pair (zmq_curve_keypair) and writes BASE.key (0644) and
 * BASE.key_secret (0600). Refuses (CURVE_KEY_EEXIST) when either exists,
 * and writes neither then; nothing is left half-written on an error. */
curve_key_error curve_key_pair_write(const char *base, curve_key_pair *out, char *err, size_t err_bytes);

/* The client keys a server lets in, 32 bytes each. */
typedef struct curve_allow_list {
    uint8_t (*keys)[CURVE_KEY_BYTES];
    size_t count;
} curve_allow_list;

/* Loads a file or a directory of *.key files (above). An empty list is an
 * error (CURVE_KEY_EFORMAT): a server that lets nobody in is a mistake; a
 * file or directory that group or others may write is refused
 * (CURVE_KEY_EPERM: they could add a key). */
curve_key_error curve_allow_list_load(const char *path, curve_allow_list *out, char *err, size_t err_bytes);
int curve_allow_list_contains(const curve_allow_list *list, const uint8_t key[CURVE_KEY_BYTES]);
void curve_allow_list_free(curve_allow_list *list);

#ifdef __cplusplus
}
#endif

#endif
